#!/bin/bash
# `bpfrec record` without each capability it uses: where the kernel refuses
# a step, one line on stderr naming the missing capability, exit 1 and the
# previous perf.data untouched; where a missing capability only leaves
# something out, a recording that perf reads without a warning.
#
# What the kernel refuses varies between kernels (CAP_SYS_ADMIN implies
# CAP_BPF and CAP_PERFMON; kptr_restrict and perf_event_paranoid decide
# who sees kernel addresses; recent kernels let CAP_PERFMON read other
# users' maps), so every expectation comes from asking the kernel the same
# question under the same capabilities: tests/tools/privprobe for BPF and
# perf events, plain reads of /proc for kallsyms and maps. Above
# kernel.perf_event_paranoid 2 (3 is Debian's default) Debian's kernels
# refuse perf events without CAP_SYS_ADMIN: the message must say so.
#
# What runs as nobody is copied out of the checkout first: nobody may be
# unable to enter it (a clone in a 0700 directory, a 0700 home).
. "$(dirname "$0")/lib.sh"
need_root
PROBE=$BUILD/tests/tools/privprobe
for tool in setpriv setcap; do
	command -v $tool >/dev/null || fail "$tool is missing (util-linux, libcap2-bin)"
done

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$T"; }
trap cleanup EXIT
chmod 755 "$T"
mkdir "$T/out" && chown nobody "$T/out"
cd "$T/out"
# The recorder, the probe, awk (file capabilities go on these copies below)
# and the fixture.
mkdir "$T/bin"
cp "$BPFREC" "$T/bin/bpfrec"
cp "$PROBE" "$T/bin/privprobe"
cp "$(command -v awk)" "$T/bin/awk"
cp "$FIX/rec_work" "$T/bin/rec_work"
chmod 755 "$T/bin" "$T/bin"/*
WORK=$T/bin/rec_work
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
echo "kernel.perf_event_paranoid=$paranoid"

# without CAPS CMD...: CMD as root without CAPS ("bpf,sys_admin"), all else kept.
without() {
	local caps=$1; shift
	setpriv --inh-caps=-all --bounding-set="-${caps//,/,-}" -- "$@"
}

# kernel_text_hidden RUNNER...: does /proc/kallsyms show _text as 0 to RUNNER?
kernel_text_hidden() {
	local text
	text=$("$@" awk '$3 == "_text" { print $1; exit }' /proc/kallsyms)
	[ -n "$text" ] || fail "no _text in /proc/kallsyms"
	[ -z "${text//0/}" ]
}

# expect_refused CAP RUNNER...: one line naming CAP, exit 1, perf.data untouched.
expect_refused() {
	local cap=$1 rc=0; shift
	echo "old contents" >perf.data
	rm -f perf.data.old
	"$@" "$BPFREC" record -g -o perf.data -- "$WORK" 0.2 >"$T/stdout" 2>"$T/err" || rc=$?
	echo "  -> $rc: $(cat "$T/err")"
	[ "$rc" = 1 ] || fail "exit code $rc, expected 1"
	[ "$(wc -l <"$T/err")" = 1 ] || { cat "$T/err"; fail "expected one line on stderr"; }
	assert_grep "^bpfrec record: .*needs ([A-Z_]+(, | and ))*$cap" "$T/err"
	assert_no_grep "cannot write" "$T/err"
	[ "$(cat perf.data)" = "old contents" ] || fail "perf.data was touched"
	[ ! -e perf.data.old ] || fail "perf.data.old appeared"
}

# expect_events_refused RUNNER...: the perf events refused; above
# perf_event_paranoid 2 for want of CAP_SYS_ADMIN, the sysctl, its value
# and the fix named, else of CAP_PERFMON.
expect_events_refused() {
	if [ "$paranoid" -gt 2 ]; then
		expect_refused CAP_SYS_ADMIN "$@"
		assert_grep "kernel\.perf_event_paranoid=$paranoid .*sysctl kernel\.perf_event_paranoid=2" \
			"$T/err" "the message does not name kernel.perf_event_paranoid=$paranoid and the fix"
	else
		expect_refused CAP_PERFMON "$@"
	fi
}

# expect_recorded RUNNER...: the recording works, resolves the fixture's
# frames, and perf report has nothing to say about it.
expect_recorded() {
	local rc=0
	rm -f perf.data perf.data.old
	"$@" "$BPFREC" record -g -o perf.data -- "$WORK" 0.3 >"$T/stdout" 2>"$T/err" || rc=$?
	[ "$rc" = 0 ] || { cat "$T/err"; fail "recording failed ($rc)"; }
	assert_no_grep "warning" "$T/err"
	# The recorder's summary and the fixture's own CPU-time line, nothing else.
	[ "$(grep -cv -e '^\[ bpfrec record: Captured' -e '^rec_work: cpu [0-9.]* s$' "$T/err")" = 0 ] ||
		{ cat "$T/err"; fail "unexpected stderr"; }
	run_clean "$T/report" perf report -f -i perf.data --stdio --no-children --sort sym
	assert_grep 'leaf_a' "$T/report" "the fixture's frames are not resolved"
	echo "  -> recorded: $(grep -c . "$T/report") report lines, leaf_a resolved"
}

# The capabilities bpfrec uses, dropped one at a time and in the pairs that
# matter (CAP_SYS_ADMIN stands in for CAP_BPF and CAP_PERFMON).
for drop in bpf perfmon sys_admin syslog sys_ptrace checkpoint_restore,sys_admin \
	    bpf,sys_admin perfmon,sys_admin; do
	bpf=$(without "$drop" "$PROBE" bpf || true)
	events=$(without "$drop" "$PROBE" events || true)
	echo "without $drop: BPF $bpf, perf events $events"
	if [ "$bpf" != allowed ]; then
		# The BPF programs need both; name the one this run lacks.
		case ",$drop," in *,bpf,*) cap=CAP_BPF ;; *) cap=CAP_PERFMON ;; esac
		expect_refused "$cap" without "$drop"
	elif kernel_text_hidden without "$drop"; then
		# bpfrec reads kallsyms before it opens the perf events.
		expect_refused CAP_SYSLOG without "$drop"
	elif [ "$events" != allowed ]; then
		expect_events_refused without "$drop"
	else
		expect_recorded without "$drop"
	fi
done

# map_files (build-ids of deleted files) closed: the recording goes on; -v
# says what was left out, naming the capability, in one note.
# (Where perf events need CAP_SYS_ADMIN, kernel.perf_event_paranoid=3, no
# recording runs without it: the loop above checked that refusal.)
rm -f perf.data
if [ "$(without checkpoint_restore,sys_admin "$PROBE" events || true)" != allowed ]; then
	echo "map_files closed: not recordable here (kernel.perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
else
	without checkpoint_restore,sys_admin "$BPFREC" record -v -g -o perf.data -- "$WORK" 0.2 \
		>/dev/null 2>"$T/err" || fail "recording without map_files failed"
	run_clean "$T/report" perf report -f -i perf.data --stdio --no-children --sort sym
	assert_grep 'leaf_a' "$T/report"
	if without checkpoint_restore,sys_admin sh -c \
		'head -c 1 "/proc/$$/map_files/$(ls "/proc/$$/map_files" | head -n 1)"' >/dev/null 2>&1; then
		assert_no_grep "note: .*map_files" "$T/err"
	else
		[ "$(grep -c 'note: .*map_files.*CAP_CHECKPOINT_RESTORE' "$T/err")" = 1 ] ||
			fail "expected one -v note about map_files naming CAP_CHECKPOINT_RESTORE"
	fi
fi

# A process of another user, recorded with -p by root without
# CAP_SYS_PTRACE: refused with one line naming it when the kernel keeps that
# process's maps from us, else recorded with its frames resolved.
setpriv --reuid=nobody --regid=nogroup --clear-groups "$WORK" 10 >/dev/null &
other=$!; pids+=("$other")
# (grep, not [ -s ]: files in /proc report size 0.)
wait_until "$other" grep -q rec_work "/proc/$other/maps" 2>/dev/null || true
echo "old contents" >perf.data
rm -f perf.data.old
rc=0
without sys_ptrace "$BPFREC" record -g -o perf.data -p "$other" --duration 0.5 >/dev/null 2>"$T/err" || rc=$?
if without sys_ptrace cat "/proc/$other/maps" >/dev/null 2>&1; then
	echo "-p $other (nobody's) without CAP_SYS_PTRACE: the kernel lets us read its maps"
	[ "$rc" = 0 ] || { cat "$T/err"; fail "-p of another user's process failed ($rc)"; }
	run_clean "$T/report" perf report -f -i perf.data --stdio --no-children --sort sym
	assert_grep 'leaf_a' "$T/report"
else
	echo "-p $other (nobody's) without CAP_SYS_PTRACE: $(cat "$T/err")"
	[ "$rc" = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] || fail "expected one line and exit 1"
	assert_grep "needs CAP_SYS_PTRACE" "$T/err"
	[ "$(cat perf.data)" = "old contents" ] || fail "perf.data was touched"
fi
kill "$other"

# Not root at all: a user without capabilities, and one given bpfrec with
# file capabilities (setcap, as the documentation says).
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
echo "as nobody:"
BPFREC=$T/bin/bpfrec
expect_refused "CAP_BPF and CAP_PERFMON" as_nobody
# The copies, given file capabilities.
grant() { for f in bpfrec privprobe awk; do setcap "$1" "$T/bin/$f"; done; }
grant cap_bpf,cap_perfmon+ep
[ "$(as_nobody "$T/bin/privprobe" caps)" != 0 ] ||
	fail "file capabilities are not honoured under $T (a nosuid mount?)"
for caps in cap_bpf,cap_perfmon cap_bpf,cap_perfmon,cap_syslog; do
	grant "$caps+ep"
	bpf=$(as_nobody "$T/bin/privprobe" bpf || true)
	events=$(as_nobody "$T/bin/privprobe" events || true)
	echo "nobody with $caps: BPF $bpf, perf events $events"
	[ "$bpf" = allowed ] || fail "the kernel refuses BPF to $caps: $bpf"
	if kernel_text_hidden as_nobody env PATH="$T/bin:$PATH"; then
		expect_refused CAP_SYSLOG as_nobody
	elif [ "$events" != allowed ]; then
		[ "$paranoid" -gt 2 ] || fail "the kernel refuses perf events to $caps: $events"
		expect_events_refused as_nobody
	else
		expect_recorded as_nobody
	fi
done
BPFREC=$BUILD/bpfrec
