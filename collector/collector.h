/*
 * collector.h - turns decoded perf records into context identifiers.
 *
 * The collector keeps, per process, the executable and anonymous
 * mappings (from MMAP2 records, or /proc for an attached process) and the
 * main thread's stack base; per sample it finds the module and function
 * of the PC, the CFA from the module's CFI, the stack base of the thread
 * (main thread: startstack & ~15; other threads: the end of the anonymous
 * mapping holding SP), and counts height = base - CFA in the aggregate.
 * It knows nothing of SQL or of how records were read.
 *
 * Records must be given in time order (collector__process); the session
 * calls collector__peek on each record as soon as it is read, before
 * ordering, so /proc facts that vanish with a short-lived process (its
 * startstack) are captured while it is still alive.
 */
#ifndef ICPPD_COLLECTOR_COLLECTOR_H
#define ICPPD_COLLECTOR_COLLECTOR_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <sys/types.h>

#include "collector/aggregate.h"

struct module_cache;

struct collector_stats {
	uint64_t samples;	/* sample records seen */
	uint64_t cids;		/* samples with a CID */
	uint64_t unresolved;	/* samples without one, by reason below */
	uint64_t by_reason[CID_NR_FAILURES];
	uint64_t lost;		/* PERF_RECORD_LOST(_SAMPLES) totals */
	uint64_t throttled;	/* PERF_RECORD_THROTTLE count */
	uint64_t malformed;	/* records that failed to decode */
};

struct collector;

/* Borrows @modules and @agg; both must outlive the collector. */
struct collector *collector__new(struct module_cache *modules,
				 struct aggregate *agg);
void collector__free(struct collector *c);

void collector__peek(struct collector *c, const struct perf_event_header *h);
int collector__process(struct collector *c, const struct perf_event_header *h);

/* Seeds a running process from /proc (attach mode): its mappings, main
 * stack base and thread names.  0 or -errno. */
int collector__add_running(struct collector *c, pid_t pid);

/* Records the main stack base of @pid, known from outside: for the
 * launched command, read right after its exec, and valid from that exec
 * record on. */
int collector__set_main_base(struct collector *c, pid_t pid, uint64_t base);

const struct collector_stats *collector__stats(const struct collector *c);

#endif
