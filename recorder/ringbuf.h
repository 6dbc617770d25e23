/* SPDX-License-Identifier: MIT */
/*
 * ringbuf.h - the reader of the recorder's BPF ring buffers
 * (BPF_MAP_TYPE_RINGBUF), in place of libbpf's ring_buffer.
 *
 * Why not libbpf's: it maps each data area twice, back to back, so that a
 * record that wraps around the end reads as one piece. The kernel fills in
 * every page of such a mapping when it is made, so the recorder's resident
 * memory held each ring twice from the start (8 MB for the default 4 MiB
 * ring) whatever the rate. This reader maps the data once and copies the
 * rare record that wraps into a buffer of its own. Otherwise it does what
 * libbpf's does, with the same contract for callbacks:
 *
 * - rings are read in the order they were added, each for as long as its
 *   producers commit records, up to one still being written;
 * - a discarded record is skipped without a call;
 * - a callback that returns < 0 stops the reading: that record counts as
 *   read (the kernel may reuse its space), and the call returns the value.
 *
 * A handle is used by one thread.
 */
#ifndef RECORDER_RINGBUF_H
#define RECORDER_RINGBUF_H

#include <stddef.h>
#include <stdint.h>

/* One record: its bytes, valid until the callback returns. < 0 stops the reading. */
typedef int (*ringbuf_fn)(void *ctx, void *data, size_t size);

struct ringbufs;

/* An empty set with its epoll fd: 0 or -errno. */
int ringbufs_new(struct ringbufs **out);
/* Map the ring of BPF map fd map_fd (read first to last in adding order): 0 or -errno. */
int ringbufs_add(struct ringbufs *rbs, int map_fd, ringbuf_fn fn, void *ctx);
/* An fd that polls readable when a ring has records (after the kernel's wakeup). */
int ringbufs_epoll_fd(const struct ringbufs *rbs);
/* Read every ring: the number of records handed over, or a callback's < 0. */
int ringbufs_consume(struct ringbufs *rbs);
void ringbufs_free(struct ringbufs *rbs);

/*
 * One ring as memory: the positions the kernel and the reader share and
 * the data area of size mask + 1 (a power of two), mapped once. Apart for
 * the unit tests, which lay out rings of their own without a kernel.
 */
struct ringbuf_mem {
	uint64_t *consumer_pos;	/* written by the reader */
	const uint64_t *producer_pos;
	const uint8_t *data;
	uint64_t mask;
	uint8_t *bounce;	/* a record that wraps, copied whole */
	size_t bounce_cap;
};

/* Read one ring (ringbufs_consume() for each): count of records, or a callback's < 0. */
int64_t ringbuf_mem_consume(struct ringbuf_mem *r, ringbuf_fn fn, void *ctx);

#endif
