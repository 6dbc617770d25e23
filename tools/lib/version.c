// SPDX-License-Identifier: MIT
/* version.c - the library's version (bpfrec/common.h). */
#include <bpfrec/common.h>

#define STR_(x) #x
#define STR(x) STR_(x)

const char *bpfrec_version(void)
{
	return STR(BPFREC_VERSION_MAJOR) "." STR(BPFREC_VERSION_MINOR) ".0";
}
