/*
 * inlined_cold.c - a second unit for inlined-multi (inlined.c with
 * INLINED_MULTI): its code, linked first, lies below inlined.c's, so a
 * reader that reads units as lookups reach them must keep both units'
 * inlined ranges in order.
 */
#include "burn.h"

#define INLINE static inline __attribute__((always_inline))

INLINE void cold_helper(uint64_t ns)
{
	burn_for(ns);
}

__attribute__((noinline)) void cold_path(uint64_t ns)
{
	cold_helper(ns);
}
