/* SPDX-License-Identifier: MIT */
/*
 * writer.h - write a perf.data file or stream that the stock perf tools read.
 *
 * Life cycle:
 *   perfdata_writer_new()        on an fd opened for writing
 *   perfdata_writer_add_event()  once per event (attr + name + ids)
 *   perfdata_writer_start()      header and attrs (file), or pipe header,
 *                                HEADER_ATTRs and HEADER_FEATUREs (pipe)
 *   perfdata_write_*()           records, buffered; one write(2) per buffer
 *   perfdata_writer_checkpoint() flush, and in file mode make data.size in
 *                                the header cover every complete record
 *   perfdata_writer_finish()     flush, features, final header
 *   perfdata_writer_free()
 *
 * Crash safety (file mode): the feature bitmap stays 0 while recording and
 * data.size is patched at each checkpoint, so a writer killed with SIGKILL
 * leaves a file perf reads up to the last checkpoint. The writer also
 * checkpoints by itself when it flushes and a second has passed.
 *
 * Errors: every function returns 0 or -errno. After a write error (ENOSPC,
 * EIO, EPIPE) or a compression error (see _compression_error()) the writer
 * is failed: further writes return the same error and
 * perfdata_writer_finish() truncates the file to the last checkpoint and
 * tries to finish it there, so what is on disk stays readable.
 *
 * The writer knows nothing about where records come from; the caller decides
 * order (time-sorted batches, each ended with perfdata_write_finished_round).
 */
#ifndef PERFDATA_WRITER_H
#define PERFDATA_WRITER_H

#include "records.h"

struct perfdata_writer;

struct perfdata_writer_opts {
	bool pipe;		/* pipe mode: 16-byte header, never seek */
	size_t buffer_size;	/* bytes buffered before a write(2); 0 = 1 MiB */
	int argc;		/* the CMDLINE feature; 0 = none */
	const char *const *argv;
	/* Minimum interval between automatic checkpoints; 0 = 1 s. */
	uint64_t checkpoint_interval_ms;
	/*
	 * -z: zstd level 1..22 (0 = no compression). Records are streamed
	 * through one zstd stream into COMPRESSED records as they are written
	 * (perfdata/compress.h); FINISHED_ROUNDs stay outside, each after a
	 * flush of the stream, as perf writes them; checkpoints flush too, so a
	 * killed writer leaves a file that decompresses whole up to the last
	 * one. The COMPRESSED feature says level, ratio and chunk size.
	 */
	int compression_level;
	/*
	 * Pipe mode only: hand each buffer to this function instead of
	 * write(2) on the fd (which is then unused: pass -1). It returns 0
	 * when it took all of buf, else -errno (a write error, as above).
	 */
	int (*write)(void *ctx, const void *buf, size_t len);
	void *write_ctx;
};

int perfdata_writer_new(int fd, const struct perfdata_writer_opts *opts,
			struct perfdata_writer **out);
/*
 * Add an event. attr->size is forced to 128. All events must agree on
 * sample_id_all and on the trailer bits of sample_type (TID, TIME, ID,
 * STREAM_ID, CPU, IDENTIFIER); with more than one event every event needs
 * PERF_SAMPLE_IDENTIFIER and at least one id. Returns -EINVAL otherwise.
 */
int perfdata_writer_add_event(struct perfdata_writer *w, const char *name,
			      const struct perf_event_attr *attr,
			      const uint64_t *ids, uint32_t nr_ids);
int perfdata_writer_start(struct perfdata_writer *w);

int perfdata_write_mmap(struct perfdata_writer *w, const struct perfdata_mmap *m,
			const struct perfdata_sample_id *sid);
int perfdata_write_mmap2(struct perfdata_writer *w, const struct perfdata_mmap *m,
			 const struct perfdata_sample_id *sid);
int perfdata_write_comm(struct perfdata_writer *w, const struct perfdata_comm *c,
			const struct perfdata_sample_id *sid);
/*
 * A KSYMBOL record. perf maps the symbol when it reads the record, so it
 * must come before the samples that fall in it; -EINVAL for a name that
 * does not fit in a record.
 */
int perfdata_write_ksymbol(struct perfdata_writer *w, const struct perfdata_ksymbol *k,
			   const struct perfdata_sample_id *sid);
int perfdata_write_fork(struct perfdata_writer *w, const struct perfdata_task *t,
			const struct perfdata_sample_id *sid);
int perfdata_write_exit(struct perfdata_writer *w, const struct perfdata_task *t,
			const struct perfdata_sample_id *sid);
/* The sample's event is found by s->id (the first event when there is one).
 * A STACK_USER too big for one record is cut (perfdata_sample_fit_stack). */
int perfdata_write_sample(struct perfdata_writer *w, const struct perfdata_sample *s);
int perfdata_write_lost_samples(struct perfdata_writer *w, uint64_t lost,
				const struct perfdata_sample_id *sid);
int perfdata_write_finished_round(struct perfdata_writer *w);
/*
 * record --sched: per-thread metrics as the records of perfdata/schedstats.h
 * (as many as they need, at least one). Untimed: write them last.
 */
struct bpfrec_sched_thread;
int perfdata_write_sched_metrics(struct perfdata_writer *w, const struct bpfrec_sched_thread *t,
				 size_t nr);
/*
 * Record a build-id for the BUILD_ID feature (file mode, written at finish)
 * or emit it now as HEADER_BUILD_ID (pipe mode). cpumode is
 * PERF_RECORD_MISC_KERNEL for the kernel ("[kernel.kallsyms]") and
 * PERF_RECORD_MISC_USER for user files. Duplicates are ignored.
 */
int perfdata_writer_add_build_id(struct perfdata_writer *w, uint16_t cpumode,
				 const uint8_t *build_id, size_t size, const char *filename);

int perfdata_writer_checkpoint(struct perfdata_writer *w);
int perfdata_writer_finish(struct perfdata_writer *w);
void perfdata_writer_free(struct perfdata_writer *w);

/* Bytes in the file so far (header, attrs and records, flushed or not). */
uint64_t perfdata_writer_size(const struct perfdata_writer *w);
/* Number of SAMPLE records written. */
uint64_t perfdata_writer_nr_samples(const struct perfdata_writer *w);
/*
 * After an error: the compressor's message ("zstd: ...") when it was the
 * compression that failed (-ENOMEM or -EPROTO), NULL when it was a write.
 */
const char *perfdata_writer_compression_error(const struct perfdata_writer *w);
/* -z: record bytes fed to zstd and compressed bytes it produced so far. */
void perfdata_writer_compression_stats(const struct perfdata_writer *w, uint64_t *in,
				       uint64_t *out);

#endif /* PERFDATA_WRITER_H */
