// SPDX-License-Identifier: MIT
/* unwind_tables.c - tables in the row store, refcounted by process (unwind_tables.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "recorder/unwind_tables.h"
#include "symbolize/buildid.h"
#include "symbolize/cache.h"
#include "symbolize/cfitable.h"
#include "symbolize/procmaps.h"
#include "symbolize/safeopen.h"
#include "symbolize/vdso.h"
#include "tools/lib/array.h"
#include "tools/lib/clock.h"
#include "tools/lib/hash.h"
#include "tools/lib/sorted.h"

/* What a table is filed under: a build-id, or the file's identity when it has none. */
enum { KEY_BUILD_ID = 'B', KEY_FILE = 'F' };

struct file_identity {
	uint32_t maj, min;
	uint64_t ino, size;
	int64_t mtime_sec, mtime_nsec;
};

struct table_key {
	uint8_t len;
	uint8_t bytes[1 + sizeof(struct file_identity)];
};
_Static_assert(BUILDID_MAX <= sizeof(struct file_identity), "a build-id fits the key");

/* Keys remembered by file identity (file_key()); past it they are all forgotten. */
#define KEYS_MAX 4096
/* Maps lines remembered with their file's key (known_add()); past it they are all forgotten. */
#define KNOWN_MAX 4096

/*
 * A file as a maps line names it (device, inode, path), with the key of
 * the table it was found to have when it was last opened (at verified_ns).
 */
struct known_file {
	struct table_key key;
	uint64_t verified_ns;
};

/* The table of one file, in the store or not, used or cached. */
struct table {
	struct cache_entry *entry;	/* in unwind_tables.tables; value = this */
	/*
	 * Segments (for biases), never rows: they went straight into the
	 * store (build_into()). NULL for a file without usable CFI. A table
	 * that did not fit is not placed and nr_rows remembers its size: it
	 * is built again when room comes.
	 */
	struct cfi_table *cfi;
	uint32_t nr_rows;
	uint32_t refs;			/* processes holding it */
	bool placed;			/* in the store at [first, first + nr_rows) */
	uint32_t first;
	size_t slot;			/* while placed: its index in unwind_tables.placed */
	uint64_t mark;			/* the set_proc call that last took it */
	struct table *prev, *next;	/* in the LRU list while refs == 0 */
	size_t bytes;			/* user memory it takes */
};

/* The tables one process holds, each once. */
struct proc {
	struct table **held;
	uint32_t nr_held;
	uint64_t entry_hash;	/* of the struct unwind_proc written for it */
};

/* A free range of the store. */
struct range {
	uint32_t first, nr;
};

struct unwind_tables {
	char *proc_root;
	size_t max_procs, cache_bytes;
	const struct unwind_store_ops *ops;
	void *ctx;

	struct cache tables;	/* key -> struct table */
	struct cache keys;	/* file identity -> its struct table_key (file_key()) */
	struct cache known;	/* maps line (dev, ino, path) -> struct known_file */
	uint64_t trust_ns;	/* how long a known file is taken on its maps line alone */
	uint64_t seed;		/* of the hashes of the entries written (struct proc) */
	struct cache procs;	/* pid -> struct proc */
	/*
	 * Our vDSO image (vdso_open_self()), made at the first [vdso] mapping
	 * and kept: every 64-bit process maps one, and making it reads our own
	 * /proc/self/maps, which was most of what a new process cost a
	 * system-wide recording once its files' tables were cached. -1: not yet.
	 */
	int vdso_fd;

	struct range *free;	/* sorted by first, never adjacent (coalesced) */
	size_t nr_free, cap_free;
	size_t nr_placed;
	struct table **placed;	/* the nr_placed tables in the store, any order */
	size_t cap_placed;

	struct table lru;	/* list head: most recently released first */
	uint64_t cached_bytes;
	size_t nr_cached;
	size_t nr_parked;	/* cached tables still in the store */
	uint64_t rows_parked;

	uint64_t gen;			/* set_proc calls so far */
	struct unwind_proc *entry;	/* the entry being written (16 KiB: not on the stack) */
	struct unwind_tables_stats st;
};

