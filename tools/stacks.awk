# tools/stacks.awk - figures on the user call chains in `perf script` output,
# for the integration tests and the benchmark (one reader of that format).
#
#   perf script -F comm,ip,sym --no-inline -i FILE |
#       awk -v comm=NAME -v what=WHAT -f tools/stacks.awk
#
# Input: one paragraph a sample, a header line whose first field is the comm,
# then one line a frame (perf indents them with a tab), innermost first:
# "ADDR SYM[+0xOFF] [(DSO)]". Frames
# at kernel addresses are left out: these figures are about user stacks.
# Only samples whose comm is NAME count (every sample when comm is empty).
# --no-inline keeps the names of DWARF-unwound frames the ELF symbols, as in
# ordinary callchains, so chains unwound both ways compare by name.
#
# WHAT:
#   reach  prints "ROOT_PCT SAMPLES MEAN_DEPTH": the percent of samples whose
#          outermost user frame is a thread's root (_start, _dl_start_user,
#          __libc_start_call_main, __libc_start_main*, start_thread, clone,
#          clone3; or a nameless frame called from __libc_start_main*: the
#          _start of a stripped program, as gcc's as and cc1), the number of
#          samples, their mean number of user frames
#   edges  prints "CALLER<TAB>CALLEE<TAB>SAMPLES" lines: for each call edge
#          between two adjacent user frames, how many samples hold it (once a
#          sample)
#   folded prints "OUTER;...;INNER<TAB>SAMPLES" lines: each distinct user
#          stack, outermost frame first, and how many samples had it
# (Tabs separate the fields: C++ names hold spaces.)

function is_kernel(addr) { return length(addr) == 16 && addr ~ /^ffff/ }

function flush(    i, seen, path) {
	if (nf < 0)
		return
	if (comm == "" || hdr == comm) {
		n++
		depth += nf
		if (nf > 0 && fr[nf - 1] ~ /^(_start|_dl_start_user|__libc_start_call_main|__libc_start_main.*|start_thread|clone3?)$/)
			root++
		else if (nf > 1 && fr[nf - 1] == "[unknown]" && fr[nf - 2] ~ /^__libc_start_main/)
			root++
		path = nf ? fr[nf - 1] : ""
		for (i = nf - 1; i > 0; i--) {
			path = path ";" fr[i - 1]
			if ((fr[i], fr[i - 1]) in seen)
				continue
			seen[fr[i], fr[i - 1]] = 1
			edge[fr[i] "\t" fr[i - 1]]++
		}
		folded[path]++
	}
	nf = -1
}

BEGIN { nf = -1 }
NF == 0 { flush(); next }
!/^\t/ { flush(); hdr = $1; nf = 0; next }
nf >= 0 && NF >= 2 {
	if (is_kernel($1))
		next
	sym = $0
	sub(/^[ \t]*[0-9a-f]+ /, "", sym)
	sub(/ \([^()]*\)$/, "", sym)	# the DSO
	sub(/\+0x[0-9a-f]+$/, "", sym)
	fr[nf++] = sym
}
END {
	flush()
	if (what == "reach")
		printf "%.1f %d %.1f\n", n ? 100 * root / n : 0, n, n ? depth / n : 0
	else if (what == "edges")
		for (e in edge)
			print e "\t" edge[e]
	else if (what == "folded")
		for (p in folded)
			print p "\t" folded[p]
	else {
		print "stacks.awk: what=reach, edges or folded" > "/dev/stderr"
		exit 2
	}
}
