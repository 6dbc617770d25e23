#!/bin/bash
# bpfrec dump reads what the stock `perf record` writes (file mode, pipe mode,
# two events) and sees exactly the samples `perf script` sees: same count,
# same (event, pid, tid, time, period) tuples, same event names. Broken
# files give one error line and exit 1.
. "$(dirname "$0")/lib.sh"

need_tool perf linux-perf
need_root

# A workload that burns CPU for a fraction of a second; how long does not matter.
WORK=(dd if=/dev/zero of=/dev/null bs=64 count=400000)

record() { # OUT EVENTS: record the workload into OUT ('-' = stdout) with call graphs
	local out=$1 events=$2
	if [ "$out" = - ]; then
		perf record -e "$events" -g -o - -- "${WORK[@]}" 2>"$T/record.err"
	else
		perf record -e "$events" -g -o "$out" -- "${WORK[@]}" >/dev/null 2>"$T/record.err"
	fi || { cat "$T/record.err" >&2; skip "perf record cannot record here"; }
}

# "event pid tid sec.usec period", sorted, from bpfrec dump's SAMPLE lines.
dump_tuples() {
	awk '$1 ~ /^0x/ && $2 == "SAMPLE" {
		ev = pid = tid = t = p = ""
		for (i = 3; i < NF; i++) {
			if ($i == "event") ev = $(i + 1)
			else if ($i == "pid") pid = $(i + 1)
			else if ($i == "tid") tid = $(i + 1)
			else if ($i == "time") t = substr($(i + 1), 1, length($(i + 1)) - 3)
			else if ($i == "period") p = $(i + 1)
		}
		print ev, pid, tid, t, p
	}' "$1" | sort
}

# The same tuples from `perf script -F event,pid,tid,time,period`.
script_tuples() {
	# e.g. " 7263/7263  518.908835:     250000 cpu-clock: "
	awk '{ split($1, pt, "/"); t = $2; sub(/:$/, "", t); ev = $4; sub(/:$/, "", ev)
	       print ev, pt[1], pt[2], t, $3 }' "$1" | sort
}

summary_samples() { sed -n 's/^# samples: \([0-9]*\)$/\1/p' "$1"; }
summary_event() { awk -v e="$2" '$1 == "#" && $2 == e && NF == 3 { print $3 }' "$1"; }

compare() { # NAME DUMP_OUT SCRIPT_OUT
	local name=$1 n_dump n_script
	n_dump=$(summary_samples "$2")
	n_script=$(grep -c . "$3" || true)
	[ -n "$n_dump" ] || fail "$name: no '# samples:' line in bpfrec dump output"
	[ "$n_script" -gt 10 ] || fail "$name: perf script printed only $n_script samples"
	[ "$n_dump" = "$n_script" ] ||
		fail "$name: bpfrec dump counts $n_dump samples, perf script $n_script"
	dump_tuples "$2" >"$T/$name.dump.tuples"
	script_tuples "$3" >"$T/$name.script.tuples"
	if ! cmp -s "$T/$name.dump.tuples" "$T/$name.script.tuples"; then
		diff "$T/$name.dump.tuples" "$T/$name.script.tuples" | head -n 20 >&2
		fail "$name: bpfrec dump and perf script disagree on the samples"
	fi
	echo "$name: $n_dump samples agree"
}

FIELDS=event,pid,tid,time,period

# --- file mode -------------------------------------------------------------------
record "$T/file.data" cpu-clock
run_clean "$T/file.dump" "$BPFREC" dump -i "$T/file.data"
run_clean "$T/file.script" perf script -i "$T/file.data" -G -F $FIELDS
compare file "$T/file.dump" "$T/file.script"
assert_grep '^# event 0: cpu-clock$' "$T/file.dump" "event name from EVENT_DESC"
assert_grep '^#   sample_type 0x[0-9a-f]+ = IP\|TID\|TIME\|CALLCHAIN\|PERIOD' "$T/file.dump"
assert_grep '^# feature CMDLINE: .*perf record -e cpu-clock -g' "$T/file.dump"
assert_grep '^# feature BUILD_ID: ' "$T/file.dump"
assert_grep ' SAMPLE .* callchain [0-9]+: ' "$T/file.dump" "callchains decoded"
assert_grep ' MMAP2 .* /usr/bin/dd' "$T/file.dump" "dd's own mapping"
assert_grep ' COMM .* comm "dd" exec' "$T/file.dump"
[ "$(summary_event "$T/file.dump" cpu-clock)" = "$(summary_samples "$T/file.dump")" ] ||
	fail "file: per-event count differs from the total"

