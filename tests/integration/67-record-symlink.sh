#!/bin/bash
# A symlink planted at the output path is never followed: the file it points
# to keeps its content, the link is moved aside to FILE.old, and the
# recording goes to a new regular file. The same with --switch-output, whose
# renames never replace an existing name.
. "$(dirname "$0")/lib.sh"
need_root

cd "$T"
echo "precious" >victim
ln -s victim perf.data
"$BPFREC" record -q -o perf.data -- "$FIX/rec_work" 0.1 || fail "bpfrec record exited $?"
[ "$(cat victim)" = precious ] || fail "the symlink's target was overwritten"
[ -L perf.data.old ] && [ "$(readlink perf.data.old)" = victim ] || fail "the symlink was not moved to perf.data.old"
[ -f perf.data ] && [ ! -L perf.data ] || fail "perf.data is not a regular file"
run_clean "$T/r.txt" perf report -i perf.data --stdio --no-children -g none
assert_grep '\[\.\] leaf_a$' "$T/r.txt"

# A dangling symlink too (it would create the target).
ln -s "$T/created-by-bpfrec" dangling.data
"$BPFREC" record -q -o dangling.data -- "$FIX/rec_work" 0.05 || fail "bpfrec record exited $?"
[ -e "$T/created-by-bpfrec" ] && fail "a dangling symlink was followed"
[ -f dangling.data ] && [ ! -L dangling.data ] || fail "dangling.data is not a regular file"

# Rotation: names taken by symlinks (every stamp of the next few seconds) are
# stepped over, never replaced.
now=$(date +%s)
for s in $(seq 0 3); do
	stamp=$(date -d "@$((now + s))" +%Y%m%d%H%M%S)
	for cc in $(seq -w 0 99); do ln -s victim "rot.data.$stamp$cc"; done
done
"$BPFREC" record -q -a --switch-output=1s --duration 1.5 -o rot.data || fail "bpfrec record exited $?"
[ "$(cat victim)" = precious ] || fail "a rotated file replaced a symlink's target"
[ "$(find . -maxdepth 1 -name 'rot.data.*' -type l | wc -l)" = 400 ] || fail "a planted symlink was replaced"
files=$(find . -maxdepth 1 -name 'rot.data.*' -type f | sort)
[ "$(echo "$files" | wc -l)" = 2 ] || fail "expected 2 rotated files, got: $files"
for f in $files; do
	[[ $f =~ \.[0-9]{16}$ ]] || fail "$f is not named FILE.<16 digits>"
	run_clean "$T/r.txt" perf report -i "$f" --stdio
done