/* ---- the store: free ranges, coalesced on free ---------------------------- */

/* Room for one more free range than a placement can leave, taken before it. */
static int reserve_ranges(struct unwind_tables *t)
{
	size_t need = t->nr_placed + 2, cap;
	struct range *r;

	/* Placed tables split the free space into at most nr_placed + 1 ranges. */
	if (t->cap_free >= need)
		return 0;
	cap = need * 2;
	r = realloc(t->free, cap * sizeof(*r));
	if (!r)
		return -ENOMEM;
	t->free = r;
	t->cap_free = cap;
	return 0;
}

/* The first free range that holds nr rows, or -1. */
static ssize_t find_fit(const struct unwind_tables *t, uint32_t nr)
{
	for (size_t i = 0; i < t->nr_free; i++)
		if (t->free[i].nr >= nr)
			return (ssize_t)i;
	return -1;
}

static void remove_range(struct unwind_tables *t, size_t i)
{
	memmove(&t->free[i], &t->free[i + 1], (t->nr_free - i - 1) * sizeof(*t->free));
	t->nr_free--;
}

/* Take nr rows from free range i (it holds them): from its start. */
static uint32_t take_rows(struct unwind_tables *t, size_t i, uint32_t nr)
{
	uint32_t first = t->free[i].first;

	t->free[i].first += nr;
	t->free[i].nr -= nr;
	if (!t->free[i].nr)
		remove_range(t, i);
	t->st.rows_used += nr;
	return first;
}

/* Give [first, first + nr) back, merged with the free ranges it touches. */
static void give_rows(struct unwind_tables *t, uint32_t first, uint32_t nr)
{
	/* Index of the first free range after it: the one before starts below it. */
	size_t pos = SORTED_COUNT_LE(t->free, t->nr_free, first, first);
	bool join_prev = pos > 0 && t->free[pos - 1].first + t->free[pos - 1].nr == first;
	bool join_next = pos < t->nr_free && first + nr == t->free[pos].first;

	t->st.rows_used -= nr;
	if (join_prev && join_next) {
		t->free[pos - 1].nr += nr + t->free[pos].nr;
		remove_range(t, pos);
	} else if (join_prev) {
		t->free[pos - 1].nr += nr;
	} else if (join_next) {
		t->free[pos].first = first;
		t->free[pos].nr += nr;
	} else {
		/* reserve_ranges() made room before the placement that this undoes. */
		memmove(&t->free[pos + 1], &t->free[pos], (t->nr_free - pos) * sizeof(*t->free));
		t->free[pos] = (struct range){ first, nr };
		t->nr_free++;
	}
}

/* ---- tables --------------------------------------------------------------- */

/* What cfi_table_build_fd() says about a file rather than about us: no usable CFI. */
static bool is_no_cfi(int err)
{
	return err == -ENOENT || err == -E2BIG || err == -EINVAL;
}

static size_t table_bytes(const struct table *tb)
{
	size_t n = sizeof(*tb) + sizeof(*tb->entry) + tb->entry->key_len;

	if (tb->cfi)
		n += sizeof(*tb->cfi) + tb->cfi->nr_segs * sizeof(*tb->cfi->segs);
	return n;
}

static void lru_unlink(struct table *tb)
{
	tb->prev->next = tb->next;
	tb->next->prev = tb->prev;
	tb->prev = tb->next = NULL;
}

static void table_destroy(struct unwind_tables *t, struct table *tb)
{
	cache_del(&t->tables, tb->entry);
	cfi_table_free(tb->cfi);
	free(tb);
}

/* Take placed table tb out of the store: its range is free again. */
static void unplace(struct unwind_tables *t, struct table *tb)
{
	give_rows(t, tb->first, tb->nr_rows);
	tb->placed = false;
	t->nr_placed--;
	t->placed[tb->slot] = t->placed[t->nr_placed];
	t->placed[tb->slot]->slot = tb->slot;
}

