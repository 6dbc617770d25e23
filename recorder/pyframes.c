// SPDX-License-Identifier: MIT
/* pyframes.c - Python frames in -g stacks; the contract is in pyframes.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/types.h>

#include <bpf/bpf.h>
#include <gelf.h>
#include <libelf.h>

#include "perfdata/records.h"
#include "recorder/pyframes.h"
#include "recorder/pysyms_cache.h"
#include "recorder/pystack.h"
#include "recorder/taskdesc.h"
#include "recorder/taskfiles.h"
#include "recorder/tasks.h"
#include "symbolize/procmaps.h"
#include "symbolize/pycode.h"
#include "symbolize/pyruntime.h"
#include "symbolize/safeopen.h"
#include "symbolize/util.h"
#include "tools/lib/clock.h"
#include "tools/lib/hash.h"
#include "tools/lib/opts.h"

/* The eval loop's function, and the part GCC splits off it (only in .symtab). */
#define EVAL_FUNC	"_PyEval_EvalFrameDefault"
#define EVAL_COLD	"_PyEval_EvalFrameDefault.cold"
#define UNKNOWN_NAME	"[python]"
/* Lines one function's rows span at most: a quarter before its first line, half after. */
#define PY_FN_MAX_LINES	((int)(PY_SYMFILE_MAX_ROWS / 2))
/*
 * Lines a function gets when its line table cannot be read or holds none:
 * its frames' lines are then unknown too (the same table gives them), so
 * they are its first line.
 */
#define PY_FN_DEFAULT_LINES	1
/*
 * The address range a symbol file takes (its MMAP2's len): functions go
 * into it as they are first named, until the next one does not fit. Only
 * the part used is in the file.
 */
#define PY_GEN_RESERVE	(16ull << 20)
/*
 * How long a code object read from the process is taken as the same
 * without reading it again (in sample time): it may be freed and another
 * one with the same first line put at its address, which BPF's check does
 * not catch; one read per code object and period instead of one per frame
 * and sample is what keeps the reader ahead of the rings.
 */
#define PY_CODE_TRUST_NS	(20ull * 1000000)

/*
 * A Python function of a process: where it is in its symbol files, placed
 * once, when it is first named, with a row for each line its code object's
 * line table has (so no later line moves it).
 */
struct py_fn {
	struct hash_node node;
	uint64_t addr;			/* its start in the process; 0: not placed */
	int firstlineno;
	/* Its rows: line l at 2 * (l - lo), then a row of no line (0) for any other line. */
	int lo, hi;
	struct py_fn *next_in_gen;	/* in its py_gen, in order */
	size_t key_len;
	char key[];	/* qualname NUL filename NUL */
};

/*
 * A frame named at its address (while its process lived: what names it
 * once the process is gone, as its last samples are written after it
 * exited), and the function it was then.
 */
struct py_memo {
	struct hash_node node;
	uint64_t code, instr;
	int32_t firstlineno;
	uint64_t addr;			/* the frame's address */
	struct py_fn *fn;
};

/* A code object as last read from the process: the function it was, and when. */
struct py_code_seen {
	struct hash_node node;
	uint64_t code;
	struct py_fn *fn;
	uint64_t checked;		/* sample time of that read */
};

/* Forgotten processes kept, in case they come back (proc_add()). */
#define PY_RETIRED_MAX	16

/*
 * How long after a process was found running Python, or after the latest
 * sample with Python frames, the rings are read every few ms
 * (py_frames_read_soon()). A new process's functions, and those of one
 * that just ran, are read before it can exit (a short job's code objects
 * are freed at its exit, tens of ms after its work); one idle longer has
 * its functions read already, and a system-wide recording nearly always
 * has an idle Python process somewhere, which would keep the reader
 * waking every few ms for as long as it lives.
 */
#define PY_LIVELY_NS	(1000ull * 1000 * 1000)

/* Frames remembered per process; past this the memo starts afresh. */
#define PY_MEMO_MAX	16384

/*
 * A symbol file of a process (pysyms.h): its MMAP2 and build-id are fixed
 * when it is opened, its functions come as they are named, and it is
 * written into the build-id cache when it is full, its process is
 * forgotten, and at each py_frames_flush() (each perf.data retired, the
 * end) as it stands then, replacing its earlier copy when it has gained
 * functions since: its functions keep their places, so each copy holds
 * the one before.
 */
struct py_gen {
	uint64_t start;			/* MMAP2 start; len PY_GEN_RESERVE */
	uint64_t used;			/* functions up to here, from PY_SYMFILE_TEXT_START */
	uint8_t build_id[PY_SYMFILE_BUILD_ID_SIZE];
	char path[64];
	struct py_fn *fns, **tail;
	size_t nr_fns;			/* functions in it */
	size_t nr_filed;		/* functions it had at its last filing (tried) */
	bool in_cache;			/* filed once at least */
	bool full;			/* takes no more functions: the next file opens */
};

