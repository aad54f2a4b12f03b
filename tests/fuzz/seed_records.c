/*
 * seed_records.c - writes the record decoder's seed streams (see
 * seeds.sh): a process's life as the kernel records it, with an
 * executable mapped from @elf and samples with and without a stack
 * copy.  Usage: seed_records ELF OUTDIR
 */
#include <stdio.h>
#include <sys/mman.h>

#include "tests/unit/synth.h"

static FILE *out;

static void put(const struct perf_event_header *h)
{
	fwrite(h, 1, h->size, out);
}

static void stack_sample(struct synth *s, uint64_t ip, uint64_t sp)
{
	synth_begin(s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	synth_u64(s, 42);
	synth_u64(s, ip);
	synth_u32(s, 100);
	synth_u32(s, 100);
	synth_u64(s, 10);
	synth_u64(s, PERF_SAMPLE_REGS_ABI_64);
	synth_u64(s, sp + 0x40);
	synth_u64(s, sp);
	synth_u64(s, ip);
	synth_u64(s, 64);		/* stack size */
	for (int i = 0; i < 8; i++)	/* return addresses and frames */
		synth_u64(s, i % 2 ? 0x401010 + 16 * i : sp + 16 * i);
	synth_u64(s, 64);		/* dyn_size */
	put(synth_end(s));
}

int main(int argc, char **argv)
{
	struct synth s;
	char path[4096];

	if (argc != 3)
		return 2;
	snprintf(path, sizeof(path), "%s/records-1", argv[2]);
	if (!(out = fopen(path, "w")))
		return 1;
	put(synth_comm(&s, 100, 100, "app", 1, 1));
	put(synth_mmap2(&s, 100, 0x400000, 0x2000, 0, PROT_READ | PROT_EXEC,
			argv[1], 2));
	put(synth_mmap2(&s, 100, 0x7ffd0000, 0x10000, 0,
			PROT_READ | PROT_WRITE, "[stack]", 3));
	put(synth_sample(&s, 100, 100, 4, 0x401020, 0x7ffd8000, 0x7ffd8040, 1));
	stack_sample(&s, 0x401030, 0x7ffd8000);
	put(synth_task(&s, PERF_RECORD_EXIT, 100, 1, 100, 1, 20));
	fclose(out);
	snprintf(path, sizeof(path), "%s/records-2", argv[2]);
	if (!(out = fopen(path, "w")))
		return 1;
	put(synth_task(&s, PERF_RECORD_FORK, 101, 100, 102, 100, 1));
	put(synth_sample(&s, 101, 102, 2, 0x1234, 0, 0, 0));
	put(synth_lost(&s, 7, 3));
	put(synth_comm(&s, 101, 102, "worker", 0, 4));
	fclose(out);
	return 0;
}
