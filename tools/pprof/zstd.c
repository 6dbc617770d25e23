// SPDX-License-Identifier: MIT
/*
 * zstd.c - zstd stream decompression through a dlopen'ed libzstd (see zstd.h).
 *
 * Only the stable streaming API is used (ZSTD_createDStream,
 * ZSTD_decompressStream, ...; stable since zstd 1.0). Its two buffer
 * structs are declared here with the layout zstd.h gives them.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "zstd.h"

struct zstd_in {
	const void *src;
	size_t size, pos;
};

struct zstd_out {
	void *dst;
	size_t size, pos;
};

struct pp_zstd {
	void *lib;
	void *stream;
	void *(*create)(void);
	size_t (*init)(void *);
	size_t (*decompress)(void *, struct zstd_out *, struct zstd_in *);
	size_t (*release)(void *);
	unsigned (*is_error)(size_t);
	const char *(*error_name)(size_t);
};

int pp_zstd_new(struct pp_zstd **out, char *err, size_t errlen)
{
	struct pp_zstd *z = calloc(1, sizeof(*z));

	if (!z)
		return -ENOMEM;
	z->lib = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!z->lib) {
		snprintf(err, errlen, "cannot load libzstd.so.1 (%s); install libzstd1", dlerror());
		free(z);
		return -ENOENT;
	}
	*(void **)&z->create = dlsym(z->lib, "ZSTD_createDStream");
	*(void **)&z->init = dlsym(z->lib, "ZSTD_initDStream");
	*(void **)&z->decompress = dlsym(z->lib, "ZSTD_decompressStream");
	*(void **)&z->release = dlsym(z->lib, "ZSTD_freeDStream");
	*(void **)&z->is_error = dlsym(z->lib, "ZSTD_isError");
	*(void **)&z->error_name = dlsym(z->lib, "ZSTD_getErrorName");
	if (!z->create || !z->init || !z->decompress || !z->release || !z->is_error ||
	    !z->error_name || !(z->stream = z->create()) || z->is_error(z->init(z->stream))) {
		snprintf(err, errlen, "libzstd.so.1 lacks the streaming decompression API");
		pp_zstd_free(z);
		return -ENOENT;
	}
	*out = z;
	return 0;
}

void pp_zstd_free(struct pp_zstd *z)
{
	if (!z)
		return;
	if (z->stream)
		z->release(z->stream);
	if (z->lib)
		dlclose(z->lib);
	free(z);
}

int pp_zstd_decompress(struct pp_zstd *z, const void *src, size_t size, unsigned char **buf,
		       size_t *len, size_t *cap, size_t max_len, char *err, size_t errlen)
{
	struct zstd_in in = { src, size, 0 };

	while (in.pos < in.size) {
		if (*len >= max_len) {
			snprintf(err, errlen, "it inflates to more than %zu MiB", max_len >> 20);
			return -EFBIG;
		}
		if (*cap - *len < 64 * 1024 && *cap < max_len) {
			size_t ncap = *cap ? *cap * 2 : 1 << 20;
			unsigned char *n;

			if (ncap > max_len)
				ncap = max_len;
			n = realloc(*buf, ncap);
			if (!n)
				return -ENOMEM;
			*buf = n;
			*cap = ncap;
		}
		struct zstd_out out = { *buf + *len, (*cap < max_len ? *cap : max_len) - *len, 0 };
		size_t before = in.pos;
		size_t ret = z->decompress(z->stream, &out, &in);

		if (z->is_error(ret)) {
			snprintf(err, errlen, "%s", z->error_name(ret));
			return -EINVAL;
		}
		*len += out.pos;
		/* With room to write, zstd always makes progress (it starts the
		 * next frame by itself); guard against a loop all the same. */
		if (!out.pos && in.pos == before) {
			snprintf(err, errlen, "zstd made no progress");
			return -EINVAL;
		}
	}
	return 0;
}