/* Cached table tb leaves the cache: to be held again, or to go. */
static void lru_take(struct unwind_tables *t, struct table *tb)
{
	lru_unlink(tb);
	t->cached_bytes -= tb->bytes;
	t->nr_cached--;
	if (tb->placed) {
		t->nr_parked--;
		t->rows_parked -= tb->nr_rows;
	}
}

/* Cached table tb goes for good (out of the store if it was parked there). */
static void uncache(struct unwind_tables *t, struct table *tb)
{
	lru_take(t, tb);
	if (tb->placed)
		unplace(t, tb);
	table_destroy(t, tb);
}

/* Cached tables beyond cache_bytes go, least recently used first. */
static void evict(struct unwind_tables *t)
{
	while (t->cached_bytes > t->cache_bytes && t->lru.prev != &t->lru)
		uncache(t, t->lru.prev);
}

/*
 * Parked tables go, least recently used first, until nr rows fit in a
 * free range or none is left: the store's room is for the tables in use.
 */
static void make_room(struct unwind_tables *t, uint32_t nr)
{
	struct table *tb = t->lru.prev;

	while (find_fit(t, nr) < 0 && t->nr_parked) {
		struct table *prev = tb->prev;

		if (tb->placed)
			uncache(t, tb);
		tb = prev;
	}
}

/* One process more holds tb: a parked table is a cache hit that costs nothing. */
static void table_get(struct unwind_tables *t, struct table *tb)
{
	if (!tb->refs++ && tb->prev) {
		if (tb->placed)
			t->st.cache_hits++;
		lru_take(t, tb);
	}
}

/*
 * One process less: the last one leaves it to the cache, parked where it
 * is in the store. The store is the only copy of its rows (a second one in
 * user memory was most of the recorder's memory system-wide) and its room
 * is allocated whole anyway: a table that a process maps again needs no
 * copy, and a parked table leaves the store only when a table in use
 * needs the room (make_room()) or the cache's bound is reached.
 */
static void table_put(struct unwind_tables *t, struct table *tb)
{
	if (--tb->refs)
		return;
	if (tb->placed) {
		t->nr_parked++;
		t->rows_parked += tb->nr_rows;
	}
	tb->bytes = table_bytes(tb);
	tb->next = t->lru.next;
	tb->prev = &t->lru;
	t->lru.next->prev = tb;
	t->lru.next = tb;
	t->cached_bytes += tb->bytes;
	t->nr_cached++;
	evict(t);
}

/* Where a build's rows go: free rows [first, first + cap) of the store, from the start. */
struct build_sink {
	struct unwind_tables *t;
	uint32_t first, cap, written;
	bool overflow;		/* more rows came than cap: the rest only counted */
	int err;		/* the store's */
};

static int sink_rows(void *ctx, const struct unwind_row *rows, uint32_t nr)
{
	struct build_sink *s = ctx;

	if (s->overflow || nr > s->cap - s->written) {
		s->overflow = true;
		return 0;	/* the build goes on, for the table's size */
	}
	s->err = s->t->ops->write_rows(s->t->ctx, s->first + s->written, rows, nr);
	if (s->err)
		return -ECANCELED;
	s->written += nr;
	return 0;
}

/* Room to place one more table, taken before its rows go to the store. */
static int reserve_place(struct unwind_tables *t)
{
	int err = reserve_ranges(t);

	if (!err && ARRAY_RESERVE(t->placed, t->cap_placed, t->nr_placed + 1, 16))
		err = -ENOMEM;
	return err;
}

/*
 * Build tb's table from fd, its rows going straight into free range i of
 * the store as they are made (i -1: nowhere, only counted): a table is
 * never whole in user memory (cc1's would be 3.8 MB). The range is not
 * named by any process entry, so nothing reads it meanwhile. When all the
 * rows fit, tb is placed at the start of range i; else it stays out and
 * nr_rows is its size. reserve_place() first. 0, a cfi_table_build_fd_opts()
 * error about the file (tb unchanged), or -errno from the store or the
 * allocator.
 */
