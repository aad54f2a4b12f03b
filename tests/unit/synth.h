/*
 * synth.h - builds perf_event records byte by byte, in the layout icppd
 * requests (see collector/record.h), for decoder and collector tests.
 */
#ifndef ICPPD_TESTS_SYNTH_H
#define ICPPD_TESTS_SYNTH_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

struct synth {
	uint8_t buf[512];
	size_t len;
};

static inline void synth_put(struct synth *s, const void *p, size_t n)
{
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

static inline void synth_u64(struct synth *s, uint64_t v) { synth_put(s, &v, 8); }
static inline void synth_u32(struct synth *s, uint32_t v) { synth_put(s, &v, 4); }

static inline void synth_begin(struct synth *s, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { type, misc, 0 };

	s->len = 0;
	synth_put(s, &h, sizeof(h));
}

/* Pads to 8 bytes and sets header.size. */
static inline struct perf_event_header *synth_end(struct synth *s)
{
	struct perf_event_header *h = (void *)s->buf;

	while (s->len % 8)
		s->buf[s->len++] = 0;
	h->size = (uint16_t)s->len;
	return h;
}

static inline void synth_trailer(struct synth *s, uint32_t pid, uint32_t tid,
				 uint64_t time)
{
	synth_u32(s, pid);
	synth_u32(s, tid);
	synth_u64(s, time);
	synth_u64(s, 42);	/* identifier */
}

/* A sample's fields up to the registers (open: the caller ends it). */
static inline void synth_sample_head(struct synth *s, uint64_t id, uint32_t pid,
				     uint32_t tid, uint64_t time, uint64_t ip,
				     uint64_t sp, uint64_t bp, int with_regs)
{
	synth_begin(s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	synth_u64(s, id);	/* identifier */
	synth_u64(s, ip);
	synth_u32(s, pid);
	synth_u32(s, tid);
	synth_u64(s, time);
	if (with_regs) {
		synth_u64(s, PERF_SAMPLE_REGS_ABI_64);
		synth_u64(s, bp);
		synth_u64(s, sp);
		synth_u64(s, ip);
	} else {
		synth_u64(s, PERF_SAMPLE_REGS_ABI_NONE);
	}
}

static inline struct perf_event_header *
synth_sample(struct synth *s, uint32_t pid, uint32_t tid, uint64_t time,
	     uint64_t ip, uint64_t sp, uint64_t bp, int with_regs)
{
	synth_sample_head(s, 42, pid, tid, time, ip, sp, bp, with_regs);
	return synth_end(s);
}

/* A learning event's sample: regs, then a stack trailer of @size bytes
 * (zeros) of which the kernel copied @dyn. */
static inline struct perf_event_header *
synth_sample_stack(struct synth *s, uint32_t pid, uint32_t tid, uint64_t time,
		   uint64_t ip, uint64_t sp, uint64_t bp, uint64_t size,
		   uint64_t dyn)
{
	synth_sample_head(s, 43, pid, tid, time, ip, sp, bp, 1);
	synth_u64(s, size);
	for (uint64_t i = 0; i < size; i += 8)
		synth_u64(s, 0);
	if (size)
		synth_u64(s, dyn);
	return synth_end(s);
}

static inline struct perf_event_header *
synth_mmap2(struct synth *s, uint32_t pid, uint64_t start, uint64_t len,
	    uint64_t pgoff, uint32_t prot, const char *file, uint64_t time)
{
	synth_begin(s, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	synth_u32(s, pid);
	synth_u32(s, pid);
	synth_u64(s, start);
	synth_u64(s, len);
	synth_u64(s, pgoff);
	{	/* the file's own device and inode, as the kernel gives */
		struct stat st;
		int real = file[0] == '/' && !stat(file, &st);

		synth_u32(s, real ? major(st.st_dev) : 8);
		synth_u32(s, real ? minor(st.st_dev) : 1);
		synth_u64(s, real ? st.st_ino : 1234);
	}
	synth_u64(s, 0);	/* ino generation */
	synth_u32(s, prot);
	synth_u32(s, 2);	/* MAP_PRIVATE */
	synth_put(s, file, strlen(file) + 1);
	while (s->len % 8)
		s->buf[s->len++] = 0;
	synth_trailer(s, pid, pid, time);
	return synth_end(s);
}

static inline struct perf_event_header *
synth_comm(struct synth *s, uint32_t pid, uint32_t tid, const char *comm,
	   int exec, uint64_t time)
{
	synth_begin(s, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	synth_u32(s, pid);
	synth_u32(s, tid);
	synth_put(s, comm, strlen(comm) + 1);
	while (s->len % 8)
		s->buf[s->len++] = 0;
	synth_trailer(s, pid, tid, time);
	return synth_end(s);
}

static inline struct perf_event_header *
synth_task(struct synth *s, uint32_t type, uint32_t pid, uint32_t ppid,
	   uint32_t tid, uint32_t ptid, uint64_t time)
{
	synth_begin(s, type, 0);
	synth_u32(s, pid);
	synth_u32(s, ppid);
	synth_u32(s, tid);
	synth_u32(s, ptid);
	synth_u64(s, time);
	synth_trailer(s, pid, tid, time);
	return synth_end(s);
}

static inline struct perf_event_header *
synth_lost(struct synth *s, uint64_t lost, uint64_t time)
{
	synth_begin(s, PERF_RECORD_LOST, 0);
	synth_u64(s, 42);
	synth_u64(s, lost);
	synth_trailer(s, 0, 0, time);
	return synth_end(s);
}

#endif
