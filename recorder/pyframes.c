// SPDX-License-Identifier: MIT
/* pyframes.c - Python frames in -g stacks; the contract is in pyframes.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/types.h>

#include <bpf/bpf.h>
#include <gelf.h>
#include <libelf.h>

#include "perfdata/records.h"
#include "recorder/pyframes.h"
#include "recorder/pystack.h"
#include "recorder/tasks.h"
#include "symbolize/procmaps.h"
#include "symbolize/pycode.h"
#include "symbolize/pyruntime.h"
#include "symbolize/safeopen.h"
#include "symbolize/util.h"
#include "tools/lib/hash.h"
#include "tools/lib/opts.h"

/* The eval loop's function, and the part GCC splits off it (only in .symtab). */
#define EVAL_FUNC	"_PyEval_EvalFrameDefault"
#define EVAL_COLD	"_PyEval_EvalFrameDefault.cold"
#define UNKNOWN_NAME	"[python]"

/* A function of a process's synthetic range. */
struct py_sym {
	struct hash_node node;
	uint64_t addr;
	int firstlineno;
	size_t key_len;
	char key[];	/* qualname NUL filename NUL */
};

/* A process running a CPython we walk. */
struct py_proc_state {
	struct hash_node node;
	uint32_t pid;
	uint64_t dev, ino;		/* the runtime's file */
	uint64_t eval[2][2];		/* [start, end) of the eval loop's parts, in the process */
	struct py_code_reader *reader;
	bool instr_is_int;		/* f_lasti: BPF sent it with 4 bytes of whatever follows */
	struct hash_table syms;		/* struct py_sym by key */
	uint64_t nr_syms;		/* slot 0 is [python] */
	bool unknown_written;
	FILE *map;			/* the perf map (pyframes.h: temporary) */
	uint64_t file_id;		/* the file its range was last described in (+1) */
};

/* A file looked at: not a runtime, or one of an unsupported version (said once). */
struct py_file_seen {
	struct hash_node node;
	uint64_t dev, ino;
};

struct py_frames {
	struct py_frames_opts opts;
	struct hash_table procs;	/* struct py_proc_state by pid */
	struct hash_table seen;		/* struct py_file_seen by (dev, ino) */
	const struct task_tracker_hooks *next;
	void *next_ctx;
	struct py_frames_stats st;
};

int py_frames_new(const struct py_frames_opts *opts, struct py_frames **out)
{
	struct py_frames *pf;
	int err;

	*out = NULL;
	pf = calloc(1, sizeof(*pf));
	if (!pf)
		return -ENOMEM;
	err = opts_copy(&pf->opts, sizeof(pf->opts), OPTS_KNOWN(py_frames_opts), opts);
	if (err) {
		free(pf);
		return err;
	}
	*out = pf;
	return 0;
}

static void proc_free(struct py_proc_state *p)
{
	struct hash_node *n, *tmp;
	size_t i;

	hash_table_for_each_safe(&p->syms, n, tmp, i)
		free(container_of(n, struct py_sym, node));
	hash_table_free(&p->syms);
	py_code_reader_free(p->reader);
	if (p->map)
		fclose(p->map);
	free(p);
}

void py_frames_free(struct py_frames *pf)
{
	struct hash_node *n, *tmp;
	size_t i;

	if (!pf)
		return;
	hash_table_for_each_safe(&pf->procs, n, tmp, i)
		proc_free(container_of(n, struct py_proc_state, node));
	hash_table_for_each_safe(&pf->seen, n, tmp, i)
		free(container_of(n, struct py_file_seen, node));
	hash_table_free(&pf->procs);
	hash_table_free(&pf->seen);
	free(pf);
}

void py_frames_set_next(struct py_frames *pf, const struct task_tracker_hooks *next,
			void *next_ctx)
{
	pf->next = next;
	pf->next_ctx = next_ctx;
}

static struct py_proc_state *proc_find(struct py_frames *pf, uint32_t pid)
{
	uint64_t h = hash_table_key(&pf->procs, &pid, sizeof(pid));
	struct hash_node *n;