static int build_into(struct unwind_tables *t, struct table *tb, int fd, ssize_t i)
{
	struct build_sink sink = { .t = t };
	struct cfi_table_build_opts opts = { .sz = sizeof(opts), .emit = sink_rows, .ctx = &sink };
	uint64_t start = mono_ns();
	struct cfi_table *cfi;
	int err;

	if (i >= 0) {
		sink.first = t->free[i].first;
		sink.cap = t->free[i].nr;
	}
	err = cfi_table_build_fd_opts(fd, &opts, &cfi);
	t->st.build_ns += mono_ns() - start;
	if (sink.err)
		return sink.err;
	if (err)
		return err;
	t->st.files_built++;
	t->st.builds_over += sink.overflow;
	cfi_table_free(tb->cfi);
	tb->cfi = cfi;
	tb->nr_rows = (uint32_t)cfi->nr;
	if (sink.overflow || !tb->nr_rows)
		return 0;
	tb->first = take_rows(t, (size_t)i, tb->nr_rows);
	tb->placed = true;
	tb->slot = t->nr_placed;
	t->placed[t->nr_placed++] = tb;
	return 0;
}

/* The largest free range of the store, or -1 when it is full. */
static ssize_t largest_free(const struct unwind_tables *t)
{
	ssize_t best = -1;

	for (size_t i = 0; i < t->nr_free; i++)
		if (best < 0 || t->free[i].nr > t->free[(size_t)best].nr)
			best = (ssize_t)i;
	return best;
}

/*
 * Put tb (a table with CFI, held) in the store if it is not there: one
 * that did not fit when it was built is built again from fd, straight
 * into a range that holds it, once parked tables have made room (fd -1:
 * no file at hand, it stays out). 0 (placed, or no room) or -errno from
 * the store or the allocator.
 */
static int table_place(struct unwind_tables *t, struct table *tb, int fd)
{
	ssize_t i;
	int err;

	if (tb->placed || !tb->nr_rows || fd < 0)
		return 0;
	make_room(t, tb->nr_rows);
	i = find_fit(t, tb->nr_rows);
	if (i < 0)
		return 0;
	err = reserve_place(t);
	if (err)
		return err;
	err = build_into(t, tb, fd, i);
	/* The file no longer builds: it stays without a table. */
	return err && is_no_cfi(err) ? 0 : err;
}

/* The key of the open file fd (mapped as e, st its fstat): its build-id, or its identity. */
static void read_file_key(int fd, const struct procmaps_entry *e, const struct stat *st,
			  struct table_key *k)
{
	struct file_identity id = { .maj = e->maj, .min = e->min, .ino = e->ino };
	size_t size;

	if (!buildid_read_fd(fd, k->bytes + 1, &size) && size > 0 && size <= BUILDID_MAX) {
		k->bytes[0] = KEY_BUILD_ID;
		k->len = (uint8_t)(1 + size);
		return;
	}
	/* An inode can be rewritten in place: its size and mtime tell the versions apart. */
	id.size = (uint64_t)st->st_size;
	id.mtime_sec = st->st_mtim.tv_sec;
	id.mtime_nsec = st->st_mtim.tv_nsec;
	k->bytes[0] = KEY_FILE;
	memcpy(k->bytes + 1, &id, sizeof(id));
	k->len = (uint8_t)(1 + sizeof(id));
}

/*
 * read_file_key(), remembered by what the open file is (its device, inode,
 * size and mtime, the identity a file without a build-id is keyed by
 * anyway): every process mapping libc again does not have it parsed again
 * (an ELF mapping and its notes read, per mapping of every new process).
 */
static int file_key(struct unwind_tables *t, int fd, const struct procmaps_entry *e,
		    struct table_key *k)
{
	struct file_identity id;
	struct cache_entry *ce;
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	memset(&id, 0, sizeof(id));	/* hashed as bytes */
	id.maj = major(st.st_dev);
	id.min = minor(st.st_dev);
	id.ino = st.st_ino;
	id.size = (uint64_t)st.st_size;
	id.mtime_sec = st.st_mtim.tv_sec;
	id.mtime_nsec = st.st_mtim.tv_nsec;
	ce = cache_get(&t->keys, &id, sizeof(id));
	if (ce) {
		*k = *(const struct table_key *)ce->value;
		return 0;
	}
	read_file_key(fd, e, &st, k);
	if (t->keys.nr >= KEYS_MAX)
		cache_clear(&t->keys, free);
	ce = cache_add(&t->keys, &id, sizeof(id));
	if (ce && !(ce->value = malloc(sizeof(*k))))
		cache_del(&t->keys, ce);
	else if (ce)
		memcpy(ce->value, k, sizeof(*k));
	return 0;	/* not remembered when out of memory: still right */
}

