// SPDX-License-Identifier: MIT
/* ringbuf.c - BPF ring buffers read with each data area mapped once (ringbuf.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "recorder/ringbuf.h"

struct ring {
	struct ringbuf_mem mem;
	ringbuf_fn fn;
	void *ctx;
	void *consumer_map, *producer_map;
	size_t producer_len;
};

struct ringbufs {
	struct ring *rings;
	size_t nr;
	int epoll_fd;
	size_t page;
};

/* A record's space in the ring: header, bytes, padded to 8. */
static uint64_t record_space(uint32_t len)
{
	len &= ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
	return ((uint64_t)len + BPF_RINGBUF_HDR_SZ + 7) / 8 * 8;
}

/*
 * The bytes of the record at data offset off, len long: in place, or
 * copied whole when they run past the end of the area (the kernel writes
 * the rest at its start).
 */
static void *record_bytes(struct ringbuf_mem *r, uint64_t off, uint32_t len)
{
	uint64_t size = r->mask + 1, head = size - off;

	if (len <= head)
		return (void *)(r->data + off);
	if (len > r->bounce_cap) {
		uint8_t *b = realloc(r->bounce, len);

		if (!b)
			return NULL;
		r->bounce = b;
		r->bounce_cap = len;
	}
	memcpy(r->bounce, r->data + off, head);
	memcpy(r->bounce + head, r->data, len - head);
	return r->bounce;
}

int64_t ringbuf_mem_consume(struct ringbuf_mem *r, ringbuf_fn fn, void *ctx)
{
	uint64_t cons = __atomic_load_n(r->consumer_pos, __ATOMIC_ACQUIRE);
	int64_t n = 0;
	bool more;

	do {
		uint64_t prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);

		more = false;
		while (cons < prod) {
			/* Headers are 8-aligned and the area a multiple of 8: never split. */
			const uint32_t *hdr = (const uint32_t *)(r->data + (cons & r->mask));
			uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
			uint64_t space = record_space(len);

			if (len & BPF_RINGBUF_BUSY_BIT)
				return n;	/* still being written: the next reading gets it */
			if (space > r->mask + 1 || space > prod - cons)
				return -EPROTO;	/* not a layout the kernel writes */
			more = true;
			if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
				void *rec = record_bytes(r, (cons + BPF_RINGBUF_HDR_SZ) & r->mask, len);
				int err;

				if (!rec)
					return -ENOMEM;
				err = fn(ctx, rec, len);
				if (err < 0) {
					__atomic_store_n(r->consumer_pos, cons + space, __ATOMIC_RELEASE);
					return err;
				}
				n++;
			}
			cons += space;
			__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
		}
	} while (more);
	return n;
}

int ringbufs_new(struct ringbufs **out)
{
	struct ringbufs *rbs = calloc(1, sizeof(*rbs));

	*out = NULL;
	if (!rbs)
		return -ENOMEM;
	rbs->page = (size_t)sysconf(_SC_PAGESIZE);
	rbs->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (rbs->epoll_fd < 0) {
		int err = -errno;

		free(rbs);
		return err;
	}
	*out = rbs;
	return 0;
}

int ringbufs_add(struct ringbufs *rbs, int map_fd, ringbuf_fn fn, void *ctx)
{
	struct bpf_map_info info = { 0 };
	uint32_t info_len = sizeof(info);
	struct epoll_event ev = { .events = EPOLLIN };
	struct ring *rings, *r;
	int err;

	err = bpf_obj_get_info_by_fd(map_fd, &info, &info_len);
	if (err)
		return err < 0 ? err : -EINVAL;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    (info.max_entries & (info.max_entries - 1)))
		return -EINVAL;
	rings = realloc(rbs->rings, (rbs->nr + 1) * sizeof(*rings));
	if (!rings)
		return -ENOMEM;
	rbs->rings = rings;
	r = &rings[rbs->nr];
	memset(r, 0, sizeof(*r));
	r->fn = fn;
	r->ctx = ctx;
	/* The consumer's page is the only one the reader writes. */
	r->consumer_map = mmap(NULL, rbs->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (r->consumer_map == MAP_FAILED)
		return -errno;
	/* The producer's page, then the data area once (libbpf: twice). */
	r->producer_len = rbs->page + info.max_entries;
	r->producer_map = mmap(NULL, r->producer_len, PROT_READ, MAP_SHARED, map_fd,
			       (off_t)rbs->page);
	if (r->producer_map == MAP_FAILED) {
		err = -errno;
		munmap(r->consumer_map, rbs->page);
		return err;
	}
	r->mem.consumer_pos = r->consumer_map;
	r->mem.producer_pos = r->producer_map;
	r->mem.data = (const uint8_t *)r->producer_map + rbs->page;
	r->mem.mask = info.max_entries - 1;
	ev.data.u64 = rbs->nr;
	if (epoll_ctl(rbs->epoll_fd, EPOLL_CTL_ADD, map_fd, &ev) < 0) {
		err = -errno;
		munmap(r->producer_map, r->producer_len);
		munmap(r->consumer_map, rbs->page);
		return err;
	}
	rbs->nr++;
	return 0;
}

int ringbufs_epoll_fd(const struct ringbufs *rbs)
{
	return rbs->epoll_fd;
}

int ringbufs_consume(struct ringbufs *rbs)
{
	int64_t total = 0;

	for (size_t i = 0; i < rbs->nr; i++) {
		struct ring *r = &rbs->rings[i];
		int64_t n = ringbuf_mem_consume(&r->mem, r->fn, r->ctx);

		if (n < 0)
			return (int)n;
		total += n;
	}
	return total > INT_MAX ? INT_MAX : (int)total;
}

void ringbufs_free(struct ringbufs *rbs)
{
	if (!rbs)
		return;
	for (size_t i = 0; i < rbs->nr; i++) {
		munmap(rbs->rings[i].producer_map, rbs->rings[i].producer_len);
		munmap(rbs->rings[i].consumer_map, rbs->page);
		free(rbs->rings[i].mem.bounce);
	}
	free(rbs->rings);
	close(rbs->epoll_fd);
	free(rbs);
}
