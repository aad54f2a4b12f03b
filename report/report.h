/*
 * report.h - showing a profile (profile/profile.h builds it): its
 * k-calling-context forests or its hot calling context tree, as text,
 * folded stacks, JSON, pprof or a flame graph, all behind one view.
 *
 * Rendering only: one file per renderer (text.c, json.c, folded.c,
 * hot.c for the HCCT in each format, sorted.c, children.c, diff.c,
 * pprof.c, svg.c), what they share in render.c, and report.c, which
 * dispatches.
 */
#ifndef ICPPD_REPORT_REPORT_H
#define ICPPD_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "inference/cct.h"
#include "inference/kccf.h"
#include "profile/profile.h"

struct lines;

enum report_format { REPORT_TEXT, REPORT_FOLDED, REPORT_JSON, REPORT_PPROF,
		     REPORT_SVG, REPORT_NR_FORMATS };

/* "text", "folded", "json", "pprof", "svg", then NULL: the -f choices. */
extern const char *const report_format_names[];

/* The keys of --sort, perf report's names. */
enum report_sort { REPORT_SORT_COMM, REPORT_SORT_PID, REPORT_SORT_DSO,
		   REPORT_SORT_SYM, REPORT_NR_SORTS };
/* "comm", "pid", "dso", "sym", then NULL. */
extern const char *const report_sort_names[];

/* What to show of a profile, and where. */
struct report_view {
	const struct run_profile *p;
	enum report_format fmt;
	uint32_t k;		/* callers per context; KCCF_INF: all */
	bool inclusive;		/* weigh a context by all below it */
	double min_percent;	/* hide contexts under this % of the total */
	double similar;		/* > 0: hide contexts under this % of their
				 * function's weight */
	double phi;		/* > 0: the HCCT of contexts >= phi instead */
	bool exact;		/* folded, pprof: apportioned weights as
				 * fractions, not whole counts */
	enum report_sort sort[REPORT_NR_SORTS];	/* text: a flat table by
						 * these keys instead */
	size_t nsort;		/* 0: no table */
	/* Only the samples whose function is in one of these binaries
	 * (names or paths) or is one of these functions, comma-separated
	 * (NULL: every one), as perf report's --dsos and --symbols. */
	const char *dsos, *symbols;
	bool children;		/* text: the top-down table, each function's
				 * total and self and what it calls, k
				 * levels deep, instead of the forests */
	struct lines *lines;	/* call sites as file:line; NULL: none */
	struct profile_dwarf *dwarf;	/* the functions inlined at each
					 * location (pprof, which draws
					 * them itself); NULL: none
					 * (--no-inline) */
	/* A baseline (--base): text, JSON and folded show each function's
	 * and context's change of share against it, svg colours by it. */
	const struct profile_base *base;
	FILE *out;
};

/* Writes @v's profile.  0, or -1 after logging why. */
int report__write(const struct report_view *v);

#endif