	hash_table_for_each_possible(&pf->procs, n, h) {
		struct py_proc_state *p = container_of(n, struct py_proc_state, node);

		if (p->pid == pid)
			return p;
	}
	return NULL;
}

static bool file_seen(struct py_frames *pf, uint64_t dev, uint64_t ino, bool add)
{
	uint64_t key[2] = { dev, ino };
	uint64_t h = hash_table_key(&pf->seen, key, sizeof(key));
	struct py_file_seen *f;
	struct hash_node *n;

	hash_table_for_each_possible(&pf->seen, n, h) {
		f = container_of(n, struct py_file_seen, node);
		if (f->dev == dev && f->ino == ino)
			return true;
	}
	if (!add)
		return false;
	f = calloc(1, sizeof(*f));
	if (!f)
		return false;
	f->dev = dev;
	f->ino = ino;
	if (hash_table_add(&pf->seen, &f->node, h))
		free(f);
	return false;
}

static void proc_forget(struct py_frames *pf, uint32_t pid)
{
	struct py_proc_state *p = proc_find(pf, pid);

	if (!p)
		return;
	bpf_map_delete_elem(pf->opts.procs_fd, &pid);
	hash_table_del(&pf->procs, &p->node);
	proc_free(p);
}

/* The load bias of e, a mapping of elf's executable segment: 0 and *bias, or -ENOENT. */
static int mapping_bias(Elf *elf, const struct procmaps_entry *e, uint64_t *bias)
{
	struct load_seg *segs;
	size_t nr;
	int err = elf_load_segments(elf, true, &segs, &nr);

	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < nr; i++) {
		if (e->pgoff < segs[i].offset || e->pgoff - segs[i].offset >= segs[i].filesz)
			continue;
		*bias = e->start - (segs[i].vaddr + (e->pgoff - segs[i].offset));
		err = 0;
		break;
	}
	free(segs);
	return err;
}

struct eval_find {
	uint64_t range[2][2];
};

static int match_eval(const GElf_Sym *sym, const char *name, void *ctx)
{
	struct eval_find *f = ctx;
	int i = !strcmp(name, EVAL_FUNC) ? 0 : !strcmp(name, EVAL_COLD) ? 1 : -1;

	if (i < 0 || GELF_ST_TYPE(sym->st_info) != STT_FUNC || !sym->st_size)
		return 0;
	f->range[i][0] = sym->st_value;
	f->range[i][1] = sym->st_value + sym->st_size;
	return 0;
}

/* Put a number of the layout in a BPF field of 16 bits: false when it does not fit. */
static bool narrow(uint32_t v, __u16 *out)
{
	if (v == PY_LAYOUT_NONE) {
		*out = PY_OFF_NONE;
		return true;
	}
	if (v >= PY_OFF_NONE)
		return false;
	*out = (__u16)v;
	return true;
}

