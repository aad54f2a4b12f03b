/*
 * burn.h - sizes a test program's work by CPU time, not by iterations.
 *
 * The same loop runs several times faster on one CPU than on another
 * (store-to-load forwarding of `sink += i` on a volatile is nearly free
 * on some), so a loop of N iterations gives five times fewer samples on
 * one machine than on the next.  BURN() instead spins until the calling
 * thread has used burn_ns nanoseconds of CPU (CLOCK_THREAD_CPUTIME_ID),
 * so a test can expect burn_ns * rate samples wherever it runs, and
 * another thread or process competing for the CPU does not shorten it.
 *
 * Invariants the tests rely on:
 * - A function that burns makes no call and needs no stack of its own:
 *   the clock is read with an inline `syscall` into a thread-local
 *   timespec (initial-exec, so no __tls_get_addr call in a shared
 *   library either).  A leaf stays a leaf, frame sizes stay what the
 *   programs declare, and a sample taken inside the syscall carries the
 *   burning function's SP and PC: the same context identifier.
 * - A burn never stops early: it ends at the first clock read at or past
 *   its end, about every 2^18 iterations (well under a millisecond on
 *   any machine), so it overshoots by less than that.
 */
#ifndef BURN_H
#define BURN_H

#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>

extern volatile uint64_t sink;
extern uint64_t burn_ns;	/* CPU time of one BURN() */

static __thread struct timespec burn_ts_ __attribute__((tls_model("initial-exec")));

/*
 * CPU time of the calling thread in nanoseconds.  This and burn_for()
 * are macros, not inline functions: DWARF names an inline function's
 * code (DW_TAG_inlined_subroutine), and reports draw it as a frame of
 * its own below the function it is in, where the tests expect the
 * burning function itself.
 */
#define thread_cpu_ns() ({						\
	__asm__ volatile("mov %[nr], %%eax\n\t"			\
			 "mov %[clk], %%edi\n\t"			\
			 "syscall"					\
			 : : [nr] "i"(SYS_clock_gettime),		\
			     [clk] "i"(CLOCK_THREAD_CPUTIME_ID),	\
			     "S"(&burn_ts_)				\
			 : "rax", "rdi", "rcx", "r11", "memory");	\
	(uint64_t)burn_ts_.tv_sec * 1000000000u +			\
	(uint64_t)burn_ts_.tv_nsec;					\
})

/*
 * The loop body.  BURN_SLOW=N repeats the store N times (a CPU N times
 * slower at this loop); BURN_FAST keeps the sum in a register (several
 * times faster than the store on most CPUs).  Neither changes how much
 * CPU time a burn takes: they exist to prove that (tests/progs/build.sh
 * passes PROG_CFLAGS through).
 */
#if defined(BURN_FAST)
#define BURN_STEP_(acc, i) ((acc) += (i))
#elif defined(BURN_SLOW)
#define BURN_STEP_(acc, i) \
	do { for (int k_ = 0; k_ < BURN_SLOW; k_++) sink += (i); } while (0)
#else
#define BURN_STEP_(acc, i) (sink += (i))
#endif

/* Spins in the calling function until the thread used @ns of CPU. */
#define burn_for(ns) do {						\
	uint64_t end_ = thread_cpu_ns() + (ns), acc_ = 0;		\
									\
	for (uint64_t i_ = 1;; i_++) {					\
		BURN_STEP_(acc_, i_);					\
		if (!(i_ & 0x3ffff) && thread_cpu_ns() >= end_)		\
			break;						\
	}								\
	sink += acc_;							\
} while (0)

#define BURN() burn_for(burn_ns)

/* Parses a number of CPU milliseconds (fractions allowed) into burn_ns. */
static inline void burn_set_ms(const char *ms)
{
	burn_ns = (uint64_t)(strtod(ms, NULL) * 1e6);
}

#endif
