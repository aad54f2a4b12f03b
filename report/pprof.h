/*
 * pprof.h - a profile as gzipped profile.proto (pprof), encoded with
 * protobuf-c and compressed with zlib.
 *
 * One sample per CCT record: its context's frames leaf first (the last
 * K + 1 with --k), a "samples" count and a second value: CPU
 * nanoseconds for clock events, events for a fixed period, else
 * micro-samples.  Apportioned weights are fractions: the counts are
 * whole, by largest remainder within each leaf function
 * (render__round), and the second value is the count times the period,
 * or with @exact the fraction times the period.  A sample whose value
 * is 0 is left out.  Each sample is labelled "inference" = precise,
 * ambiguous, searched or unknown.
 *
 * Mappings carry their module's path, build-id and the span of its code
 * (read from the file when it is still there, with the same build-id);
 * the one the heaviest stacks start in (the program) comes first, as
 * pprof names a profile by its first mapping.  Addresses are link-time
 * virtual addresses, so a mapping's start is its code's.  Functions and
 * locations carry source files and lines from DWARF where the module
 * has them; a caller's location is its call site.  With @dwarf, a
 * location holds a Line for each function inlined at its address,
 * innermost first, then its own function's (pprof's way: one Location,
 * several Lines), each inlined function a Function of its own.  A leaf's location is
 * the instruction sampled: a leaf function's count over its records is
 * split among its sampled instructions (@pcs) in proportion to their
 * samples, by largest remainder, and each record takes its count from
 * what they have left, in proportion, so its parts add up to it and
 * each instruction gets its share exactly; a record with a count of 0
 * (--exact) goes to the hottest.  Where no instruction was recorded, the leaf is the
 * function's start.
 */
#ifndef ICPPD_REPORT_PPROF_H
#define ICPPD_REPORT_PPROF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "inference/cct.h"

struct lines;
struct profile_dwarf;
struct store_module;
struct store_pc;

struct pprof_input {
	struct cct *cct;
	uint32_t k;			/* KCCF_INF: whole contexts */
	struct lines *lines;		/* may be NULL: no line numbers */
	struct profile_dwarf *dwarf;	/* may be NULL; else the lines, and
					 * a Line per function inlined at
					 * each location, from it */
	bool mangled;			/* C++ names of those as spelled */
	const struct store_module *modules;
	size_t nmodules;
	const char *event;		/* the sampled event */
	bool clock;			/* a clock event: periods are ns */
	uint64_t period;		/* per sample; 0: unknown (a
					 * frequency of another event) */
	int64_t time_ns;		/* when the run started */
	int64_t duration_ns;		/* 0: unknown */
	bool exact;			/* second value: fraction x period */
	bool offcpu;			/* weights: microseconds blocked
					 * (types "blocked"/microseconds,
					 * "off-cpu"/nanoseconds) */
	/* the sampled instructions, sorted by function (may be none) */
	const struct store_pc *pcs;
	size_t npcs;
};

/* Writes the profile to @out, gzipped.  0, -ENOMEM, or the -errno of a
 * failed write (-EIO when there is none). */
int pprof__write(FILE *out, const struct pprof_input *in);

#endif
