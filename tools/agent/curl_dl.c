// SPDX-License-Identifier: MIT
/* curl_dl.c - libcurl through dlopen() (curl_dl.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "tools/agent/curl_dl.h"

/* Debian's libcurl4 (OpenSSL), else libcurl3-gnutls: the same ABI. */
static const char *const sonames[] = { "libcurl.so.4", "libcurl-gnutls.so.4" };

/* Process-wide by nature, as the library it stands for: loaded once, never unloaded. */
static struct curl_api api;
static const struct curl_api *loaded;
static char load_error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

#define SYM(field, name)                                              \
	do {                                                          \
		*(void **)&a.field = dlsym(h, #name);                 \
		if (!a.field) {                                       \
			snprintf(load_error, sizeof(load_error),      \
				 "%s has no %s: libcurl 7.62 or later " \
				 "is needed", soname, #name);         \
			return;                                       \
		}                                                     \
	} while (0)

static void load(void)
{
	struct curl_api a;
	const char *soname = NULL;
	void *h = NULL;

	for (size_t i = 0; !h && i < sizeof(sonames) / sizeof(sonames[0]); i++) {
		soname = sonames[i];
		h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	}
	if (!h) {
		snprintf(load_error, sizeof(load_error), "cannot load libcurl (%s): install "
			 "Debian's libcurl4", dlerror());
		return;
	}
	SYM(easy_init, curl_easy_init);
	SYM(easy_setopt, curl_easy_setopt);
	SYM(easy_perform, curl_easy_perform);
	SYM(easy_getinfo, curl_easy_getinfo);
	SYM(easy_cleanup, curl_easy_cleanup);
	SYM(easy_strerror, curl_easy_strerror);
	SYM(slist_append, curl_slist_append);
	SYM(slist_free_all, curl_slist_free_all);
	SYM(getdate, curl_getdate);
	SYM(url, curl_url);
	SYM(url_cleanup, curl_url_cleanup);
	SYM(url_get, curl_url_get);
	SYM(url_set, curl_url_set);
	SYM(free, curl_free);
	api = a;
	loaded = &api;
}

const struct curl_api *curl_api_get(char *err, size_t errlen)
{
	pthread_once(&once, load);
	if (!loaded && err && errlen)
		snprintf(err, errlen, "%s", load_error);
	return loaded;
}
