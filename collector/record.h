/*
 * record.h - decoding perf_event ring-buffer records.
 *
 * Pure functions over a record already copied out of the ring: every
 * field is checked against header.size before it is read (after perf's
 * OVERFLOW_CHECK), so a truncated or lying record yields -EINVAL, never
 * an out-of-bounds read.  The layout is the one the collector asks for:
 * sample_type IDENTIFIER|IP|TID|TIME|REGS_USER with sample_id_all, so
 * every non-sample record ends in {pid, tid, time, identifier}.
 * Training and validation runs add PERF_SAMPLE_STACK_USER, which comes
 * last; its presence is read from the bytes left after the registers.
 */
#ifndef ICPPD_COLLECTOR_RECORD_H
#define ICPPD_COLLECTOR_RECORD_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The sample_type and registers icppd requests; record.c relies on them. */
#define ICPPD_SAMPLE_TYPE (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | \
			   PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			   PERF_SAMPLE_REGS_USER)
/* x86-64 perf register numbers (arch/x86/include/uapi/asm/perf_regs.h). */
#define ICPPD_REG_BP 6
#define ICPPD_REG_SP 7
#define ICPPD_REG_IP 8
#define ICPPD_REGS_MASK ((1ULL << ICPPD_REG_BP) | (1ULL << ICPPD_REG_SP) | \
			 (1ULL << ICPPD_REG_IP))

/* Trailer of non-sample records (sample_id_all). */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time, id;
};

struct perf_sample {
	uint64_t id, ip, time;
	uint32_t pid, tid;
	bool has_regs;		/* false for kernel threads */
	uint64_t bp, sp, uip;	/* user registers */
	bool has_stack;		/* PERF_SAMPLE_STACK_USER was present */
	const uint8_t *stack;	/* copy of [sp, sp + stack_size), into the
				 * record; NULL when nothing was copied */
	uint64_t stack_size;
	uint64_t stack_cap;	/* the copy's requested size */
	/* PERF_SAMPLE_CALLCHAIN (record --kernel, the kernel's part): its
	 * entries, context markers included, into the record */
	const uint64_t *chain;
	uint64_t nchain;
};

struct rec_mmap2 {
	uint32_t pid, tid;
	uint64_t start, len, pgoff, dev, ino;
	uint32_t prot, flags;
	const char *filename;	/* into the record */
	struct sample_id sid;
};

struct rec_comm {
	uint32_t pid, tid;
	bool exec;
	const char *comm;	/* into the record */
	struct sample_id sid;
};

/* PERF_RECORD_FORK and PERF_RECORD_EXIT */
struct rec_task {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
	struct sample_id sid;
};

int record__parse_sample(const struct perf_event_header *h,
			 struct perf_sample *out);
/* The same for events that also carry PERF_SAMPLE_CALLCHAIN. */
int record__parse_sample_chain(const struct perf_event_header *h,
			       struct perf_sample *out);
/*
 * Copies sample @h to @dst (room for h->size bytes) without the unused
 * tail of its stack copy: a copy requested @stack_bytes long that the
 * kernel filled only dyn_size of (the stack ended first) keeps its
 * first dyn_size bytes, rounded up to 8, and says so in its size word.
 * The result parses as the same sample.  A record that is not a sample
 * with a copy of that size is copied whole.  Returns the bytes written.
 */
size_t record__copy_trimmed(const struct perf_event_header *h,
			    uint64_t stack_bytes, uint8_t *dst);
int record__parse_mmap2(const struct perf_event_header *h,
			struct rec_mmap2 *out);
int record__parse_comm(const struct perf_event_header *h, struct rec_comm *out);
int record__parse_task(const struct perf_event_header *h, struct rec_task *out);
/* PERF_RECORD_SWITCH and _SWITCH_CPU_WIDE (attr.context_switch): task
 * @sid.tid switched out (@preempted: runnable, not waiting) or back in,
 * at @sid's time. */
struct rec_switch {
	struct sample_id sid;
	bool out, preempted;
};
int record__parse_switch(const struct perf_event_header *h,
			 struct rec_switch *out);
/* PERF_RECORD_LOST and PERF_RECORD_LOST_SAMPLES: how many were lost. */
int record__parse_lost(const struct perf_event_header *h, uint64_t *lost);
/* pid and tid of a sample without decoding the rest (the peek, which
 * runs on every sample before ordering).  0 or -EINVAL. */
int record__sample_task(const struct perf_event_header *h, uint32_t *pid,
			uint32_t *tid);
/* The time stamp used to order @h among the rings: the sample's time or
 * the sample_id trailer's.  -EINVAL when the record has none. */
int record__time(const struct perf_event_header *h, uint64_t *time);

#endif