/*
 * The table of the open file fd (mapped as e) as the manager knows it, or
 * built now (*fresh) and filed, not held by anyone yet. 0 with *out (NULL
 * when the file could not be read: counted), or -errno (memory).
 */
static int table_find_or_build(struct unwind_tables *t, int fd, const struct procmaps_entry *e,
			       struct table **out, bool *fresh)
{
	struct table_key key;
	struct cache_entry *ce;
	struct table *tb;
	int err;

	*out = NULL;
	*fresh = false;
	if (file_key(t, fd, e, &key)) {
		t->st.files_failed++;
		return 0;
	}
	ce = cache_get(&t->tables, key.bytes, key.len);
	if (ce) {
		*out = ce->value;
		return 0;
	}
	tb = calloc(1, sizeof(*tb));
	ce = tb ? cache_add(&t->tables, key.bytes, key.len) : NULL;
	if (!ce) {
		free(tb);
		return -ENOMEM;
	}
	ce->value = tb;
	tb->entry = ce;
	/*
	 * Its rows go where the most room is; a table bigger than that is
	 * placed (built again) by table_place(), once parked tables made room.
	 */
	err = reserve_place(t);
	if (!err)
		err = build_into(t, tb, fd, largest_free(t));
	if (err && !is_no_cfi(err)) {
		table_destroy(t, tb);
		return err;	/* ours (-ENOMEM, the store): nothing to remember about the file */
	}
	if (err)
		t->st.files_no_cfi++;
	*fresh = true;
	*out = tb;
	return 0;
}

int unwind_tables_warm(struct unwind_tables *t, int fd)
{
	struct procmaps_entry e = { .path = "" };
	struct table *tb;
	struct stat st;
	bool fresh;
	int err;

	if (fstat(fd, &st))
		return -errno;
	e.maj = major(st.st_dev);
	e.min = minor(st.st_dev);
	e.ino = st.st_ino;
	err = table_find_or_build(t, fd, &e, &tb, &fresh);
	if (err || !tb || !fresh)
		return err;
	/* Taken and let go at once: it waits in the cache for the first process that maps it. */
	table_get(t, tb);
	table_put(t, tb);
	return 0;
}

/*
 * The key of t->known for e's maps line: (maj, min, ino) then the path.
 * 0 when the path is too long to remember.
 */
static size_t known_key(const struct procmaps_entry *e, unsigned char *buf, size_t cap)
{
	uint64_t id[2] = { (uint64_t)e->maj << 32 | e->min, e->ino };
	size_t len = strlen(e->path);

	if (sizeof(id) + len > cap)
		return 0;
	memcpy(buf, id, sizeof(id));
	memcpy(buf + sizeof(id), e->path, len);
	return sizeof(id) + len;
}

/*
 * The table of the file e names, when its maps line was seen less than
 * trust_ns ago with a file opened and checked and that table is at hand
 * (not evicted, and not one whose rows must be built again from the
 * file): then the file is not opened for this process. NULL otherwise.
 */
static struct table *known_table(struct unwind_tables *t, const struct procmaps_entry *e,
				 uint64_t now)
{
	unsigned char buf[16 + PATH_MAX];
	size_t len = known_key(e, buf, sizeof(buf));
	struct cache_entry *ce = len ? cache_get(&t->known, buf, len) : NULL;
	const struct known_file *kf;
	struct table *tb;

	if (!ce)
		return NULL;
	kf = ce->value;
	if (now - kf->verified_ns >= t->trust_ns)
		return NULL;
	ce = cache_get(&t->tables, kf->key.bytes, kf->key.len);
	if (!ce)
		return NULL;
	tb = ce->value;
	if (tb->cfi && !tb->placed && tb->nr_rows)
		return NULL;	/* it did not fit: rebuilt from the file when room came */
	return tb;
}

