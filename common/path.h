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
	int64_t height;		/* stack base - CFA of the frame, bytes, or
				 * ICPPD_HEIGHT_NONE */
};

/*
 * The height of a frame on a stack with no fixed base: a goroutine's
 * (the Go runtime allocates them in heap arenas and moves them as they
 * grow), a makecontext() coroutine's or a sigaltstack() handler's on a
 * heap block.  The distance to such a stack's top means nothing from
 * one sample to the next, so a sample there has the function alone as
 * its CID, and its frames, learned from the stack copy itself, carry
 * this height.  Real heights are base - CFA > 0, so 0 is free.
 */
#define ICPPD_HEIGHT_NONE 0


#endif
