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
# Only samples whose comm is NAME count (every sample when comm is empty),
# and none taken inside an exec (a kernel frame in bprm_execve): the new
# image's name with the old image's registers, a user stack no unwinder
# can follow; nor any taken in an exit after it let go of the process's
# memory (a kernel frame in do_exit and no user frame: perf records no user
# registers there, and bpfrec none either). How many of those a recording
# holds depends on the recorder's cost, not on its unwinder: freeing the
# page tables is slow on a virtual machine, and 40 gzip runs of 6 ms each
# put 4 to 10 % of their samples there.
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
#   first  prints "ROOTED PROCESSES": of COMM's processes, how many had a
#          first sample that reached the root (the header's second field
#          must be the pid: perf script -F comm,pid,ip,sym); each process
#          that missed is printed to stderr
# (Tabs separate the fields: C++ names hold spaces.)

function is_kernel(addr) { return length(addr) == 16 && addr ~ /^ffff/ }

# Whether the user frames fr[0, nf) end at a thread's root.
function is_root(    last) {
	if (nf == 0)
		return 0
	last = fr[nf - 1]
	if (last ~ /^(_start|_dl_start_user|__libc_start_call_main|__libc_start_main.*|start_thread|clone3?)$/)
		return 1
	return nf > 1 && last == "[unknown]" && fr[nf - 2] ~ /^__libc_start_main/
}

function flush(    i, seen, path) {
	if (nf < 0)
		return
	if ((comm == "" || hdr == comm) && !in_exec && !(in_exit && nf == 0)) {
		n++
		depth += nf
		root += is_root()
		if (what == "first" && !(pid in firsts)) {
			firsts[pid] = 1
			procs++
			if (is_root())
				rooted++
			else
				printf "pid %s: first sample has %d user frames, the outermost %s\n", pid, nf,
					nf ? fr[nf - 1] : "(none)" > "/dev/stderr"
		}
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
!/^\t/ { flush(); hdr = $1; pid = $2; nf = 0; in_exec = in_exit = 0; next }
nf >= 0 && NF >= 2 {
	if (is_kernel($1)) {
		if ($2 ~ /^bprm_execve/)
			in_exec = 1
		else if ($2 ~ /^do_exit/)
			in_exit = 1
		next
	}
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
	else if (what == "first")
		printf "%d %d\n", rooted, procs
	else {
		print "stacks.awk: what=reach, edges, folded or first" > "/dev/stderr"
		exit 2
	}
}
