/*
 * test_record.c - the record decoder on synthesized records, including
 * truncated ones and ones whose sizes lie.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collector/record.h"
#include "tests/tap.h"
#include "tests/unit/synth.h"

static void test_sample(void)
{
	struct synth s;
	struct perf_sample out;
	struct perf_event_header *h;
	uint64_t t;

	h = synth_sample(&s, 100, 101, 5555, 0x401000, 0x7ffd0000, 0x7ffd0040, 1);
	is_int(record__parse_sample(h, &out), 0, "full sample decodes");
	is_int(out.pid, 100, "sample pid");
	is_int(out.tid, 101, "sample tid");
	is_int(out.time, 5555, "sample time");
	ok(out.has_regs, "sample has user registers");
	is_int(out.uip, 0x401000, "user ip");
	is_int(out.sp, 0x7ffd0000, "user sp");
	is_int(out.bp, 0x7ffd0040, "user bp");
	{
		uint32_t pid = 0, tid = 0;

		is_int(record__sample_task(h, &pid, &tid), 0, "sample task read alone");
		ok(pid == 100 && tid == 101, "sample task is pid 100, tid 101");
		h->size = 20;
		is_int(record__sample_task(h, &pid, &tid), -EINVAL,
		       "sample task refused from a truncated record");
		h->size = 72;
	}
	is_int(record__time(h, &t), 0, "sample time for ordering");
	is_int(t, 5555, "ordering time is the sample time");

	h = synth_sample(&s, 1, 2, 3, 0xffffffff81000000ULL, 0, 0, 0);
	is_int(record__parse_sample(h, &out), 0, "kernel-thread sample decodes");
	ok(!out.has_regs, "no user registers when abi is NONE");

	/* Truncated: one register short, header says so honestly. */
	h = synth_sample(&s, 1, 2, 3, 4, 5, 6, 1);
	h->size -= 8;
	is_int(record__parse_sample(h, &out), -EINVAL, "truncated sample rejected");
	/* Oversized: trailing garbage beyond the declared fields (read as
	 * a stack copy whose size lies). */
	h = synth_sample(&s, 1, 2, 3, 4, 5, 6, 1);
	memset(s.buf + h->size, 0xab, 8);
	h->size += 8;
	is_int(record__parse_sample(h, &out), -EINVAL, "oversized sample rejected");
	/* A header shorter than itself. */
	h->size = 4;
	is_int(record__parse_sample(h, &out), -EINVAL, "size below header rejected");
	is_int(record__time(h, &t), -EINVAL, "no time in a record below header size");
	/* Unknown register ABI. */
	h = synth_sample(&s, 1, 2, 3, 4, 5, 6, 1);
	s.buf[8 + 32] = 7;	/* abi follows id, ip, pid/tid, time */
	is_int(record__parse_sample(h, &out), -EINVAL, "unknown regs ABI rejected");
}

static void test_mmap2(void)
{
	struct synth s;
	struct rec_mmap2 m;
	struct perf_event_header *h;
	uint64_t t;

	h = synth_mmap2(&s, 77, 0x55550000, 0x2000, 0x1000, 5,
			"/usr/lib/libfoo.so", 999);
	is_int(record__parse_mmap2(h, &m), 0, "mmap2 decodes");
	is_int(m.pid, 77, "mmap2 pid");
	is_int(m.start, 0x55550000, "mmap2 start");
	is_int(m.len, 0x2000, "mmap2 len");
	is_int(m.pgoff, 0x1000, "mmap2 pgoff");
	is_int(m.prot, 5, "mmap2 prot");
	is_int(m.ino, 1234, "mmap2 inode");
	is_str(m.filename, "/usr/lib/libfoo.so", "mmap2 file name");
	is_int(m.sid.time, 999, "mmap2 trailer time");
	is_int(record__time(h, &t), 0, "mmap2 time for ordering");
	is_int(t, 999, "ordering time from the sample_id trailer");

	/* File name without its NUL: cut the record inside the name. */
	h = synth_mmap2(&s, 77, 0x1000, 0x1000, 0, 5, "/x", 1);
	memset(s.buf + 8 + 64, 'A', (size_t)h->size - 8 - 64);
	is_int(record__parse_mmap2(h, &m), -EINVAL, "unterminated file name rejected");
	h = synth_mmap2(&s, 77, 0x1000, 0x1000, 0, 5, "/x", 1);
	h->size = 8 + 40;
	is_int(record__parse_mmap2(h, &m), -EINVAL, "truncated mmap2 rejected");
	h = synth_mmap2(&s, 77, UINT64_MAX - 10, 0x1000, 0, 5, "/x", 1);
	is_int(record__parse_mmap2(h, &m), -EINVAL, "wrapping address range rejected");
}

