// SPDX-License-Identifier: MIT
/*
 * compress.c - zstd streams for COMPRESSED records (contract in compress.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "compress.h"

struct perfdata_zstd_enc {
	ZSTD_CCtx *cctx;
	char err[128];
};

struct perfdata_zstd_dec {
	ZSTD_DCtx *dctx;
	char err[128];
};

/* A zstd result as -errno, its text kept in err. */
static int zstd_failure(size_t ret, char *err, size_t errlen)
{
	snprintf(err, errlen, "zstd: %s", ZSTD_getErrorName(ret));
	return ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation ? -ENOMEM : -EPROTO;
}

int perfdata_zstd_enc_new(int level, struct perfdata_zstd_enc **out)
{
	struct perfdata_zstd_enc *z;
	size_t ret;

	*out = NULL;
	if (level < 1 || level > PERFDATA_ZSTD_LEVEL_MAX)
		return -EINVAL;
	z = calloc(1, sizeof(*z));
	if (!z)
		return -ENOMEM;
	z->cctx = ZSTD_createCCtx();
	if (!z->cctx) {
		free(z);
		return -ENOMEM;
	}
	ret = ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level);
	if (ZSTD_isError(ret)) {
		int err = zstd_failure(ret, z->err, sizeof(z->err));

		perfdata_zstd_enc_free(z);
		return err;
	}
	*out = z;
	return 0;
}

void perfdata_zstd_enc_free(struct perfdata_zstd_enc *z)
{
	if (!z)
		return;
	ZSTD_freeCCtx(z->cctx);
	free(z);
}

int perfdata_zstd_compress(struct perfdata_zstd_enc *z, struct perfdata_zstd_buf *in,
			   struct perfdata_zstd_buf *out, bool flush)
{
	ZSTD_inBuffer zin = { in->data, in->size, in->pos };
	ZSTD_outBuffer zout = { out->data, out->size, out->pos };
	size_t ret;

	do {
		ret = ZSTD_compressStream2(z->cctx, &zout, &zin, flush ? ZSTD_e_flush : ZSTD_e_continue);
		if (ZSTD_isError(ret)) {
			in->pos = zin.pos;
			out->pos = zout.pos;
			return zstd_failure(ret, z->err, sizeof(z->err));
		}
		/* e_continue returns when in is consumed or out is full; e_flush
		 * when out is full or the flush is complete (ret == 0). */
	} while (zout.pos < zout.size && (flush ? ret != 0 : zin.pos < zin.size));
	in->pos = zin.pos;
	out->pos = zout.pos;
	return flush && ret != 0;
}

const char *perfdata_zstd_enc_error(const struct perfdata_zstd_enc *z)
{
	return z->err;
}

int perfdata_zstd_dec_new(struct perfdata_zstd_dec **out)
{
	struct perfdata_zstd_dec *z;
	size_t ret;

	*out = NULL;
	z = calloc(1, sizeof(*z));
	if (!z)
		return -ENOMEM;
	z->dctx = ZSTD_createDCtx();
	if (!z->dctx) {
		free(z);
		return -ENOMEM;
	}
	ret = ZSTD_DCtx_setParameter(z->dctx, ZSTD_d_windowLogMax, PERFDATA_ZSTD_WINDOW_LOG_MAX);
	if (ZSTD_isError(ret)) {
		int err = zstd_failure(ret, z->err, sizeof(z->err));

		perfdata_zstd_dec_free(z);
		return err;
	}
	*out = z;
	return 0;
}

void perfdata_zstd_dec_free(struct perfdata_zstd_dec *z)
{
	if (!z)
		return;
	ZSTD_freeDCtx(z->dctx);
	free(z);
}

int perfdata_zstd_decompress(struct perfdata_zstd_dec *z, struct perfdata_zstd_buf *in,
			     struct perfdata_zstd_buf *out)
{
	ZSTD_inBuffer zin = { in->data, in->size, in->pos };
	ZSTD_outBuffer zout = { out->data, out->size, out->pos };

	/* Also with all input consumed: zstd may still hold output of it. */
	while (zout.pos < zout.size) {
		size_t in_before = zin.pos, out_before = zout.pos;
		size_t ret = ZSTD_decompressStream(z->dctx, &zout, &zin);

		if (ZSTD_isError(ret)) {
			in->pos = zin.pos;
			out->pos = zout.pos;
			return zstd_failure(ret, z->err, sizeof(z->err));
		}
		if (zin.pos == in_before && zout.pos == out_before)
			break;
	}
	in->pos = zin.pos;
	out->pos = zout.pos;
	return 0;
}

const char *perfdata_zstd_dec_error(const struct perfdata_zstd_dec *z)
{
	return z->err;
}