/* e's maps line names the file of table tb, as found (opened and checked) at now. */
static void known_add(struct unwind_tables *t, const struct procmaps_entry *e,
		      const struct table *tb, uint64_t now)
{
	unsigned char buf[16 + PATH_MAX];
	size_t len = known_key(e, buf, sizeof(buf));
	struct cache_entry *ce;
	struct known_file *kf;

	if (!len)
		return;
	ce = cache_get(&t->known, buf, len);
	if (!ce) {
		if (t->known.nr >= KNOWN_MAX)
			cache_clear(&t->known, free);
		kf = malloc(sizeof(*kf));
		ce = kf ? cache_add(&t->known, buf, len) : NULL;
		if (!ce) {
			free(kf);
			return;	/* not remembered: opened again next time, still right */
		}
		ce->value = kf;
	}
	kf = ce->value;
	kf->key.len = (uint8_t)tb->entry->key_len;
	memcpy(kf->key.bytes, tb->entry->key, tb->entry->key_len);
	kf->verified_ns = now;
}

/*
 * The file of e opened as safeopen_mapped() does for pid, or our vDSO
 * image for "[vdso]" (no file, but the kernel maps one image into every
 * 64-bit process: ours, keyed by its build-id like any file; a mapping of
 * another size is not that image, a 32-bit vDSO). 0 with *fd or -errno.
 */
static int open_mapped(struct unwind_tables *t, uint32_t pid, const struct procmaps_entry *e,
		       int *fd)
{
	struct stat st;
	int err;

	if (strcmp(e->path, "[vdso]")) {
		err = safeopen_mapped(t->proc_root, pid, e->start, e->end, e->path, e->maj, e->min,
				      e->ino, fd, NULL);
		t->st.files_opened += !err;
		return err;
	}
	err = t->vdso_fd < 0 ? vdso_open_self(&t->vdso_fd) : 0;
	if (err)
		return err;
	/* A descriptor of its own, closed as any file's: the image's offset is never used. */
	*fd = fcntl(t->vdso_fd, F_DUPFD_CLOEXEC, 0);
	if (*fd < 0)
		return -errno;
	if (fstat(*fd, &st) || (uint64_t)st.st_size > e->end - e->start) {
		close(*fd);
		return -ESTALE;
	}
	return 0;
}

/*
 * The table of the file that pid maps at e, found or built, in the store if
 * it fits. 0 with *out (NULL: no table, counted) or -errno (store, memory).
 * *taken: the table was not yet held by this set_proc call and now is
 * (the caller puts it with the process's tables).
 */
static int table_for(struct unwind_tables *t, uint32_t pid, const struct procmaps_entry *e,
		     struct table **out, bool *taken)
{
	bool fresh = false, is_file = strcmp(e->path, "[vdso]");
	uint64_t now = mono_ns();
	struct table *tb;
	int fd = -1, err = 0;

	*out = NULL;
	*taken = false;
	if (is_file && (e->path[0] != '/' || !strcmp(e->path, PROCMAPS_ANON_NAME)))
		return 0;	/* "//anon" (JIT): no file to read */
	tb = is_file ? known_table(t, e, now) : NULL;
	if (tb) {
		t->st.files_known++;
	} else {
		err = open_mapped(t, pid, e, &fd);
		if (err) {
			t->st.files_failed++;
			return 0;
		}
		err = table_find_or_build(t, fd, e, &tb, &fresh);
		if (err || !tb)
			goto out;
		if (is_file)
			known_add(t, e, tb, now);
	}
	if (tb->mark != t->gen) {
		table_get(t, tb);
		err = tb->cfi ? table_place(t, tb, fd) : 0;
		if (err) {
			table_put(t, tb);
			goto out;
		}
		tb->mark = t->gen;
		*taken = true;
	}
	*out = tb;
out:
	if (fd >= 0)
		close(fd);
	return err;
}

