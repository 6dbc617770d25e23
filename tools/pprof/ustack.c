// SPDX-License-Identifier: MIT
/*
 * ustack.c - DWARF-mode samples: pack their user registers and stack when
 * they are read, unwind them in time order (ustack.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <asm/perf_regs.h>

#include "ustack.h"

/* perf's x86_64 register bit (uapi asm/perf_regs.h) of each DWARF register. */
static const uint8_t perf_bit_of_dwarf[UNW_NR_REGS] = {
	[UNW_REG_RAX] = PERF_REG_X86_AX, [UNW_REG_RDX] = PERF_REG_X86_DX,
	[UNW_REG_RCX] = PERF_REG_X86_CX, [UNW_REG_RBX] = PERF_REG_X86_BX,
	[UNW_REG_RSI] = PERF_REG_X86_SI, [UNW_REG_RDI] = PERF_REG_X86_DI,
	[UNW_REG_RBP] = PERF_REG_X86_BP, [UNW_REG_RSP] = PERF_REG_X86_SP,
	[UNW_REG_R8] = PERF_REG_X86_R8, [UNW_REG_R9] = PERF_REG_X86_R9,
	[UNW_REG_R10] = PERF_REG_X86_R10, [UNW_REG_R11] = PERF_REG_X86_R11,
	[UNW_REG_R12] = PERF_REG_X86_R12, [UNW_REG_R13] = PERF_REG_X86_R13,
	[UNW_REG_R14] = PERF_REG_X86_R14, [UNW_REG_R15] = PERF_REG_X86_R15,
	[UNW_REG_RIP] = PERF_REG_X86_IP,
};

void pp_ustack_regs(uint64_t mask, const uint64_t *regs, uint64_t nr, struct unw_regs *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < UNW_NR_REGS; i++) {
		unsigned int bit = perf_bit_of_dwarf[i];
		uint64_t idx;

		if (!(mask & (1ULL << bit)))
			continue;
		/* Its place among the recorded registers: the set bits below it. */
		idx = (uint64_t)__builtin_popcountll(mask & ((1ULL << bit) - 1));
		if (idx >= nr)
			continue;
		out->r[i] = regs[idx];
		out->valid |= 1u << i;
	}
}

size_t pp_ustack_size(const struct perf_event_attr *attr, const struct perfdata_sample *s,
		      size_t room, bool *cut)
{
	const uint64_t need = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	uint64_t stack;

	*cut = false;
	if ((attr->sample_type & need) != need || s->regs_abi != PERF_SAMPLE_REGS_ABI_64 ||
	    !s->nr_regs || !s->stack || !s->stack_dyn_size || room < sizeof(struct unw_regs) + 8)
		return 0;
	/* dyn_size <= size was checked by the decoder; never trust it more. */
	stack = s->stack_dyn_size < s->stack_size ? s->stack_dyn_size : s->stack_size;
	if (stack > room - sizeof(struct unw_regs)) {
		stack = room - sizeof(struct unw_regs);
		*cut = true;
	}
	stack &= ~(uint64_t)7;
	return stack ? sizeof(struct unw_regs) + stack : 0;
}

void pp_ustack_pack(const struct perf_event_attr *attr, const struct perfdata_sample *s,
		    void *dst, size_t len)
{
	struct unw_regs regs;

	pp_ustack_regs(attr->sample_regs_user, s->regs, s->nr_regs, &regs);
	memcpy(dst, &regs, sizeof(regs));
	memcpy((uint8_t *)dst + sizeof(regs), s->stack, len - sizeof(regs));
}

/* ---- unwinding spaces, one per pid ---- */

struct uspace {
	uint32_t pid, generation;
	uint64_t used;			/* LRU clock */
	struct unw_space *sp;
};

struct pp_ustack {
	struct symbolizer *sym;
	const struct pp_aspace *as;
	struct uspace spaces[PP_USTACK_SPACES];
	size_t nr;
	uint64_t clock;
	struct unw_frame frames[PP_USTACK_MAX_FRAMES];
	uint64_t *out;			/* the unwound csample */
	size_t out_cap;			/* in u64 */
};

int pp_ustack_new(struct symbolizer *sym, const struct pp_aspace *as, struct pp_ustack **out)
{
	struct pp_ustack *u = calloc(1, sizeof(*u));

	if (!u)
		return -ENOMEM;
	u->sym = sym;
	u->as = as;
	*out = u;
	return 0;
}

void pp_ustack_free(struct pp_ustack *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nr; i++)
		unw_space_free(u->spaces[i].sp);
	free(u->out);
	free(u);
}