/* A process running a CPython we walk. */
struct py_proc_state {
	struct hash_node node;
	uint32_t pid;
	uint64_t dev, ino;		/* the runtime's file */
	uint64_t map_start;		/* its mapping that was probed */
	bool unsupported;		/* a CPython not walked: kept so it is said once */
	uint64_t eval[2][2];		/* [start, end) of the eval loop's parts, in the process */
	struct py_code_reader *reader;
	bool instr_is_int;		/* f_lasti: BPF sent it with 4 bytes of whatever follows */
	struct hash_table fns;		/* struct py_fn by key */
	struct hash_table memo;		/* struct py_memo by (code, instr, first line) */
	struct hash_table codes;	/* struct py_code_seen by code */
	struct py_fn *unknown;		/* [python]: what could not be named */
	struct py_gen *gens;		/* its symbol files so far; the last may be open */
	size_t nr_gens;
	uint64_t file_id;		/* the perf.data its files were last described in (+1) */
	size_t described;		/* how many of its files that one has */
};

/*
 * What a file mapped executable is to Python frames: no runtime at all, a
 * CPython of a version not walked, or one walked with what a process's
 * walk needs of the file. Learnt once per file, from the descriptor the
 * task tracker read its build-id from (hook_file_new(): one open per new
 * file), and kept in the tracker's entry of the file (task_file.hook_data,
 * one malloc'd block): each process that maps it later costs no open and
 * no ELF parse, only its bias.
 */
enum py_file_kind {
	PY_FILE_OTHER,
	PY_FILE_UNSUPPORTED,	/* a CPython of version major.minor */
	PY_FILE_RUNTIME,
};

struct py_file_facts {
	enum py_file_kind kind;
	uint8_t major, minor;		/* its CPython's version (not PY_FILE_OTHER) */
	/* The last process said to map it: one process's image is told again after its exec. */
	uint32_t said_pid;
	/* PY_FILE_RUNTIME, at ELF addresses: */
	struct py_layout layout;
	uint64_t runtime_addr, code_type_addr;
	uint64_t eval[2][2];		/* [start, end) of the eval loop's parts; 0: absent */
	size_t nr_segs;
	struct load_seg segs[];		/* its executable PT_LOADs: a mapping's bias */
};

struct py_frames {
	struct py_frames_opts opts;
	struct hash_table procs;	/* struct py_proc_state by pid */
	/*
	 * The entries of procs that are walked (not unsupported), kept as they
	 * come and go (proc_link(), proc_unlink(), unsupported()): the
	 * recorder asks py_frames_read_soon() at every poll.
	 */
	size_t nr_walked;
	/*
	 * When a process was last found running a CPython we walk (mono_ns()),
	 * and the latest sample with Python frames named (its time, the same
	 * clock): py_frames_read_soon().
	 */
	uint64_t found_ns, active_ns;
	const struct task_tracker_hooks *next;
	void *next_ctx;
	struct py_frames_stats st;
	uint32_t last_walked_pid;
	struct buildid_cache *cache;	/* NULL: no symbol file can be filed */
	/* Forgotten processes, oldest first, kept to come back (proc_add()). */
	struct py_proc_state *retired[PY_RETIRED_MAX];
	size_t nr_retired;
	bool said_no_cache;		/* no_cache() */
	/* Symbol files of every process so far, and where the next one maps: never two alike. */
	uint32_t next_seq;
	uint64_t next_start;
	uint64_t nonce[2];		/* this recording's, in every build-id it gives */
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
	/*
	 * The build-ids this recording gives its symbol files: no other
	 * recording's file of the same process and number may have one (the
	 * cache keeps one file under an id, each filing replacing the last).
	 */
	if (getrandom(pf->nonce, sizeof(pf->nonce), GRND_NONBLOCK) != sizeof(pf->nonce)) {
		pf->nonce[0] = clock_ns(CLOCK_REALTIME);
		pf->nonce[1] = mono_ns() ^ (uint64_t)getpid() << 32;
	}
	pf->next_start = PY_SYMFILE_MAP_BASE;
	*out = pf;
	return 0;
}

static void memo_clear(struct py_proc_state *p)
{
	struct hash_node *n, *tmp;
	size_t i;

	hash_table_for_each_safe(&p->memo, n, tmp, i) {
		hash_table_del(&p->memo, n);
		free(container_of(n, struct py_memo, node));
	}
	hash_table_for_each_safe(&p->codes, n, tmp, i) {
		hash_table_del(&p->codes, n);
		free(container_of(n, struct py_code_seen, node));
	}
}

static void proc_free(struct py_proc_state *p)
{
	struct hash_node *n, *tmp;
	size_t i;

	hash_table_for_each_safe(&p->fns, n, tmp, i)
		free(container_of(n, struct py_fn, node));
	hash_table_free(&p->fns);
	memo_clear(p);
	hash_table_free(&p->memo);
	hash_table_free(&p->codes);
	py_code_reader_free(p->reader);
	free(p->gens);
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
	for (i = 0; i < pf->nr_retired; i++)
		proc_free(pf->retired[i]);
	hash_table_free(&pf->procs);
	free(pf);
}