/* The BPF view of a runtime at runtime_addr with layout l: false when an offset cannot be walked. */
static bool bpf_proc_of(const struct py_layout *l, uint64_t runtime_addr, struct py_proc *bp)
{
	bool ok = true;

	*bp = (struct py_proc){ .runtime = runtime_addr, .version = l->major << 8 | l->minor };
	if (l->tstate_native_thread_id != PY_LAYOUT_NONE)
		bp->flags |= PY_PROC_NATIVE_TID;
	if (l->cframe_current_frame != PY_LAYOUT_NONE)
		bp->flags |= PY_PROC_CFRAME;
	if (l->frame_owner != PY_LAYOUT_NONE)
		bp->flags |= PY_PROC_OWNER;
	if (l->instr_kind != PY_INSTR_CODE_PTR)
		bp->flags |= PY_PROC_FRAME_OBJECTS;
	/*
	 * 3.11's _PyInterpreterFrame has bool is_entry right before its owner
	 * (pycore_frame.h of 3.11; 3.12 replaced it by the shim frames).
	 */
	if (l->major == 3 && l->minor == 11) {
		bp->flags |= PY_PROC_IS_ENTRY;
		bp->frame_is_entry = 68;
	} else {
		bp->frame_is_entry = PY_OFF_NONE;
	}
	bp->instr_is_int = l->instr_kind != PY_INSTR_CODE_PTR;
	bp->frame_owner_cstack = l->frame_owner_cstack;
	ok &= narrow(l->runtime_interpreters_head, &bp->runtime_interpreters_head);
	ok &= narrow(l->interp_next, &bp->interp_next);
	ok &= narrow(l->interp_threads_head, &bp->interp_threads_head);
	ok &= narrow(l->tstate_next, &bp->tstate_next);
	ok &= narrow(bp->flags & PY_PROC_NATIVE_TID ? l->tstate_native_thread_id :
						     l->tstate_thread_id, &bp->tstate_id);
	ok &= narrow(l->tstate_frame, &bp->tstate_frame);
	ok &= narrow(l->cframe_current_frame, &bp->cframe_current_frame);
	ok &= narrow(l->frame_previous, &bp->frame_previous);
	ok &= narrow(l->frame_code, &bp->frame_code);
	ok &= narrow(l->frame_instr, &bp->frame_instr);
	ok &= narrow(l->frame_owner, &bp->frame_owner);
	ok &= narrow(l->code_firstlineno, &bp->code_firstlineno);
	/* The frame fields come from one read of PY_FRAME_READ bytes. */
	ok &= bp->frame_previous < PY_FRAME_READ - 8 && bp->frame_code < PY_FRAME_READ - 8 &&
	      bp->frame_instr < PY_FRAME_READ - 8;
	ok &= !(bp->flags & PY_PROC_OWNER) || bp->frame_owner < PY_FRAME_READ - 8;
	return ok;
}