/* Report every file mapping pid has now; *missing: those without a file. */
static int fill_space(struct pp_ustack *u, struct unw_space *sp, uint32_t pid, size_t *missing)
{
	size_t n = pp_aspace_count(u->as, pid), found;
	uint32_t prev = UINT32_MAX;

	for (size_t i = 0; i < n; i++) {
		struct sym_mapping m;
		uint64_t start, end;
		uint32_t cm;
		int err;

		if (pp_aspace_at(u->as, pid, i, &start, &end, &cm) || cm == prev)
			continue;
		prev = cm;
		if (pp_aspace_mapping(u->as, cm)->kind != PP_MAPPING_FILE)
			continue;
		pp_aspace_sym_mapping(u->as, cm, &m);
		err = unw_space_add(sp, &m);
		if (err == -ENOMEM)
			return err;
	}
	unw_space_files(sp, &found, missing);
	return 0;
}

/* The space of pid as its maps are now: cached, else built (evicting the
 * least recently used one when full; *missing then counts its mappings
 * without a file). */
static int space_of(struct pp_ustack *u, uint32_t pid, struct unw_space **out, size_t *missing)
{
	uint32_t gen = pp_aspace_generation(u->as, pid);
	struct uspace *slot = NULL;
	int err;

	*missing = 0;
	for (size_t i = 0; i < u->nr; i++) {
		if (u->spaces[i].pid != pid)
			continue;
		slot = &u->spaces[i];
		if (slot->generation == gen) {
			slot->used = ++u->clock;
			*out = slot->sp;
			return 0;
		}
		break;		/* its maps changed: rebuild in place */
	}
	if (!slot && u->nr < PP_USTACK_SPACES)
		slot = &u->spaces[u->nr++];
	if (!slot) {
		slot = &u->spaces[0];
		for (size_t i = 1; i < u->nr; i++)
			if (u->spaces[i].used < slot->used)
				slot = &u->spaces[i];
	}
	unw_space_free(slot->sp);
	*slot = (struct uspace){ .pid = pid, .generation = gen, .used = ++u->clock };
	err = unw_space_new(u->sym, (int)pid, &slot->sp);
	if (!err)
		err = fill_space(u, slot->sp, pid, missing);
	if (err) {
		unw_space_free(slot->sp);
		*slot = u->spaces[--u->nr];
		return err;
	}
	*out = slot->sp;
	return 0;
}

int pp_ustack_unwind(struct pp_ustack *u, const struct csample *s, const struct csample **out,
		     struct pp_ustack_walk *walk)
{
	const uint64_t *ips = csample_ips(s);
	const uint8_t *packed = (const uint8_t *)s + csample_ustack_offset(s->nr_ips, s->raw_size);
	struct unw_regs regs;
	struct unw_space *sp;
	size_t nk = 0, nr = 0, n, words, at;
	struct csample *o;
	int err;

	memset(walk, 0, sizeof(*walk));
	memcpy(&regs, packed, sizeof(regs));
	err = space_of(u, s->pid, &sp, &walk->files_missing);
	if (err)
		return err;
	err = unw_space_unwind(sp, &regs, packed + sizeof(regs), s->ustack_len - sizeof(regs),
			       u->frames, PP_USTACK_MAX_FRAMES, &nr, &walk->stop);
	if (err)
		return err;
	walk->frames = nr;

	/* The kernel part: the callchain up to its user context, if any. */
	while (nk < s->nr_ips && ips[nk] != PERF_CONTEXT_USER)
		nk++;
	/* kernel part (+ a marker and ip when the chain is empty), a marker,
	 * frames with a marker before each one that is not a return address */
	n = nk + 2 + 1 + 2 * nr;
	words = (sizeof(*o) + n * 8 + s->raw_size + 7) / 8;
	if (words > u->out_cap) {
		uint64_t *b = realloc(u->out, words * 8);

		if (!b)
			return -ENOMEM;
		u->out = b;
		u->out_cap = words;
	}
	o = (struct csample *)u->out;
	*o = *s;
	o->flags &= ~CSAMPLE_HAS_USTACK;
	o->ustack_len = 0;
	uint64_t *oi = (uint64_t *)(o + 1);

	memcpy(oi, ips, nk * 8);
	at = nk;
	if (!s->nr_ips && (s->h.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL) {
		oi[at++] = PERF_CONTEXT_KERNEL;
		oi[at++] = s->ip;
	}
	oi[at++] = PERF_CONTEXT_USER;
	for (size_t i = 0; i < nr; i++) {
		if (i && !u->frames[i].is_return)
			oi[at++] = PERF_CONTEXT_USER;
		oi[at++] = u->frames[i].pc;
	}
	o->nr_ips = at;
	if (s->raw_size)
		memcpy((uint8_t *)(oi + at), csample_raw(s), s->raw_size);
	o->h.size = (uint16_t)perfdata_align8(sizeof(*o) + at * 8 + s->raw_size);
	*out = o;
	return 0;
}
