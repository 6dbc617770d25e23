/* SPDX-License-Identifier: MIT */
/*
 * rotate.h - `--switch-output`: when to start a new output file, and how the
 * finished ones are named and pruned, as perf record does it.
 *
 * The recording always goes to the output path (perf.data). At a switch the
 * finished file is renamed to PATH.<timestamp>, where the timestamp is the
 * local time of the switch as YYYYmmddHHMMSScc (cc = centiseconds, perf's
 * format), and a fresh PATH is started; at the end the last file is renamed
 * the same way. Names only ever grow: two switches within one centisecond
 * get consecutive numbers, and a name that already exists (whoever put it
 * there, a symlink included) is never replaced, the next number is taken
 * instead. With max_files, only the newest max_files of the files this
 * rotator renamed are kept; nothing else is ever deleted.
 */
#ifndef RECORDER_ROTATE_H
#define RECORDER_ROTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum rotate_mode {
	ROTATE_NONE = 0,
	ROTATE_SIGNAL,	/* on SIGUSR2 only (--switch-output without a value) */
	ROTATE_SIZE,	/* when the file reaches `bytes` */
	ROTATE_TIME,	/* when the file is `ns` old */
};

struct rotate_spec {
	enum rotate_mode mode;
	uint64_t bytes;
	uint64_t ns;
};

/*
 * "signal", a size with a B/K/M/G suffix ("100M") or a time with an s/m/h/d
 * suffix ("30s"), as perf's --switch-output takes them. 0 or -EINVAL.
 */
int rotate_parse(const char *arg, struct rotate_spec *out);

struct rotator {
	char *path;		/* the output path files are recorded under */
	unsigned int max_files;	/* 0 = keep all */
	char **kept;		/* ring of the newest max_files names */
	size_t nr_kept, next;
	uint64_t last_stamp;	/* the last timestamp used */
	unsigned int nr_files;	/* files renamed so far */
};

int rotator_init(struct rotator *r, const char *path, unsigned int max_files);
void rotator_free(struct rotator *r);

/* YYYYmmddHHMMSScc for a CLOCK_REALTIME time in ns, in local time. */
uint64_t rotate_stamp(uint64_t realtime_ns);

/*
 * Rename the finished r->path to r->path.<stamp of now_ns> (never replacing
 * anything), then delete the oldest renamed file beyond max_files. The new
 * name goes to name (of len bytes). 0 or -errno (nothing renamed then).
 */
int rotator_retire(struct rotator *r, uint64_t realtime_ns, char *name, size_t len);

#endif /* RECORDER_ROTATE_H */