static void note(struct py_frames *pf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct py_frames *pf, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	if (!pf->opts.note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pf->opts.note(pf->opts.note_ctx, msg);
}

/*
 * Is e (a mapping of pid's) a CPython runtime we walk? Then pid gets its
 * state and BPF entry: 1. 0 when it is not one (or cannot be read), -ENOMEM.
 */
static int probe_mapping(struct py_frames *pf, uint32_t pid, const struct procmaps_entry *e)
{
	uint64_t dev = makedev(e->maj, e->min), bias = 0;
	struct py_runtime_info rt;
	struct py_layout layout;
	struct py_proc_state *p;
	struct eval_find ev = { 0 };
	struct py_proc bp;
	Elf *elf = NULL;
	int fd = -1, err, ret = 0;

	if (e->path[0] != '/' || file_seen(pf, dev, e->ino, false))
		return 0;
	if (safeopen_mapped(pf->opts.proc_root, pid, e->start, e->end, e->path, e->maj, e->min,
			    e->ino, &fd, NULL))
		return 0;
	if (elf_open_fd(fd, &elf))
		goto out;
	err = py_runtime_detect(elf, &rt);
	if (err == -EOPNOTSUPP) {
		pf->st.procs_unsupported++;
		note(pf, "Python frames: process %" PRIu32 " runs CPython %u.%u (%s), which is not "
		     "walked (3.8 to 3.13 are)", pid, rt.major, rt.minor, e->path);
		file_seen(pf, dev, e->ino, true);
		goto out;
	}
	if (!err)
		err = py_runtime_layout(elf, &rt, &layout);
	if (err == -EOPNOTSUPP)
		pf->st.procs_unsupported++;
	if (err) {
		file_seen(pf, dev, e->ino, true);	/* not a runtime: never opened again */
		goto out;
	}
	if (mapping_bias(elf, e, &bias) || !bpf_proc_of(&layout, rt.runtime_addr + bias, &bp))
		goto out;
	elf_for_each_symbol(elf, SHT_DYNSYM, match_eval, &ev);
	elf_for_each_symbol(elf, SHT_SYMTAB, match_eval, &ev);
	p = calloc(1, sizeof(*p));
	if (!p) {
		ret = -ENOMEM;
		goto out;
	}
	p->pid = pid;
	p->dev = dev;
	p->ino = e->ino;
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			p->eval[i][j] = ev.range[i][1] ? ev.range[i][j] + bias : 0;
	p->nr_syms = 1;	/* slot 0: [python] */
	p->instr_is_int = bp.instr_is_int;
	if (py_code_reader_new(pid, &layout, rt.code_type_addr + bias, NULL, &p->reader) ||
	    hash_table_add(&pf->procs, &p->node, hash_table_key(&pf->procs, &pid, sizeof(pid)))) {
		proc_free(p);
		goto out;
	}
	if (bpf_map_update_elem(pf->opts.procs_fd, &pid, &bp, BPF_ANY)) {
		proc_forget(pf, pid);
		goto out;
	}
	pf->st.procs++;
	ret = 1;
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return ret;
}

static void hook_maps_changed(void *ctx, uint32_t pid, const struct procmaps_entry *maps,
			      size_t nr)
{
	struct py_frames *pf = ctx;
	struct py_proc_state *p = proc_find(pf, pid);
	bool still = false;

	/* Still mapping its runtime: nothing changes; else look again (an exec). */
	for (size_t i = 0; p && i < nr; i++)
		still |= makedev(maps[i].maj, maps[i].min) == p->dev && maps[i].ino == p->ino;
	if (p && !still)
		proc_forget(pf, pid);
	for (size_t i = 0; !still && i < nr; i++)
		if (probe_mapping(pf, pid, &maps[i]))
			break;
	if (pf->next && pf->next->maps_changed)
		pf->next->maps_changed(pf->next_ctx, pid, maps, nr);
}

static void hook_forget(void *ctx, uint32_t pid)
{
	struct py_frames *pf = ctx;

	proc_forget(pf, pid);
	if (pf->next && pf->next->forget)
		pf->next->forget(pf->next_ctx, pid);
}

const struct task_tracker_hooks py_frames_hooks = {
	.maps_changed = hook_maps_changed,
	.forget = hook_forget,
};

static bool in_eval(void *ctx, uint64_t pc)
{
	const struct py_proc_state *p = ctx;

	for (int i = 0; i < 2; i++)
		if (pc >= p->eval[i][0] && pc < p->eval[i][1])
			return true;
	return false;
}

/* The perf map's line for a function (pyframes.h: the temporary way perf learns names). */
static void map_line(struct py_proc_state *p, uint64_t addr, const char *qualname,
		     const char *filename)
{
	char path[64];

	if (!p->map) {
		int fd;

		snprintf(path, sizeof(path), "/tmp/perf-%" PRIu32 ".map", p->pid);
		fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0)
			return;
		p->map = fdopen(fd, "a");
		if (!p->map) {
			close(fd);
			return;
		}
	}
	if (filename && *filename) {
		const char *base = strrchr(filename, '/');

		/* "NAME (BASENAME)", as the Python symbol file will name it. */
		fprintf(p->map, "%" PRIx64 " %" PRIx64 " %s (%s)\n", addr, (uint64_t)PY_SYNTH_SPAN,
			qualname, base ? base + 1 : filename);
	}
	else
		fprintf(p->map, "%" PRIx64 " %" PRIx64 " %s\n", addr, (uint64_t)PY_SYNTH_SPAN, qualname);
	fflush(p->map);
}