/* ---- processes ------------------------------------------------------------ */

static void proc_release(struct unwind_tables *t, struct proc *p)
{
	for (uint32_t i = 0; i < p->nr_held; i++)
		table_put(t, p->held[i]);
	free(p->held);
	p->held = NULL;
	p->nr_held = 0;
}

/* Mapping e of a held table tb as the walker sees it (nr_rows 0: no table). */
static void fill_mapping(struct unwind_tables *t, const struct procmaps_entry *e,
			 const struct table *tb, struct unwind_mapping *m)
{
	uint64_t bias;

	*m = (struct unwind_mapping){ .start = e->start, .end = e->end };
	if (!tb || !tb->cfi ||
	    cfi_table_bias(tb->cfi, e->start, e->end - e->start, e->pgoff, &bias))
		return;	/* no CFI, or this mapping holds none of the file's code */
	if (!tb->placed) {
		t->st.mappings_over_budget++;
		return;
	}
	m->bias = bias;
	m->first_row = tb->first;
	m->nr_rows = tb->nr_rows;
}

int unwind_tables_set_proc(struct unwind_tables *t, uint32_t pid, const struct procmaps_entry *maps,
			   size_t nr)
{
	struct cache_entry *ce = cache_get(&t->procs, &pid, sizeof(pid));
	struct unwind_proc *up = t->entry;
	struct table **mtab = NULL, **held = NULL;
	uint32_t nr_held = 0, nr_maps = 0;
	uint64_t last_end = 0, hash;
	struct proc *p;
	int err = 0;

	if (!ce && t->procs.nr >= t->max_procs) {
		t->st.procs_over_budget++;
		return 0;
	}
	if (nr > UNWIND_MAX_MAPPINGS) {
		t->st.mappings_truncated += nr - UNWIND_MAX_MAPPINGS;
		nr = UNWIND_MAX_MAPPINGS;
	}
	mtab = calloc(nr ? nr : 1, sizeof(*mtab));
	held = calloc(nr ? nr : 1, sizeof(*held));
	if (!mtab || !held) {
		err = -ENOMEM;
		goto fail;
	}
	t->gen++;
	memset(up, 0, sizeof(*up));
	for (size_t i = 0; i < nr; i++) {
		const struct procmaps_entry *e = &maps[i];
		struct table *tb = NULL;

		if (e->end <= e->start || e->start < last_end)
			continue;	/* not sorted, or overlapping: a walker's search needs order */
		last_end = e->end;
		/* A file mapped twice (two executable segments) is opened once. */
		for (size_t j = 0; j < i && e->ino; j++)
			if (mtab[j] && maps[j].ino == e->ino && maps[j].maj == e->maj &&
			    maps[j].min == e->min && !strcmp(maps[j].path, e->path))
				tb = mtab[j];
		if (!tb) {
			bool taken;

			err = table_for(t, pid, e, &tb, &taken);
			if (err)
				goto fail;
			if (taken)
				held[nr_held++] = tb;
		}
		mtab[i] = tb;
		fill_mapping(t, e, tb, &up->maps[nr_maps++]);
	}
	up->nr = nr_maps;
	/*
	 * The same entry as written before (a process described again in the
	 * next file, a re-read that found nothing new for the walker): the
	 * tables it names are held still, where they were, so it stands.
	 */
	hash = hash_bytes(t->seed, up, offsetof(struct unwind_proc, maps) +
				       nr_maps * sizeof(up->maps[0]));
	if (ce && ((struct proc *)ce->value)->entry_hash == hash) {
		t->st.procs_unchanged++;
	} else {
		/* Every row it names is in the store already. */
		err = t->ops->write_proc(t->ctx, pid, up);
		if (err)
			goto fail;
	}

	if (!ce) {
		p = calloc(1, sizeof(*p));
		ce = p ? cache_add(&t->procs, &pid, sizeof(pid)) : NULL;
		if (!ce) {
			free(p);
			/* Written but not tracked would leak its tables: take it back. */
			t->ops->delete_proc(t->ctx, pid);
			err = -ENOMEM;
			goto fail;
		}
		ce->value = p;
	}
	p = ce->value;
	/* The entry no longer names what pid held: those ranges may go now. */
	proc_release(t, p);
	p->held = held;
	p->nr_held = nr_held;
	p->entry_hash = hash;
	free(mtab);
	return 0;

fail:
	for (uint32_t k = 0; k < nr_held; k++)
		table_put(t, held[k]);
	free(held);
	free(mtab);
	return err;
}