# --records-only and --header-only split the same output
run_clean "$T/records" "$BPFREC" dump --records-only -i "$T/file.data"
run_clean "$T/header" "$BPFREC" dump --header-only -i "$T/file.data"
assert_no_grep '^#' "$T/records" "--records-only printed header lines"
assert_no_grep '^0x' "$T/header" "--header-only printed records"
[ "$(grep -c ' SAMPLE ' "$T/records")" = "$(summary_samples "$T/file.dump")" ] ||
	fail "--records-only lost samples"

# --- pipe mode, read from a real pipe ----------------------------------------------
record - cpu-clock >"$T/pipe.data"
cat "$T/pipe.data" | run_clean "$T/pipe.dump" "$BPFREC" dump -i -
run_clean "$T/pipe.script" perf script -i - -G -F $FIELDS <"$T/pipe.data"
compare pipe "$T/pipe.dump" "$T/pipe.script"
assert_grep '^# stdin: pipe mode' "$T/pipe.dump"
assert_grep '^# event 0: cpu-clock$' "$T/pipe.dump" "pipe: name from the EVENT_DESC record"
assert_grep ' HEADER_ATTR ' "$T/pipe.dump"

# --- two events ----------------------------------------------------------------------
record "$T/two.data" cpu-clock,task-clock
run_clean "$T/two.dump" "$BPFREC" dump -i "$T/two.data"
run_clean "$T/two.script" perf script -i "$T/two.data" -G -F $FIELDS
compare two "$T/two.dump" "$T/two.script"
assert_grep '^# event 0: cpu-clock$' "$T/two.dump"
assert_grep '^# event 1: task-clock$' "$T/two.dump"
for ev in cpu-clock task-clock; do
	want=$(grep -c " $ev: *\$" "$T/two.script" || true)
	got=$(summary_event "$T/two.dump" "$ev")
	[ "$want" -gt 0 ] || fail "two: perf script shows no $ev samples"
	[ "$got" = "$want" ] || fail "two: $ev: bpfrec dump $got samples, perf script $want"
done

# --- broken input: one line on stderr, exit 1 ------------------------------------------
expect_error() { # NAME PATTERN ARGS...
	local name=$1 pattern=$2 rc=0
	shift 2
	"$BPFREC" dump "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
	[ "$rc" = 1 ] || fail "$name: exit $rc, expected 1"
	[ "$(wc -l <"$T/$name.err")" = 1 ] || { cat "$T/$name.err" >&2; fail "$name: not one line"; }
	assert_grep "^bpfrec dump: $pattern" "$T/$name.err" "$name: error message"
}

size=$(stat -c %s "$T/file.data")
head -c $((size - 100)) "$T/file.data" >"$T/cut-features.data"
expect_error cut-features ".*cut-features.data: feature [0-9]+ section \[0x[0-9a-f]+, \+[0-9]+\) runs past the end of the file" \
	-i "$T/cut-features.data"

data_offset=$(od -An -t u8 -j 40 -N 8 "$T/file.data" | tr -d ' ')
head -c $((data_offset + 4000)) "$T/file.data" >"$T/cut-data.data"
expect_error cut-data ".*cut-data.data: data section \[0x[0-9a-f]+, \+[0-9]+\) runs past the end of the file .*truncated" \
	-i "$T/cut-data.data"

psize=$(stat -c %s "$T/pipe.data")
head -c $((psize - 100)) "$T/pipe.data" >"$T/cut-pipe.data"
expect_error cut-pipe "stdin: record at offset 0x[0-9a-f]+ \(type [0-9]+, size [0-9]+\) is truncated" \
	-i - <"$T/cut-pipe.data"
grep -q ' SAMPLE ' "$T/cut-pipe.out" || fail "cut-pipe: the records before the cut were not printed"

head -c 4096 /dev/urandom >"$T/garbage.data"
expect_error garbage ".*garbage.data: bad magic at offset 0: not a perf.data file" -i "$T/garbage.data"
: >"$T/empty.data"
expect_error empty ".*empty.data: the file is empty" -i "$T/empty.data"
expect_error missing ".*nonexistent.data: No such file or directory" -i "$T/nonexistent.data"

echo "ok: file, pipe and two-event recordings agree with perf script; broken files rejected"
