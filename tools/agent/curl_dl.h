/* SPDX-License-Identifier: MIT */
/*
 * curl_dl.h - libcurl, loaded the first time the agent needs it; internal.
 *
 * Linked, libcurl and what it pulls in (OpenSSL, GnuTLS, Kerberos, LDAP,
 * p11-kit) were mapped and relocated in every bpfrec process: 4 MB of
 * resident memory in `bpfrec record`, which never sends anything. Loaded
 * with dlopen() at the agent's first HTTP handle, only the agent pays.
 * The function types come from curl.h itself (typeof), so they cannot
 * drift from the library's.
 */
#ifndef TOOLS_AGENT_CURL_DL_H
#define TOOLS_AGENT_CURL_DL_H

#include <stddef.h>

/* Plain prototypes: curl.h's type-checking macros would hide the functions. */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

struct curl_api {
	__typeof__(&curl_easy_init) easy_init;
	__typeof__(&curl_easy_setopt) easy_setopt;
	__typeof__(&curl_easy_perform) easy_perform;
	__typeof__(&curl_easy_getinfo) easy_getinfo;
	__typeof__(&curl_easy_cleanup) easy_cleanup;
	__typeof__(&curl_easy_strerror) easy_strerror;
	__typeof__(&curl_slist_append) slist_append;
	__typeof__(&curl_slist_free_all) slist_free_all;
	__typeof__(&curl_getdate) getdate;
	__typeof__(&curl_url) url;
	__typeof__(&curl_url_cleanup) url_cleanup;
	__typeof__(&curl_url_get) url_get;
	__typeof__(&curl_url_set) url_set;
	__typeof__(&curl_free) free;
};

/*
 * libcurl's functions, loaded once per process (thread-safe); NULL when no
 * libcurl is installed, with a one-line reason and the fix in err.
 */
const struct curl_api *curl_api_get(char *err, size_t errlen);

#endif /* TOOLS_AGENT_CURL_DL_H */