void py_frames_set_next(struct py_frames *pf, const struct task_tracker_hooks *next,
			void *next_ctx)
{
	pf->next = next;
	pf->next_ctx = next_ctx;
}

/* pid's state, that of a runtime we walk or not (unsupported). */
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

/* p (walked until unsupported() says otherwise) is pid's state: 0 or -ENOMEM. */
static int proc_link(struct py_frames *pf, struct py_proc_state *p)
{
	if (hash_table_add(&pf->procs, &p->node, hash_table_key(&pf->procs, &p->pid, sizeof(p->pid))))
		return -ENOMEM;
	pf->nr_walked += !p->unsupported;
	return 0;
}

static void proc_unlink(struct py_frames *pf, struct py_proc_state *p)
{
	hash_table_del(&pf->procs, &p->node);
	pf->nr_walked -= !p->unsupported;
}

/*
 * A new state for pid, which maps a runtime at e; NULL without memory. The
 * state pid had until it was forgotten comes back when it ran the same
 * runtime file: the tracker forgets a process at its exec, after its first
 * samples of the new image were named with the state /proc showed then
 * (the same image), and a process that execs its own interpreter runs the
 * same functions. Its functions keep their places, its files are said
 * again (a new image has no mappings in perf), what it read is not kept.
 */
static struct py_proc_state *proc_add(struct py_frames *pf, uint32_t pid,
				       const struct procmaps_entry *e)
{
	struct py_proc_state *p = NULL;

	for (size_t i = 0; i < pf->nr_retired; i++) {
		struct py_proc_state *r = pf->retired[i];

		if (r->pid == pid && r->dev == makedev(e->maj, e->min) && r->ino == e->ino) {
			p = r;
			memmove(&pf->retired[i], &pf->retired[i + 1],
				(pf->nr_retired - i - 1) * sizeof(*pf->retired));
			pf->nr_retired--;
			break;
		}
	}
	if (p) {
		memo_clear(p);
		py_code_reader_free(p->reader);
		p->reader = NULL;
		p->unsupported = false;
		p->file_id = 0;
		p->described = 0;
	} else {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		p->pid = pid;
		p->dev = makedev(e->maj, e->min);
		p->ino = e->ino;
	}
	p->map_start = e->start;
	if (proc_link(pf, p)) {
		proc_free(p);
		return NULL;
	}
	return p;
}

static struct py_proc_state *proc_add(struct py_frames *pf, uint32_t pid,
				       const struct procmaps_entry *e);
static void gen_file(struct py_frames *pf, struct py_proc_state *p, struct py_gen *g);
static void proc_free(struct py_proc_state *p);

/* pid maps f (at e), a CPython of a version not walked: counted, and said once. */
static void unsupported(struct py_frames *pf, uint32_t pid, struct py_file_facts *f,
			const struct procmaps_entry *e, const char *path)
{
	struct py_proc_state *p = proc_add(pf, pid, e);

	if (p && !p->unsupported) {
		p->unsupported = true;
		pf->nr_walked--;
	}
	if (f->said_pid == pid)
		return;
	f->said_pid = pid;
	pf->st.procs_unsupported++;
	if (pf->opts.note) {
		char msg[300];

		snprintf(msg, sizeof(msg), "Python frames: process %" PRIu32 " runs CPython %u.%u "
			 "(%s), which is not walked (3.8 to 3.13 are)", pid, f->major, f->minor, path);
		pf->opts.note(pf->opts.note_ctx, msg);
	}
}

/*
 * A process runs a CPython we walk, and there is no build-id cache (-N, or
 * none could be opened) to file the symbol files that name its frames in:
 * said once a recording, as a warning, since its functions are left out.
 */
static void no_cache(struct py_frames *pf, uint32_t pid, const struct py_file_facts *rt)
{
	char msg[300];

	if (pf->said_no_cache || !pf->opts.warn)
		return;
	pf->said_no_cache = true;
	snprintf(msg, sizeof(msg), "Python functions are not named: process %" PRIu32 " runs "
		 "CPython %u.%u, and its frames are named by symbol files kept in the build-id "
		 "cache, which this recording has none of (-N, or HOME unset)", pid, rt->major,
		 rt->minor);
	pf->opts.warn(pf->opts.note_ctx, msg);
}

/* Done with p: its samples so far have addresses in its open file, which is complete now. */
static void proc_retire(struct py_frames *pf, struct py_proc_state *p)
{
	if (p->nr_gens)
		gen_file(pf, p, &p->gens[p->nr_gens - 1]);
	proc_free(p);
}

