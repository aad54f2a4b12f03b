/*
 * path.h - one frame of an unwound call path, as the collector produces
 * it and the path map consumes it (neither knows the other).
 */
#ifndef ICPPD_COMMON_PATH_H
#define ICPPD_COMMON_PATH_H

#include <stdint.h>

struct module;

struct path_frame {
	const struct module *mod;
	uint64_t func;		/* link-time start of the function */
	const char *name;	/* symbol or NULL; owned by the module */
	uint64_t pc;		/* link-time: the sampled pc in the innermost
				 * frame, the return address in the others */
	int64_t height;		/* stack base - CFA of the frame, bytes */
};

#endif
