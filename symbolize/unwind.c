// SPDX-License-Identifier: MIT
/*
 * unwind.c - DWARF stack unwinding over a copied stack (unwind.h), with
 * libdw's Dwfl frame API: the files of the address space are reported to
 * one Dwfl, and dwfl_attach_state() gives it a "process" with one thread
 * whose initial registers and memory are the sample's. libdw then applies
 * the CFI row of each pc (.eh_frame, else .debug_frame) and hands the
 * frames back one by one.
 *
 * The Dwfl keeps a pointer to its space as callback argument, so the space
 * points it at each sample's registers and stack before a walk.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "symbolize/unwind.h"
#include "symbolize/util.h"

struct unw_space {
	struct symbolizer *sym;
	pid_t pid;
	Dwfl *dwfl;
	bool attached;		/* reporting done, dwfl_attach_state() tried */
	bool attach_ok;
	size_t files_found, files_missing;
	/* the sample being walked */
	const struct unw_regs *regs;
	const uint8_t *stack;
	size_t stack_len;
	bool read_outside;	/* a memory read fell outside the copy */
	bool zero_pc;		/* the walk reached a zero return address */
	struct unw_frame *frames;
	size_t max, nr;
};

static int find_elf_none(Dwfl_Module *mod, void **userdata, const char *modname,
			 Dwarf_Addr base, char **file_name, Elf **elfp)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)elfp;
	return -1;	/* every module is reported with its file already open */
}

/* No separate debug files: .eh_frame is in the binary, and opening debug
 * files for .debug_frame alone would cost more than it finds. */
static int find_debuginfo_none(Dwfl_Module *mod, void **userdata, const char *modname,
			       Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			       GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = find_elf_none,
	.find_debuginfo = find_debuginfo_none,
};

int unw_space_new(struct symbolizer *s, int pid, struct unw_space **out)
{
	struct unw_space *sp;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	sp->sym = s;
	sp->pid = pid > 0 ? pid : 1;
	sp->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!sp->dwfl) {
		free(sp);
		return -ENOMEM;
	}
	dwfl_report_begin(sp->dwfl);
	*out = sp;
	return 0;
}

void unw_space_free(struct unw_space *sp)
{
	if (!sp)
		return;
	dwfl_end(sp->dwfl);
	free(sp);
}

int unw_space_add(struct unw_space *sp, const struct sym_mapping *m)
{
	GElf_Ehdr eh;
	GElf_Addr bias = 0;
	char *path = NULL;
	Elf *elf;
	int fd, err;

	if (sp->attached)
		return -EBUSY;
	if (!m || !m->path)
		return -EINVAL;
	err = symbolize_open_binary(sp->sym, m, &fd, &path);
	if (err == -ENOMEM)
		return err;
	if (err) {
		sp->files_missing++;
		return 0;
	}
	err = elf_open_fd(fd, &elf);
	if (!err && !gelf_getehdr(elf, &eh))
		err = -EINVAL;
	if (!err && eh.e_type != ET_EXEC)
		err = elf_mapping_bias(elf, m->start, m->len, m->pgoff, &bias);
	elf_end(elf);
	/* On success the module owns fd. Overlapping reports (one file
	 * mapped twice) fail here and are left out. */
	if (err || !dwfl_report_elf(sp->dwfl, m->path, path, fd, bias, true)) {
		close(fd);
		sp->files_missing++;
	} else {
		sp->files_found++;
	}
	free(path);
	return 0;
}

void unw_space_files(const struct unw_space *sp, size_t *found, size_t *missing)
{
	*found = sp->files_found;
	*missing = sp->files_missing;
}

/* ---- the thread libdw walks: one, with the sample's state ---- */