static void test_others(void)
{
	struct synth s;
	struct rec_comm c;
	struct rec_task t;
	struct perf_event_header *h;
	uint64_t lost;

	h = synth_comm(&s, 5, 6, "worker (x)", 1, 10);
	is_int(record__parse_comm(h, &c), 0, "comm decodes");
	is_str(c.comm, "worker (x)", "comm name");
	ok(c.exec, "comm exec flag");
	h = synth_task(&s, PERF_RECORD_FORK, 9, 5, 9, 5, 11);
	is_int(record__parse_task(h, &t), 0, "fork decodes");
	is_int(t.ppid, 5, "fork parent pid");
	is_int(t.time, 11, "fork time");
	h->size = 24;
	is_int(record__parse_task(h, &t), -EINVAL, "truncated fork rejected");
	h = synth_lost(&s, 17, 12);
	is_int(record__parse_lost(h, &lost), 0, "lost decodes");
	is_int(lost, 17, "lost count");
	h->type = PERF_RECORD_SAMPLE;
	is_int(record__parse_lost(h, &lost), -EINVAL, "lost parser refuses other types");
}

/* A sample of a training run: the registers, then a stack copy. */
static void test_stack(void)
{
	struct synth s;
	struct perf_sample out;
	struct perf_event_header *h;
	size_t base;

	synth_sample(&s, 1, 2, 3, 0x401000, 0x7ffd0000, 0x7ffd0040, 1);
	base = s.len;
	synth_u64(&s, 32);			/* size */
	for (int i = 0; i < 4; i++)
		synth_u64(&s, 0x1111 * (uint64_t)(i + 1));
	synth_u64(&s, 24);			/* dyn_size: 24 copied */
	h = synth_end(&s);
	is_int(record__parse_sample(h, &out), 0, "sample with a stack copy decodes");
	ok(out.has_stack, "stack copy present");
	is_int(out.stack_size, 24, "stack size is dyn_size");
	ok(out.stack == s.buf + base + 8, "stack points into the record");
	is_int(out.sp, 0x7ffd0000, "registers still decoded");

	s.len = base;
	synth_u64(&s, 32);
	synth_u64(&s, 1);
	synth_u64(&s, 2);
	synth_u64(&s, 3);
	synth_u64(&s, 4);
	synth_u64(&s, 40);			/* dyn_size > size: a lie */
	h = synth_end(&s);
	is_int(record__parse_sample(h, &out), -EINVAL, "dyn_size above size rejected");

	s.len = base;
	synth_u64(&s, 4096);			/* size beyond the record */
	synth_u64(&s, 0);
	h = synth_end(&s);
	is_int(record__parse_sample(h, &out), -EINVAL, "stack size beyond the record rejected");

	s.len = base;
	synth_u64(&s, 0);			/* nothing copied: no dyn_size */
	h = synth_end(&s);
	is_int(record__parse_sample(h, &out), 0, "empty stack copy decodes");
	ok(out.has_stack && !out.stack && !out.stack_size, "empty stack copy: no data");
}

/* A copy queued without its unused tail parses as the same sample. */
/* A sample whose 8-word stack copy the kernel filled @dyn bytes of. */
static struct perf_event_header *eight_words(struct synth *s, uint64_t dyn)
{
	synth_sample(s, 1, 2, 3, 0x401000, 0x7ffd0000, 0x7ffd0040, 1);
	synth_u64(s, 64);			/* size */
	for (int i = 0; i < 8; i++)
		synth_u64(s, 0x1111 * (uint64_t)(i + 1));
	synth_u64(s, dyn);
	return synth_end(s);
}

static void test_trimmed(void)
{
	struct synth s;
	struct perf_sample a, b;
	struct perf_event_header *h = eight_words(&s, 20), *t;
	uint8_t out[512];
	size_t n = record__copy_trimmed(h, 64, out);

	t = (struct perf_event_header *)(void *)out;
	is_int(n, h->size - 40, "the unused tail is dropped (kept: 24 bytes, "
	       "20 rounded up): %zu", n);
	is_int(t->size, n, "... and the header says so");
	ok(!record__parse_sample(h, &a) && !record__parse_sample(t, &b),
	   "both decode");
	ok(a.stack_size == b.stack_size && b.stack_size == 20 &&
	   !memcmp(a.stack, b.stack, 20) && a.sp == b.sp && a.ip == b.ip &&
	   a.time == b.time, "... as the same sample");

	is_int(record__copy_trimmed(h, 32, out), h->size,
	       "a copy of another size is copied whole");
	ok(!memcmp(out, h, h->size), "... byte for byte");
	is_int(record__copy_trimmed(h, 0, out), h->size,
	       "no copy asked for: whole");
	h = eight_words(&s, 64);		/* the stack filled the copy */
	is_int(record__copy_trimmed(h, 64, out), h->size,
	       "a full copy stays whole");
	h = eight_words(&s, 72);		/* dyn_size > size: a lie */
	is_int(record__copy_trimmed(h, 64, out), h->size,
	       "a lying dyn_size is not trimmed by");
	h->type = PERF_RECORD_MMAP2;
	is_int(record__copy_trimmed(h, 64, out), h->size,
	       "a record that is not a sample is copied whole");
}

int main(void)
{
	test_sample();
	test_stack();
	test_trimmed();
	test_mmap2();
	test_others();
	return tap_done();
}
