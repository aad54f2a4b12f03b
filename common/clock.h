/*
 * clock.h - time as nanoseconds in an int64_t: monotonic for intervals
 * and deadlines, real time for what is stored.
 */
#ifndef ICPPD_COMMON_CLOCK_H
#define ICPPD_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t clock__ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline int64_t clock__mono_ns(void)
{
	return clock__ns(CLOCK_MONOTONIC);
}

static inline int64_t clock__real_ns(void)
{
	return clock__ns(CLOCK_REALTIME);
}

#endif