static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	struct unw_space *sp = dwfl_arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = sp;
	return sp->pid;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct unw_space *sp = dwfl_arg;
	uint64_t base = sp->regs->r[UNW_REG_RSP];

	(void)dwfl;
	if (addr < base || sp->stack_len < sizeof(*result) ||
	    addr - base > sp->stack_len - sizeof(*result)) {
		sp->read_outside = true;
		return false;
	}
	memcpy(result, sp->stack + (addr - base), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct unw_space *sp = thread_arg;
	const struct unw_regs *regs = sp->regs;

	for (int i = 0; i < UNW_NR_REGS; i++) {
		Dwarf_Word v = regs->r[i];

		if ((regs->valid & (1u << i)) && !dwfl_thread_state_registers(thread, i, 1, &v))
			return false;
	}
	dwfl_thread_state_register_pc(thread, regs->r[UNW_REG_RIP]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int on_frame(Dwfl_Frame *state, void *arg)
{
	struct unw_space *sp = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	/* A zero return address is how some outermost frames end. */
	if (!pc && sp->nr) {
		sp->zero_pc = true;
		return DWARF_CB_ABORT;
	}
	sp->frames[sp->nr++] = (struct unw_frame){ .pc = pc, .is_return = !activation };
	sp->read_outside = false;	/* only a read of the failing step counts */
	return sp->nr < sp->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Whether libdw has a CFI row (.eh_frame, else .debug_frame) for pc. */
static bool has_cfi(Dwfl_Module *mod, Dwarf_Addr pc)
{
	Dwarf_CFI *cfis[2];
	Dwarf_Addr bias[2];

	cfis[0] = dwfl_module_eh_cfi(mod, &bias[0]);
	cfis[1] = dwfl_module_dwarf_cfi(mod, &bias[1]);
	for (int i = 0; i < 2; i++) {
		Dwarf_Frame *frame = NULL;

		if (cfis[i] && !dwarf_cfi_addrframe(cfis[i], pc - bias[i], &frame)) {
			free(frame);
			return true;
		}
	}
	return false;
}

/*
 * Why the walk ended after frame last. libdw ends a walk with 0 ("no
 * caller") also when it could not read the return address, so the
 * reasons are checked in order: the last pc's file, its CFI row, a read
 * outside the copy, and only then the end of the stack.
 */
static enum unw_stop why_stopped(struct unw_space *sp, int ret, const struct unw_frame *last)
{
	Dwarf_Addr pc = last->pc - (last->is_return ? 1 : 0);
	Dwfl_Module *mod;

	if (sp->zero_pc)
		return UNW_STOP_END;
	if (sp->nr == sp->max && ret == DWARF_CB_ABORT)
		return UNW_STOP_DEPTH;
	mod = dwfl_addrmodule(sp->dwfl, pc);
	if (!mod)
		return UNW_STOP_NO_FILE;
	if (!has_cfi(mod, pc))
		return UNW_STOP_NO_CFI;
	if (sp->read_outside)
		return UNW_STOP_OUTSIDE_STACK;
	return ret == 0 ? UNW_STOP_END : UNW_STOP_NO_CFI;
}

static void attach(struct unw_space *sp)
{
	sp->attached = true;
	dwfl_report_end(sp->dwfl, NULL, NULL);
	/* NULL elf: libdw takes the architecture from a reported module. */
	sp->attach_ok = sp->files_found &&
			dwfl_attach_state(sp->dwfl, NULL, sp->pid, &thread_callbacks, sp);
}

int unw_space_unwind(struct unw_space *sp, const struct unw_regs *regs, const void *stack,
		     size_t stack_len, struct unw_frame *frames, size_t max, size_t *nr,
		     enum unw_stop *stop)
{
	const uint32_t need = (1u << UNW_REG_RIP) | (1u << UNW_REG_RSP);
	int ret;

	*nr = 0;
	if ((regs->valid & need) != need) {
		*stop = UNW_STOP_NO_REGS;
		return 0;
	}
	if (!max) {
		*stop = UNW_STOP_DEPTH;
		return 0;
	}
	if (!sp->attached)
		attach(sp);
	if (!sp->attach_ok) {
		frames[0] = (struct unw_frame){ .pc = regs->r[UNW_REG_RIP] };
		*nr = 1;
		*stop = UNW_STOP_NO_FILE;
		return 0;
	}
	sp->regs = regs;
	sp->stack = stack;
	sp->stack_len = stack ? stack_len : 0;
	sp->frames = frames;
	sp->max = max;
	sp->nr = 0;
	sp->read_outside = false;
	sp->zero_pc = false;
	ret = dwfl_getthread_frames(sp->dwfl, sp->pid, on_frame, sp);
	*nr = sp->nr;
	if (!sp->nr) {
		/* libdw gave not even the first frame: the pc is all there is. */
		frames[0] = (struct unw_frame){ .pc = regs->r[UNW_REG_RIP] };
		*nr = 1;
	}
	*stop = why_stopped(sp, ret, &frames[*nr - 1]);
	sp->regs = NULL;
	sp->stack = NULL;
	sp->frames = NULL;
	return 0;
}
