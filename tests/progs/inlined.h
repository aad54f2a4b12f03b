/*
 * inlined.h - a function inlined from a header (inlined.c): pprof puts
 * its lines in this file, under a function of its own.
 */
#ifndef INLINED_H
#define INLINED_H

#include <stdint.h>

static inline __attribute__((always_inline)) uint64_t mix(uint64_t x)
{
	for (int i = 0; i < 64; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

#endif
