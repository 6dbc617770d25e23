#!/bin/bash
# bpfrec agent and Python frames: each window is converted to pprof right
# after it is cut, while the Python process it sampled runs on, so the
# process's symbol file (recorder/pyframes.h) must be in the build-id cache
# as it stands when the window is retired, and the symbol tables the agent
# keeps across windows must read it again once it has grown (same path,
# same build-id, more functions).
# The workload warms up in a function of its own for a second of CPU time
# (its symbol file is filed, and read by the agent, with that function),
# then runs py_tree.py's tree (tests/fixtures: main -> run_round ->
# hot_alpha, hot_beta, cold_gamma), whose functions come only then. Its
# windows, pushed to the loopback receiver (tests/tools/profile_receiver.py)
# and read with go tool pprof:
#   - no Python frame is left as a bare address of a symbol file, in any
#     window;
#   - the merged windows name hot_alpha, hot_beta and cold_gamma, with
#     shares among them of the fixture's 6:3:1 split of the work (within 3
#     points and sampling error, as test 91 takes them); the fixture's own
#     clock is shown beside;
#   - the windows after the warm-up name them too: the leaves are in more
#     than one window.
. "$TOP/tests/integration/lib.sh"
need_root
need_kernel_for -g
need_tool go golang-go
need_tool python3 python3.11
export HOME=$T PPROF_TMPDIR=$T
. "$TOP/tests/integration/agent_lib.sh"
trap 'kill ${RPID:-} 2>/dev/null || true; rm -rf "$T"' EXIT

# frames PROFILE: "NAMED UNNAMED A B C": the profile's Python frames with a
# name (NAME (FILE.py)) and those left as an address in a symbol file's
# range (pysyms.h: 0x0200000000000000 to 0x7000000000000000), then the
# samples (pprof -traces counts, in ms at -F 999: about one each) whose
# leaf-most Python frame is hot_alpha, hot_beta, cold_gamma.
frames() {
	go tool pprof -symbolize=none -traces "$1" 2>/dev/null | awk '
		/^-+\+-+$/ { if (leaf ~ /^hot_alpha/) a += w; else if (leaf ~ /^hot_beta/) b += w
			     else if (leaf ~ /^cold_gamma/) c += w
			     leaf = ""; w = 0; next }
		{ l = $0
		  if (match(l, /^ *[0-9.]+(ms|s|us) +/)) { v = substr(l, 1, RLENGTH); sub(/^ +/, "", v)
			w = v ~ /ms/ ? v + 0 : v ~ /us/ ? (v + 0) / 1000 : (v + 0) * 1000
			l = substr(l, RLENGTH + 1) }
		  sub(/^ +/, "", l) }
		l ~ /^0x[0-9a-f]+$/ && (length(l) == 17 && l ~ /^0x[2-9a-f]/ ||
					length(l) == 18 && l ~ /^0x[1-6]/) { unnamed++; next }
		l ~ /\.py\)$/ { named++
				if (leaf == "" && l ~ /^(hot_alpha|hot_beta|cold_gamma) \(py_tree\.py\)$/) leaf = l }
		END { if (leaf ~ /^hot_alpha/) a += w; else if (leaf ~ /^hot_beta/) b += w
		      else if (leaf ~ /^cold_gamma/) c += w
		      printf "%d %d %.0f %.0f %.0f\n", named, unnamed, a, b, c }'
}

start_receiver "$T/recv"
"$BPFREC" agent --server "http://127.0.0.1:$RPORT" --every 0.5s -F 999 -g --spool "$T/spool" -- \
	"$(debian_python3)" "$TOP/tests/fixtures/py_late.py" "$TOP/tests/fixtures" 1 3 >"$T/agent.out" 2>"$T/agent.err" ||
	{ cat "$T/agent.err" >&2; fail "bpfrec agent failed"; }
stop_receiver
tail -n 1 "$T/agent.err"
grep -q "Python frames need Linux" "$T/agent.err" && skip "$(grep -m1 'Python frames need' "$T/agent.err")"
windows=$(agent_count "$T/agent.err" windows)
assert_range "windows" "$windows" 3 100000

named=0 unnamed=0 a=0 b=0 c=0 with_leaves=0 nprof=0
for f in "$T/recv"/*.pb.gz; do
	read -r n u fa fb fc < <(frames "$f")
	nprof=$((nprof + 1))
	named=$((named + n)) unnamed=$((unnamed + u))
	a=$((a + fa)) b=$((b + fb)) c=$((c + fc))
	[ $((fa + fb + fc)) -gt 0 ] && with_leaves=$((with_leaves + 1))
	[ "$u" = 0 ] || [ "$nprof" -gt 5 ] || echo "$(basename "$f"): $u Python frames without a name ($n named)"
done
total=$((a + b + c))
echo "$nprof profiles in $windows windows: Python frames $named named, $unnamed unnamed;" \
	"leaf samples hot_alpha $a hot_beta $b cold_gamma $c, in $with_leaves profiles"
echo "fixture's own CPU time:$(for fn in hot_alpha hot_beta cold_gamma; do
	printf ' %s %ss' "$fn" "$(fixture_cpu "$T/agent.out" "$fn")"; done)"
[ -n "$(fixture_cpu "$T/agent.out" hot_alpha)" ] || fail "the fixture did not run its tree"
# Every window reads clean (go tool pprof warns of a mapping it would have to name itself).
for f in "$T/recv"/*.pb.gz; do
	run_clean "$T/one.raw" go tool pprof -raw "$f"
done
[ "$named" -gt 0 ] || fail "no Python frame named in any window"
[ "$unnamed" = 0 ] || fail "$unnamed Python frames left as addresses of a symbol file"
[ "$with_leaves" -ge 2 ] || fail "the leaves named in $with_leaves windows: the fixture ran for several"
# The work's split: the leaves run the same bytecode 6, 3 and 1 times a round.
for leaf in "hot_alpha $a 60" "hot_beta $b 30" "cold_gamma $c 10"; do
	set -- $leaf
	assert_sampled "$1 among the leaves (work $3%)" \
		"$(awk -v v="$2" -v t="$total" 'BEGIN { printf "%.2f\n", t ? 100 * v / t : 0 }')" "$total" \
		$(($3 - 3)) $(($3 + 3))
done
echo "ok"
