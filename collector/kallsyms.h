/*
 * kallsyms.h - the running kernel's function names, from /proc/kallsyms
 * (record --kernel): readable with their addresses by root, or where
 * kernel.kptr_restrict allows; elsewhere every address reads 0 and the
 * kernel's samples stay under one "[kernel]" frame.
 */
#ifndef ICPPD_COLLECTOR_KALLSYMS_H
#define ICPPD_COLLECTOR_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

/* Lines read at most: a kernel with every module has some 200,000. */
#define KALLSYMS_MAX_SYMBOLS (2u << 20)
/* The file read at most. */
#define KALLSYMS_MAX_BYTES ((size_t)128 << 20)

struct kallsyms;

/* The text symbols of @path (NULL: /proc/kallsyms), sorted; NULL when
 * none has an address (kptr_restrict) or memory is short. */
struct kallsyms *kallsyms__load(const char *path);
void kallsyms__delete(struct kallsyms *k);
/* The function holding @addr, or NULL (before the first symbol). */
const char *kallsyms__find(const struct kallsyms *k, uint64_t addr);
size_t kallsyms__count(const struct kallsyms *k);

#endif
