/*
 * strlist.h - a bounded list of borrowed strings: what a repeatable
 * option (--exe A --exe B) collects.
 */
#ifndef ICPPD_COMMON_STRLIST_H
#define ICPPD_COMMON_STRLIST_H

#include <stddef.h>

#define STRLIST_MAX 64
struct strlist {
	const char *v[STRLIST_MAX];	/* borrowed: argv, a config file */
	size_t n;
};

#endif