void unwind_tables_drop_proc(struct unwind_tables *t, uint32_t pid)
{
	struct cache_entry *ce = cache_get(&t->procs, &pid, sizeof(pid));
	struct proc *p;
	int err;

	if (!ce)
		return;
	p = ce->value;
	/* First the entry, then the ranges it named. */
	err = t->ops->delete_proc(t->ctx, pid);
	if (err && err != -ENOENT)
		t->st.store_errors++;
	proc_release(t, p);
	cache_del(&t->procs, ce);
	free(p);
}

/* ---- the manager ----------------------------------------------------------- */

int unwind_tables_new(const struct unwind_tables_opts *opts, struct unwind_tables **out)
{
	struct unwind_tables *t;

	*out = NULL;
	if (!opts->ops || !opts->ops->write_rows || !opts->ops->write_proc ||
	    !opts->ops->delete_proc)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->vdso_fd = -1;
	t->proc_root = strdup(opts->proc_root ? opts->proc_root : "/proc");
	t->entry = calloc(1, sizeof(*t->entry));
	t->cap_free = 2;
	t->free = calloc(t->cap_free, sizeof(*t->free));
	if (!t->proc_root || !t->entry || !t->free) {
		unwind_tables_free(t);
		return -ENOMEM;
	}
	t->max_procs = opts->max_procs ? opts->max_procs : UNWIND_TABLES_MAX_PROCS;
	t->cache_bytes = opts->cache_bytes ? opts->cache_bytes : UNWIND_TABLES_CACHE_BYTES;
	t->trust_ns = opts->trust_ns ? opts->trust_ns : UNWIND_TABLES_TRUST_NS;
	t->seed = hash_seed();
	t->ops = opts->ops;
	t->ctx = opts->ctx;
	t->lru.prev = t->lru.next = &t->lru;
	if (opts->store_rows)
		t->free[t->nr_free++] = (struct range){ 0, opts->store_rows };
	t->st.rows_capacity = opts->store_rows;
	*out = t;
	return 0;
}

static void free_proc(void *value)
{
	struct proc *p = value;

	free(p->held);
	free(p);
}

static void free_table(void *value)
{
	struct table *tb = value;

	cfi_table_free(tb->cfi);
	free(tb);
}

void unwind_tables_free(struct unwind_tables *t)
{
	if (!t)
		return;
	cache_clear(&t->procs, free_proc);
	cache_clear(&t->tables, free_table);
	cache_clear(&t->keys, free);
	cache_clear(&t->known, free);
	free(t->free);
	free(t->placed);
	free(t->entry);
	if (t->vdso_fd >= 0)
		close(t->vdso_fd);
	free(t->proc_root);
	free(t);
}

bool unwind_tables_placed_at(const struct unwind_tables *t, uint32_t first, uint32_t nr)
{
	for (size_t i = 0; i < t->nr_placed; i++) {
		const struct table *tb = t->placed[i];

		if (tb->first == first && tb->nr_rows == nr)
			return true;
	}
	return false;
}

void unwind_tables_stats(const struct unwind_tables *t, struct unwind_tables_stats *st)
{
	*st = t->st;
	st->procs = t->procs.nr;
	st->tables = t->nr_placed - t->nr_parked;
	st->rows_used -= t->rows_parked;
	st->parked = t->nr_parked;
	st->rows_parked = t->rows_parked;
	st->cached = t->nr_cached;
	st->cached_bytes = t->cached_bytes;
	st->free_ranges = t->nr_free;
	st->largest_free = 0;
	for (size_t i = 0; i < t->nr_free; i++)
		if (t->free[i].nr > st->largest_free)
			st->largest_free = t->free[i].nr;
}