/* The address of function (qualname, filename, firstlineno) in p's range: 0 when out of room. */
static uint64_t sym_addr(struct py_proc_state *p, const struct py_code_name *n)
{
	size_t ql = strlen(n->qualname), fl = strlen(n->filename), len = ql + 1 + fl + 1;
	uint64_t h = hash_bytes(hash_table_seed(&p->syms), n->qualname, ql);
	struct hash_node *node;
	struct py_sym *s;

	h = hash_bytes(h ^ (uint64_t)(uint32_t)n->firstlineno, n->filename, fl);
	hash_table_for_each_possible(&p->syms, node, h) {
		s = container_of(node, struct py_sym, node);
		if (s->firstlineno == n->firstlineno && s->key_len == len &&
		    !memcmp(s->key, n->qualname, ql + 1) && !memcmp(s->key + ql + 1, n->filename, fl + 1))
			return s->addr;
	}
	if (p->nr_syms >= PY_SYNTH_LEN / PY_SYNTH_SPAN)
		return 0;
	s = malloc(sizeof(*s) + len);
	if (!s)
		return 0;
	s->addr = PY_SYNTH_BASE + p->nr_syms * PY_SYNTH_SPAN;
	s->firstlineno = n->firstlineno;
	s->key_len = len;
	memcpy(s->key, n->qualname, ql + 1);
	memcpy(s->key + ql + 1, n->filename, fl + 1);
	if (hash_table_add(&p->syms, &s->node, h)) {
		free(s);
		return 0;
	}
	p->nr_syms++;
	map_line(p, s->addr, n->qualname, n->filename);
	return s->addr;
}

static uint64_t unknown_addr(struct py_proc_state *p)
{
	if (!p->unknown_written) {
		p->unknown_written = true;
		map_line(p, PY_SYNTH_BASE, UNKNOWN_NAME, NULL);
	}
	return PY_SYNTH_BASE;
}

/* The address of one frame: its function's, plus its line's distance from the first. */
static uint64_t frame_addr(struct py_frames *pf, struct py_proc_state *p, const struct py_frame *f)
{
	uint64_t instr = p->instr_is_int ? (uint64_t)(int64_t)(int32_t)f->instr : f->instr;
	struct py_code_name n;
	uint64_t addr, off;

	if (!f->code || py_code_name(p->reader, f->code, instr, &n) ||
	    n.firstlineno != f->firstlineno || !(addr = sym_addr(p, &n))) {
		pf->st.unknown++;
		return unknown_addr(p);
	}
	off = n.line > n.firstlineno ? (uint64_t)(n.line - n.firstlineno) : 0;
	return addr + (off < PY_SYNTH_SPAN ? off : PY_SYNTH_SPAN - 1);
}

size_t py_frames_chain(struct py_frames *pf, uint32_t pid, const uint64_t *native,
		       size_t nr_native, const struct py_frame *py, size_t nr_py, uint64_t *out,
		       size_t cap)
{
	struct py_proc_state *p = proc_find(pf, pid);
	uint64_t addrs[PY_MAX_FRAMES];
	uint32_t flags[PY_MAX_FRAMES];
	struct py_frame frames[PY_MAX_FRAMES];
	struct pystack_input in;
	size_t n, unplaced = 0;

	if (!p || !nr_py)
		return 0;
	if (nr_py > PY_MAX_FRAMES)
		nr_py = PY_MAX_FRAMES;
	nr_py = pystack_drop_shims(py, nr_py, frames);
	for (size_t i = 0; i < nr_py; i++) {
		addrs[i] = frame_addr(pf, p, &frames[i]);
		flags[i] = frames[i].flags;
	}
	in = (struct pystack_input){
		.native = native, .nr_native = nr_native, .py = addrs, .py_flags = flags,
		.nr_py = nr_py, .is_eval = in_eval, .ctx = p,
	};
	n = pystack_interleave(&in, out, cap, &unplaced);
	pf->st.samples++;
	pf->st.frames += nr_py;
	pf->st.unplaced += unplaced;
	return n;
}

bool py_frames_mmap(struct py_frames *pf, uint32_t pid, uint64_t file_id, struct perfdata_mmap *m)
{
	struct py_proc_state *p = proc_find(pf, pid);

	if (!p || p->file_id == file_id + 1)
		return false;
	p->file_id = file_id + 1;
	/* An anonymous executable mapping: perf names it from /tmp/perf-PID.map. */
	*m = (struct perfdata_mmap){
		.pid = pid, .tid = pid, .start = PY_SYNTH_BASE, .len = PY_SYNTH_LEN,
		.prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE, .filename = "//anon",
	};
	return true;
}

void py_frames_stats(const struct py_frames *pf, struct py_frames_stats *out)
{
	*out = pf->st;
}
