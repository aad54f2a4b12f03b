/*
 * annotate.h - a function's samples by instruction and source line
 * (profile/annotate.h builds them), printed as perf annotate --stdio
 * prints them: a summary of the sampled source lines, then the
 * disassembly, each instruction with its share of the function's
 * samples and the source lines interleaved.
 */
#ifndef ICPPD_REPORT_ANNOTATE_H
#define ICPPD_REPORT_ANNOTATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/annotate.h"

/* Source files are shown up to this size, and this many of them (the
 * others by name and line only). */
#define ANNOTATE_MAX_SOURCE ((size_t)8 << 20)
#define ANNOTATE_MAX_FILES 64

/* Prints @a, sampled by @event in run @run_id, to @out; with @source,
 * the text of its source lines where their files are readable. */
void annotate__print(FILE *out, const struct annotation *a, const char *event,
		     int64_t run_id, bool source);

#endif
