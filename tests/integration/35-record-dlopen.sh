#!/bin/bash
# A library dlopen()ed after recording began: its functions resolve in its
# own DSO, and the code from before the dlopen still resolves.
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
"$BPFREC" record -q -g -o d.data -- "$FIX/rec_dlopen" || fail "bpfrec record exited $?"
run_clean "$T/report.txt" perf report -i d.data --stdio --no-children --comm rec_dlopen -g none
assert_grep 'librec_plugin\.so +\[\.\] plugin_spin$' "$T/report.txt" "plugin_spin not resolved in librec_plugin.so"
assert_grep 'rec_dlopen +\[\.\] before_dlopen$' "$T/report.txt" "before_dlopen not resolved"
# Shares of user time: the fixture times each spin by its CPU time, system
# time included, so the machine's interrupts charged to it shorten a spin.
p=$(user_share "$T/report.txt" plugin_spin)
b=$(user_share "$T/report.txt" before_dlopen)
echo "of user samples: plugin_spin $p%, before_dlopen $b%"
assert_range plugin_spin "$p" 30 70
assert_range before_dlopen "$b" 30 70
# The plugin's frames chain back into the program.
run_clean "$T/script.txt" perf script -i d.data --comm rec_dlopen -F ip,sym
awk '/^[ \t]*$/ { first = 1; prev = ""; next } BEGIN { first = 1 }
	{ if (prev == "plugin_spin" && $2 == "main") ok++; prev = $2 }
	END { print "plugin_spin <- main chains:", ok + 0; exit !(ok > 50) }' "$T/script.txt" ||
	fail "plugin_spin samples do not chain to main"
