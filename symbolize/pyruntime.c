// SPDX-License-Identifier: MIT
/* pyruntime.c - CPython runtimes in ELF files (pyruntime.h). */
#include <errno.h>
#include <string.h>

#include "symbolize/pyruntime.h"

/* The dynamic symbols that tell a CPython runtime and its version. */
enum py_sym {
	SYM_RUNTIME,		/* _PyRuntime: 3.7+ */
	SYM_VERSION,		/* Py_Version: 3.11+ */
	SYM_CODE_TYPE,
	SYM_BYTES_MAIN,		/* added in 3.8 */
	SYM_FRAME_GET_CODE,	/* 3.9 */
	SYM_NEW_REF,		/* 3.10 */
	SYM_TRACE_REFS,		/* only in builds with Py_TRACE_REFS */
	SYM_NR,
};

static const char *const sym_names[SYM_NR] = {
	[SYM_RUNTIME] = "_PyRuntime",
	[SYM_VERSION] = "Py_Version",
	[SYM_CODE_TYPE] = "PyCode_Type",
	[SYM_BYTES_MAIN] = "Py_BytesMain",
	[SYM_FRAME_GET_CODE] = "PyFrame_GetCode",
	[SYM_NEW_REF] = "Py_NewRef",
	[SYM_TRACE_REFS] = "_Py_PrintReferences",
};

struct py_syms {
	GElf_Sym sym[SYM_NR];
	bool found[SYM_NR];
};

/* The first definition of each name, as the dynamic linker would bind it. */
static int match_sym(const GElf_Sym *sym, const char *name, void *ctx)
{
	struct py_syms *s = ctx;

	for (int i = 0; i < SYM_NR; i++) {
		if (!s->found[i] && !strcmp(name, sym_names[i])) {
			s->sym[i] = *sym;
			s->found[i] = true;
		}
	}
	return 0;
}

static bool is_object(const struct py_syms *s, enum py_sym i, uint64_t min_size)
{
	return s->found[i] && GELF_ST_TYPE(s->sym[i].st_info) == STT_OBJECT &&
	       s->sym[i].st_size >= min_size;
}

/* 3.11+: the version is the file's constant Py_Version. */
static int version_of_constant(Elf *elf, const struct py_syms *s, struct py_runtime_info *out)
{
	uint32_t hex;
	int err;

	/* An unsigned long: its low 4 bytes come first (x86-64 only, see detect()). */
	if (!is_object(s, SYM_VERSION, sizeof(hex)))
		return -EINVAL;
	err = elf_read_addr(elf, s->sym[SYM_VERSION].st_value, &hex, sizeof(hex));
	if (err)
		return -EINVAL;
	out->hexversion = hex;
	out->major = hex >> 24;
	out->minor = hex >> 16 & 0xff;
	out->micro = hex >> 8 & 0xff;
	out->micro_known = true;
	/* Py_Version came with 3.11, after every function below. */
	if (out->major != 3 || out->minor < 11 || !s->found[SYM_NEW_REF] ||
	    !s->found[SYM_FRAME_GET_CODE] || !s->found[SYM_BYTES_MAIN])
		return -EINVAL;
	return 0;
}

/* 3.7 to 3.10: the newest of the functions each release added. */
static int version_of_api(const struct py_syms *s, struct py_runtime_info *out)
{
	out->major = 3;
	out->minor = s->found[SYM_NEW_REF] ? 10 : s->found[SYM_FRAME_GET_CODE] ? 9 :
		     s->found[SYM_BYTES_MAIN] ? 8 : 7;
	/* Each release kept the functions of the ones before. */
	if ((s->found[SYM_NEW_REF] && !s->found[SYM_FRAME_GET_CODE]) ||
	    (s->found[SYM_FRAME_GET_CODE] && !s->found[SYM_BYTES_MAIN]))
		return -EINVAL;
	return 0;
}

int py_runtime_detect(Elf *elf, struct py_runtime_info *out)
{
	struct py_syms s = { 0 };
	GElf_Ehdr eh;
	int err;

	memset(out, 0, sizeof(*out));
	elf_for_each_symbol(elf, SHT_DYNSYM, match_sym, &s);
	if (!is_object(&s, SYM_RUNTIME, 1))
		return -ENOENT;
	out->runtime_addr = s.sym[SYM_RUNTIME].st_value;
	out->runtime_size = s.sym[SYM_RUNTIME].st_size;
	if (is_object(&s, SYM_CODE_TYPE, 1))
		out->code_type_addr = s.sym[SYM_CODE_TYPE].st_value;
	/* The layouts are x86-64's, and so is the reading of Py_Version. */
	if (!gelf_getehdr(elf, &eh))
		return -EINVAL;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64)
		return -EOPNOTSUPP;
	err = s.found[SYM_VERSION] ? version_of_constant(elf, &s, out) : version_of_api(&s, out);
	if (err)
		return err;
	if (!py_layout_table(out->major, out->minor) || s.found[SYM_TRACE_REFS])
		return -EOPNOTSUPP;
	return 0;
}

int py_runtime_layout(Elf *elf, const struct py_runtime_info *rt, struct py_layout *out)
{
	const struct py_layout *table = py_layout_table(rt->major, rt->minor);
	unsigned char buf[PY_DEBUG_OFFSETS_313_SIZE];
	struct py_layout l;
	int err;

	if (!table)
		return -EOPNOTSUPP;
	if (rt->major == 3 && rt->minor == 13) {
		/* Initialized data: the block is in the file as the process starts with it. */
		err = elf_read_addr(elf, rt->runtime_addr, buf, sizeof(buf));
		if (!err)
			err = py_layout_from_debug_offsets(buf, sizeof(buf), rt->hexversion,
							   rt->runtime_size, &l);
		if (err)
			return err;
	} else {
		l = *table;
	}
	/* The walk starts inside _PyRuntime: a smaller one is not what the layout describes. */
	if (l.runtime_interpreters_head > rt->runtime_size ||
	    rt->runtime_size - l.runtime_interpreters_head < 8)
		return -EINVAL;
	*out = l;
	return 0;
}
