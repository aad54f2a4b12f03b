/*
 * selfregs.h - capture this process's own IP, SP, BP and the true CFA at
 * one instruction, to check CFA rules against GCC's own idea of the CFA.
 */
#ifndef ICPPD_TESTS_SELFREGS_H
#define ICPPD_TESTS_SELFREGS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct capture {
	uint64_t ip, sp, bp, cfa;
};

/* The IP captured is that of the instruction after the lea: SP and BP
 * are read right there, so all four values belong to one point. */
#define CAPTURE(c) do { \
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" \
			 : "=r"((c)->ip), "=r"((c)->sp), "=r"((c)->bp)); \
	(c)->cfa = (uint64_t)(uintptr_t)__builtin_dwarf_cfa(); \
} while (0)

/* The mapping of this executable holding @addr: start and file offset. */
static inline int self_mapping(uint64_t addr, uint64_t *start, uint64_t *pgoff)
{
	char line[512], path[256];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = -1;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %255s", &lo, &hi,
			   &off, path) == 4 && addr >= lo && addr < hi) {
			*start = lo;
			*pgoff = off;
			found = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

#endif