static void proc_forget(struct py_frames *pf, uint32_t pid)
{
	struct py_proc_state *p = proc_find(pf, pid);

	if (!p)
		return;
	bpf_map_delete_elem(pf->opts.procs_fd, &pid);
	proc_unlink(pf, p);
	/* Kept a while, to come back (proc_add()); the oldest kept goes. */
	if (pf->nr_retired == PY_RETIRED_MAX) {
		proc_retire(pf, pf->retired[0]);
		memmove(&pf->retired[0], &pf->retired[1], (PY_RETIRED_MAX - 1) * sizeof(*pf->retired));
		pf->nr_retired--;
	}
	pf->retired[pf->nr_retired++] = p;
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

/* Facts of a file that is no runtime we walk; major: a CPython of version major.minor. */
static int facts_other(uint8_t major, uint8_t minor, struct py_file_facts **out)
{
	struct py_file_facts *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->kind = major ? PY_FILE_UNSUPPORTED : PY_FILE_OTHER;
	f->major = major;
	f->minor = minor;
	*out = f;
	return 0;
}

/*
 * What the file open as fd is to us (struct py_file_facts): 0 with *out,
 * a malloc'd block, or -errno when nothing could be learnt (no memory, not
 * read): asked again at its next mapping.
 */
static int facts_read(int fd, struct py_file_facts **out)
{
	struct py_runtime_info rt = { 0 };
	struct eval_find ev = { 0 };
	struct load_seg *segs = NULL;
	struct py_file_facts *f;
	struct py_layout layout;
	size_t nr_segs = 0;
	Elf *elf = NULL;
	int err;

	*out = NULL;
	err = elf_open_fd(fd, &elf);
	if (err)	/* Not ELF: no runtime, however often it is mapped. */
		return err == -EINVAL ? facts_other(0, 0, out) : err;
	err = py_runtime_detect(elf, &rt);
	if (!err)
		err = py_runtime_layout(elf, &rt, &layout);
	if (err) {
		/* A CPython of another version is said for each process that maps it. */
		err = facts_other(err == -EOPNOTSUPP ? rt.major : 0, rt.minor, out);
		goto out;
	}
	err = elf_load_segments(elf, true, &segs, &nr_segs);
	if (err) {
		/* No executable segment: none of its code can run, nothing to walk. */
		err = err == -ENOMEM ? err : facts_other(0, 0, out);
		goto out;
	}
	elf_for_each_symbol(elf, SHT_DYNSYM, match_eval, &ev);
	elf_for_each_symbol(elf, SHT_SYMTAB, match_eval, &ev);
	f = calloc(1, sizeof(*f) + nr_segs * sizeof(*segs));
	if (!f) {
		err = -ENOMEM;
		goto out;
	}
	f->kind = PY_FILE_RUNTIME;
	f->major = rt.major;
	f->minor = rt.minor;
	f->layout = layout;
	f->runtime_addr = rt.runtime_addr;
	f->code_type_addr = rt.code_type_addr;
	memcpy(f->eval, ev.range, sizeof(f->eval));
	f->nr_segs = nr_segs;
	memcpy(f->segs, segs, nr_segs * sizeof(*segs));
	*out = f;
out:
	free(segs);
	elf_end(elf);
	return err;
}

/*
 * Is e (a mapping of pid's, of the tracker's file entry file) a CPython
 * runtime we walk? Then pid gets its state and BPF entry: 1. 0 when it is
 * not one (or cannot be read), -ENOMEM. What the file is comes from its
 * entry (hook_file_new()), else it is opened and learnt now, and kept.
 */
static int probe_mapping(struct py_frames *pf, uint32_t pid, const struct procmaps_entry *e,
			 struct task_file *file)
{
	struct py_file_facts *facts = file ? file->hook_data : NULL, *own = NULL;
	struct py_proc_state *p;
	struct py_proc bp;
	uint64_t bias = 0;
	int fd, ret = 0;

	if (e->path[0] != '/' || !strcmp(e->path, PROCMAPS_ANON_NAME))
		return 0;	/* "//anon" (a JIT's code, qemu's translations): no file */
	if (!facts) {
		/* Not learnt when the file was new (it could not be read then): now. */
		if (safeopen_mapped(pf->opts.proc_root, pid, e->start, e->end, e->path, e->maj,
				    e->min, e->ino, &fd, NULL))
			return 0;
		ret = facts_read(fd, &own);
		close(fd);
		if (ret)
			return 0;
		facts = own;
		if (file) {
			file->hook_data = own;
			own = NULL;
		}
	}
	if (facts->kind == PY_FILE_UNSUPPORTED)
		unsupported(pf, pid, facts, e, e->path);
	if (facts->kind != PY_FILE_RUNTIME ||
	    load_segs_bias(facts->segs, facts->nr_segs, e->start, e->end - e->start, e->pgoff,
			   &bias) ||
	    !bpf_proc_of(&facts->layout, facts->runtime_addr + bias, &bp))
		goto out;
	if (!pf->cache) {
		/* Nothing could name its frames: BPF does not walk them. */
		no_cache(pf, pid, facts);
		goto out;
	}
	p = proc_add(pf, pid, e);
	if (!p) {
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			p->eval[i][j] = facts->eval[i][1] ? facts->eval[i][j] + bias : 0;
	p->instr_is_int = bp.instr_is_int;
	if (py_code_reader_new(pid, &facts->layout, facts->code_type_addr + bias, NULL,
			       &p->reader)) {
		proc_forget(pf, pid);
		goto out;
	}
	if (bpf_map_update_elem(pf->opts.procs_fd, &pid, &bp, BPF_ANY)) {
		proc_forget(pf, pid);
		goto out;
	}
	/* Counted once: a process's image is probed again right after its exec. */
	if (pf->last_walked_pid != pid)
		pf->st.procs++;
	pf->last_walked_pid = pid;
	pf->found_ns = mono_ns();
	ret = 1;
out:
	free(own);
	return ret;
}

static void hook_maps_changed(void *ctx, uint32_t pid, const struct procmaps_entry *maps,
			      struct task_file *const *files, size_t nr)
{
	struct py_frames *pf = ctx;
	struct py_proc_state *p = proc_find(pf, pid);
	bool still = false;

	/* Still mapping its runtime where it did: nothing changes; else look again (an exec). */
	for (size_t i = 0; p && i < nr; i++)
		still |= makedev(maps[i].maj, maps[i].min) == p->dev && maps[i].ino == p->ino &&
			 maps[i].start == p->map_start;
	if (p && !still)
		proc_forget(pf, pid);
	for (size_t i = 0; !still && i < nr; i++)
		if (probe_mapping(pf, pid, &maps[i], files ? files[i] : NULL))
			break;
	if (pf->next && pf->next->maps_changed)
		pf->next->maps_changed(pf->next_ctx, pid, maps, files, nr);
}

/*
 * A file new to the tracker, open: what it is to us, learnt now, without
 * opening it again (only a file mapped executable is ever probed). Its
 * entry's hook_data is ours: the hooks after us are not asked.
 */
static void hook_file_new(void *ctx, uint32_t pid, const struct procmaps_entry *e, int fd,
			  struct task_file *f)
{
	struct py_file_facts *facts;

	(void)ctx;
	(void)pid;
	if (!(e->prot & PROT_EXEC) || e->path[0] != '/' || !strcmp(e->path, PROCMAPS_ANON_NAME) ||
	    f->hook_data)
		return;
	if (!facts_read(fd, &facts))
		f->hook_data = facts;
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
	.file_new = hook_file_new,
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

/* The function (qualname, filename, firstlineno) of p, made (not placed) when new; NULL without memory. */
static struct py_fn *fn_get(struct py_proc_state *p, const char *qualname, const char *filename,
			    int firstlineno)
{
	size_t ql = strlen(qualname), fl = strlen(filename), len = ql + 1 + fl + 1;
	uint64_t h = hash_bytes(hash_table_seed(&p->fns), qualname, ql);
	struct hash_node *node;
	struct py_fn *f;

	h = hash_bytes(h ^ (uint64_t)(uint32_t)firstlineno, filename, fl);
	hash_table_for_each_possible(&p->fns, node, h) {
		f = container_of(node, struct py_fn, node);
		if (f->firstlineno == firstlineno && f->key_len == len &&
		    !memcmp(f->key, qualname, ql + 1) && !memcmp(f->key + ql + 1, filename, fl + 1))
			return f;
	}
	f = calloc(1, sizeof(*f) + len);
	if (!f)
		return NULL;
	f->firstlineno = firstlineno;
	f->key_len = len;
	memcpy(f->key, qualname, ql + 1);
	memcpy(f->key + ql + 1, filename, fl + 1);
	if (hash_table_add(&p->fns, &f->node, h)) {
		free(f);
		return NULL;
	}
	return f;
}

/* The bytes f takes in its file: its rows and the row of no line; [python]'s one. */
static uint64_t fn_size(const struct py_proc_state *p, const struct py_fn *f)
{
	return f == p->unknown ? 2 : 2ull * (uint64_t)(f->hi - f->lo + 2);
}

/* The build-id of p's seq-th symbol file: unique to this recording, process and file. */
static void gen_build_id(const struct py_frames *pf, const struct py_proc_state *p, uint32_t seq,
			 uint8_t id[PY_SYMFILE_BUILD_ID_SIZE])
{
	static const uint64_t seeds[3] = { 0x70796672616d6573ull, 0x62706672656332ull,
					   0xc2b2ae3d27d4eb4full };
	uint64_t key[4] = { pf->nonce[0], pf->nonce[1], p->pid, seq };
	uint64_t h[3];

	for (int k = 0; k < 3; k++)
		h[k] = hash_bytes(seeds[k], key, sizeof(key));
	memcpy(id, &h[0], 8);
	memcpy(id + 8, &h[1], 8);
	memcpy(id + 16, &h[2], 4);
}

/*
 * Write g as it stands into the build-id cache, over its earlier copy;
 * counted, and when it fails, too. Not again while it gains no function:
 * the cache has it as it is (none at all: no sample has an address in it).
 */
static void gen_file(struct py_frames *pf, struct py_proc_state *p, struct py_gen *g)
{
	struct py_symfile_row *rows = NULL;
	struct py_symfile *sf = NULL;
	int err;

	if (g->nr_filed == g->nr_fns)
		return;
	g->nr_filed = g->nr_fns;
	rows = malloc(sizeof(*rows) * (PY_FN_MAX_LINES + 2));
	err = rows ? py_symfile_new(&sf) : -ENOMEM;
	for (struct py_fn *f = g->fns; f && !err; f = f->next_in_gen) {
		struct py_symfile_func fn = {
			.start = f->addr - g->start, .size = fn_size(p, f), .name = f->key,
			.file = f->key + strlen(f->key) + 1,
		};

		if (f != p->unknown) {
			size_t n = 0;

			for (int line = f->lo; line <= f->hi; line++)
				rows[n++] = (struct py_symfile_row){
					.offset = 2u * (uint32_t)(line - f->lo), .line = (uint32_t)line };
			rows[n] = (struct py_symfile_row){ .offset = 2u * (uint32_t)n, .line = 0 };
			fn.rows = rows;
			fn.nr_rows = n + 1;
		} else {
			fn.file = NULL;
		}
		err = py_symfile_add(sf, &fn);
	}
	if (!err)
		err = py_symfile_cache(sf, pf->cache, g->path, g->build_id);
	if (err) {
		pf->st.not_filed++;
	} else {
		pf->st.files += !g->in_cache;
		pf->st.filings++;
		g->in_cache = true;
	}
	py_symfile_free(sf);
	free(rows);
}

/* A new symbol file for p, open for functions: 0, -E2BIG past the range they may take, -ENOMEM. */
static int gen_open(struct py_frames *pf, struct py_proc_state *p)
{
	struct py_gen *gens, *g;

	if (pf->next_start + PY_GEN_RESERVE > PY_SYMFILE_MAP_LIMIT)
		return -E2BIG;
	gens = realloc(p->gens, (p->nr_gens + 1) * sizeof(*gens));
	if (!gens)
		return -ENOMEM;
	p->gens = gens;
	g = &gens[p->nr_gens];
	*g = (struct py_gen){ .start = pf->next_start, .used = PY_SYMFILE_TEXT_START };
	if (py_symfile_path(g->path, sizeof(g->path), (pid_t)p->pid, pf->next_seq))
		return -ENOSPC;
	gen_build_id(pf, p, pf->next_seq, g->build_id);
	g->tail = &g->fns;
	p->nr_gens++;
	pf->next_seq++;
	/* The next file maps clear of this one (pysyms.h), a page apart, whichever process it is for. */
	pf->next_start = g->start + PY_GEN_RESERVE + 4096;
	return 0;
}

/* f into p's open symbol file (filing a full one first): 0 and f->addr, or -errno. */
static int fn_place(struct py_frames *pf, struct py_proc_state *p, struct py_fn *f)
{
	uint64_t size = fn_size(p, f);
	struct py_gen *g = p->nr_gens ? &p->gens[p->nr_gens - 1] : NULL;
	int err;

	if (g && !g->full && g->used + size > PY_GEN_RESERVE) {
		gen_file(pf, p, g);
		g->full = true;
	}
	if (!g || g->full) {
		err = gen_open(pf, p);
		if (err)
			return err;
		g = &p->gens[p->nr_gens - 1];
	}
	f->addr = g->start + g->used;
	g->used += size;
	f->next_in_gen = NULL;
	*g->tail = f;
	g->tail = &f->next_in_gen;
	g->nr_fns++;
	return 0;
}

/* The lines of code object n f gets rows for: its line table's, within PY_FN_MAX_LINES. */
static void fn_lines(struct py_fn *f, const struct py_code_name *n)
{
	int first = f->firstlineno;

	f->lo = first;
	f->hi = first + PY_FN_DEFAULT_LINES - 1;
	if (n->line_lo > 0) {
		f->lo = n->line_lo < first ? n->line_lo : first;
		f->hi = n->line_hi > first ? n->line_hi : first;
	}
	if (f->lo < first - PY_FN_MAX_LINES / 4)
		f->lo = first - PY_FN_MAX_LINES / 4;
	if (f->hi > first + PY_FN_MAX_LINES / 2)
		f->hi = first + PY_FN_MAX_LINES / 2;
}

/* p's [python] frame address, placed when first needed; 0 when it cannot be. */
static uint64_t unknown_addr(struct py_frames *pf, struct py_proc_state *p)
{
	if (!p->unknown) {
		p->unknown = fn_get(p, UNKNOWN_NAME, "", 0);
		if (!p->unknown)
			return 0;
	}
	if (!p->unknown->addr && fn_place(pf, p, p->unknown))
		return 0;
	return py_symfile_frame(0, p->unknown->addr, 0);
}

/* The frame address of line in f: its row, or the row of no line past them. */
static uint64_t fn_frame(const struct py_fn *f, int line)
{
	uint64_t row = line >= f->lo && line <= f->hi ? (uint64_t)(line - f->lo) :
							 (uint64_t)(f->hi - f->lo + 1);

	return py_symfile_frame(0, f->addr, 2 * row);
}

static struct py_memo *memo_find(struct py_proc_state *p, const uint64_t key[3], uint64_t h)
{
	struct hash_node *node;

	hash_table_for_each_possible(&p->memo, node, h) {
		struct py_memo *m = container_of(node, struct py_memo, node);

		if (m->code == key[0] && m->instr == key[1] && m->firstlineno == (int32_t)key[2])
			return m;
	}
	return NULL;
}

static struct py_code_seen *code_find(struct py_proc_state *p, uint64_t code, uint64_t h)
{
	struct hash_node *node;

	hash_table_for_each_possible(&p->codes, node, h) {
		struct py_code_seen *c = container_of(node, struct py_code_seen, node);

		if (c->code == code)
			return c;
	}
	return NULL;
}

/* What a read of code (sample time `time`) found it to be: f. Without memory it is read again. */
static void code_saw(struct py_proc_state *p, struct py_code_seen *c, uint64_t code, uint64_t h,
		     struct py_fn *f, uint64_t time)
{
	if (!c) {
		c = malloc(sizeof(*c));
		if (!c)
			return;
		c->code = code;
		if (hash_table_add(&p->codes, &c->node, h)) {
			free(c);
			return;
		}
	}
	c->fn = f;
	c->checked = time;
}

/*
 * The address of one frame (not a shim) of a sample taken at time: its
 * function's row of its line, the [python] frame's when it cannot be
 * named; 0 when neither has a place. *unknown: it is [python].
 */
static uint64_t frame_addr(struct py_frames *pf, struct py_proc_state *p,
			   const struct py_frame *fr, uint64_t time, bool *unknown)
{
	uint64_t instr = p->instr_is_int ? (uint64_t)(int64_t)(int32_t)fr->instr : fr->instr;
	uint64_t key[3] = { fr->code, instr, (uint32_t)fr->firstlineno };
	uint64_t h = hash_table_key(&p->memo, key, sizeof(key));
	uint64_t hc = hash_table_key(&p->codes, &fr->code, sizeof(fr->code));
	struct py_memo *m = memo_find(p, key, h);
	struct py_code_seen *c = code_find(p, fr->code, hc);
	struct py_code_name n;
	struct py_fn *f = NULL;
	int err = -ENOENT, line;
	uint64_t addr;

	*unknown = false;
	/*
	 * Its code object read recently as the function this frame was (or
	 * by a sample older than that read: written in time order, rarely).
	 */
	if (m && c && m->fn == c->fn &&
	    (time < c->checked || time - c->checked < PY_CODE_TRUST_NS))
		return m->addr;
	/*
	 * Read now, after the sample: the object may have been freed since
	 * (a module torn down as the interpreter ends) or its process have
	 * exited: it is then named as last read, when that is the object BPF
	 * saw (its first line). A first line other than BPF's: the object at
	 * that address is another one now.
	 */
	if (fr->code) {
		err = py_code_name(p->reader, fr->code, instr, &n);
		pf->st.reads++;
		if (err)
			err = py_code_name_last(p->reader, fr->code, instr, &n);
	}
	if (!err && n.firstlineno == fr->firstlineno)
		f = fn_get(p, n.qualname, n.filename, n.firstlineno);
	if (f && !f->addr) {
		fn_lines(f, &n);
		if (fn_place(pf, p, f))
			f = NULL;
	}
	if (!f) {
		/* Replaced since the sample (or never read): a frame named before is as then. */
		if (m)
			return m->addr;
		*unknown = true;
		return unknown_addr(pf, p);
	}
	line = n.line > 0 ? n.line : n.firstlineno;
	addr = fn_frame(f, line);
	if (!m && p->memo.nr >= PY_MEMO_MAX) {
		memo_clear(p);
		c = NULL;
	}
	code_saw(p, c, fr->code, hc, f, time);
	if (m) {
		m->addr = addr;
		m->fn = f;
		return addr;
	}
	m = malloc(sizeof(*m));
	if (m) {
		*m = (struct py_memo){ .code = fr->code, .instr = instr,
				       .firstlineno = fr->firstlineno, .addr = addr, .fn = f };
		if (hash_table_add(&p->memo, &m->node, h))
			free(m);
	}
	return addr;
}

/*
 * pid's state when it runs a CPython we walk, or ran one and was forgotten
 * since (retired, the latest first): a process's records can be written
 * after the tracker forgot it at its exit, the tracers' sums (short
 * off-CPU intervals, run-queue waits) at the very end of the recording,
 * and its frames are then named as they were while it lived (its memo,
 * py_code_name_last()). BPF walks only the processes in py_procs, so a
 * record with Python frames is of the live state or of the one before it.
 */
static struct py_proc_state *proc_walked(struct py_frames *pf, uint32_t pid)
{
	struct py_proc_state *p = proc_find(pf, pid);

	for (size_t i = pf->nr_retired; !p && i > 0; i--)
		if (pf->retired[i - 1]->pid == pid)
			p = pf->retired[i - 1];
	return p && !p->unsupported ? p : NULL;
}

void py_frames_set_cache(struct py_frames *pf, struct buildid_cache *cache)
{
	pf->cache = cache;
}

void py_frames_prepare(struct py_frames *pf, uint32_t pid, uint64_t time, struct py_frame *py,
		       size_t nr_py)
{
	struct py_proc_state *p;

	if (!pf->cache || !(p = proc_walked(pf, pid)))
		return;
	if (nr_py && time > pf->active_ns)
		pf->active_ns = time;
	for (size_t i = 0; i < nr_py && i < PY_MAX_FRAMES; i++) {
		bool unknown;

		if (py[i].flags & (PY_FRAME_SHIM | PY_FRAME_NAMED))
			continue;
		py[i].code = frame_addr(pf, p, &py[i], time, &unknown);
		py[i].flags |= PY_FRAME_NAMED | (unknown ? PY_FRAME_UNKNOWN : 0);
	}
}

/* An MMAP2 (and its build-id) of g for p into d. */
static int desc_gen(struct task_desc *d, const struct py_proc_state *p, const struct py_gen *g,
		    const struct perfdata_sample_id *sid)
{
	struct perfdata_mmap m = {
		.pid = p->pid, .tid = p->pid, .start = g->start, .len = PY_GEN_RESERVE,
		.build_id_size = PY_SYMFILE_BUILD_ID_SIZE,
		.prot = PROT_READ | PROT_EXEC, .flags = MAP_PRIVATE, .filename = g->path,
	};
	int err;

	memcpy(m.build_id, g->build_id, sizeof(g->build_id));
	err = task_desc_add_mmap2(d, &m, sid);
	return err ? err : task_desc_add_build_id(d, g->build_id, sizeof(g->build_id), g->path);
}

int py_frames_describe(struct py_frames *pf, uint32_t pid, uint64_t file_id,
		       const struct perfdata_sample_id *sid, struct task_desc *d)
{
	struct py_proc_state *p = proc_walked(pf, pid);
	size_t from;
	int err = 0;

	if (!p)
		return 0;
	/* A new perf.data (--switch-output): every file of the process again. */
	from = p->file_id == file_id + 1 ? p->described : 0;
	p->file_id = file_id + 1;
	for (size_t i = from; i < p->nr_gens && !err; i++)
		err = desc_gen(d, p, &p->gens[i], sid);
	if (!err)
		p->described = p->nr_gens;
	return err;
}

size_t py_frames_chain(struct py_frames *pf, uint32_t pid, const uint64_t *native,
		       size_t nr_native, const struct py_frame *py, size_t nr_py, uint64_t *out,
		       size_t cap)
{
	struct py_proc_state *p = proc_walked(pf, pid);
	uint64_t addrs[PY_MAX_FRAMES];
	uint32_t flags[PY_MAX_FRAMES];
	struct py_frame frames[PY_MAX_FRAMES];
	struct pystack_input in;
	size_t n, k = 0, unplaced = 0;

	if (!p || !nr_py)
		return 0;
	if (nr_py > PY_MAX_FRAMES)
		nr_py = PY_MAX_FRAMES;
	nr_py = pystack_drop_shims(py, nr_py, frames);
	for (size_t i = 0; i < nr_py; i++) {
		/* Not named (py_frames_prepare() was not called) or no place to name it: left out. */
		addrs[k] = frames[i].flags & PY_FRAME_NAMED ? frames[i].code : 0;
		flags[k] = frames[i].flags;
		if (addrs[k])
			k++;
		else if (k)
			flags[k - 1] |= frames[i].flags & PY_FRAME_ENTRY;
	}
	if (!k)
		return 0;
	in = (struct pystack_input){
		.native = native, .nr_native = nr_native, .py = addrs, .py_flags = flags,
		.nr_py = k, .is_eval = in_eval, .ctx = p,
	};
	n = pystack_interleave(&in, out, cap, &unplaced);
	/*
	 * Counted as written: the Python frames go in in their order, and a
	 * chain past cap loses its outer end (native addresses never lie
	 * where symbol files map, pysyms.h).
	 */
	for (size_t i = 0, w = 0; i < n && w < k; i++) {
		if (out[i] < PY_SYMFILE_MAP_BASE || out[i] >= PY_SYMFILE_MAP_LIMIT)
			continue;
		pf->st.frames++;
		pf->st.unknown += !!(flags[w++] & PY_FRAME_UNKNOWN);
	}
	pf->st.samples++;
	pf->st.unplaced += unplaced;
	return n;
}

void py_frames_flush(struct py_frames *pf)
{
	struct hash_node *n, *tmp;
	size_t i;

	hash_table_for_each_safe(&pf->procs, n, tmp, i) {
		struct py_proc_state *p = container_of(n, struct py_proc_state, node);

		if (p->nr_gens)
			gen_file(pf, p, &p->gens[p->nr_gens - 1]);
	}
	for (i = 0; i < pf->nr_retired; i++)
		if (pf->retired[i]->nr_gens)
			gen_file(pf, pf->retired[i], &pf->retired[i]->gens[pf->retired[i]->nr_gens - 1]);
}

bool py_frames_read_soon(const struct py_frames *pf, uint64_t now)
{
	/* Forgotten processes are retired, out of procs: only live ones are counted. */
	return pf->nr_walked > 0 &&
	       (now < pf->found_ns + PY_LIVELY_NS || now < pf->active_ns + PY_LIVELY_NS);
}

void py_frames_stats(const struct py_frames *pf, struct py_frames_stats *out)
{
	*out = pf->st;
}
