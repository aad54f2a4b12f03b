/*
 * pprof.h - a profile as gzipped profile.proto (pprof), encoded with
 * protobuf-c and compressed with zlib.
 *
 * One sample per CCT record: its context's frames leaf first (the last
 * K + 1 with --k), a "samples" value (rounded: apportioned weights are
 * fractions) and a second value that keeps the fractions: CPU
 * nanoseconds for clock events, else micro-samples.  Each sample is
 * labelled "inference" = precise, ambiguous, searched or unknown.
 * Functions and locations carry source files and lines from DWARF where
 * the module has them; a caller's location is its call site.
 */
#ifndef ICPPD_REPORT_PPROF_H
#define ICPPD_REPORT_PPROF_H

#include <stdint.h>
#include <stdio.h>

#include "inference/cct.h"

struct lines;
struct store_module;

struct pprof_input {
	struct cct *cct;
	uint32_t k;			/* KCCF_INF: whole contexts */
	struct lines *lines;		/* may be NULL: no line numbers */
	const struct store_module *modules;
	size_t nmodules;
	uint64_t ns_per_sample;		/* 0: not a clock event */
	int64_t time_ns;		/* when the run started */
};

/* Writes the profile to @out, gzipped.  0, -ENOMEM, or the -errno of a
 * failed write (-EIO when there is none). */
int pprof__write(FILE *out, const struct pprof_input *in);

#endif
