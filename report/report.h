/*
 * report.h - showing an inferred profile (profile/run_profile.h): its
 * k-calling-context forests or its hot calling context tree, as text,
 * folded stacks, JSON or pprof, all behind one view; and what report
 * and compare share: opening a database for reading, choosing what to
 * report, the folded lines of a profile.
 *
 * One file per renderer: text.c, json.c, folded.c, hot.c (the HCCT in
 * each format), pprof.c and svg.c (a flame graph); report.c holds what
 * they share.
 */
#ifndef ICPPD_REPORT_REPORT_H
#define ICPPD_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "inference/cct.h"
#include "inference/kccf.h"
#include "profile/run_profile.h"

struct lines;
struct lines_frame;
struct report_base;
struct store;

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
	struct lines *lines;	/* call sites as file:line; NULL: none */
	struct report_dwarf *dwarf;	/* the functions inlined at each
					 * location (pprof; report__inline()
					 * for the rest); NULL: none
					 * (--no-inline) */
	/* A baseline (--base): text, JSON and folded show each function's
	 * and context's change of share against it, svg colours by it. */
	const struct report_base *base;
	FILE *out;
};

/*
 * What DWARF says at the addresses of a profile's modules: the
 * functions inlined there and the source lines (lines__inlined()), read
 * from store @st (may be NULL) where an earlier report kept them for
 * the build, else from the DWARF @l reads, and then kept in @st (when
 * it can be written) by report__dwarf_free().  A build-id's DWARF
 * never changes: a later report of the build opens no DWARF for the
 * addresses an earlier one asked about.  @p, @l and @st outlive it.
 */
struct report_dwarf;
struct report_dwarf *report__dwarf_new(const struct run_profile *p,
				       struct lines *l, struct store *st);
/* The frames at virtual address @vaddr of module @module_id, as
 * lines__inlined() gives them (names and files made printable; C++
 * names mangled), in *@out until the next call: their number, 0 when
 * unknown, or -ENOMEM. */
int report__dwarf_at(struct report_dwarf *d, int64_t module_id,
		     uint64_t vaddr, const struct lines_frame **out);
/* A row of the store's inlined table, @text (anyone's to write), as
 * frames into @fr (LINES_MAX_FRAMES; names and files @d's, valid while
 * it lives): their number, 0 when it is not a row a report writes (more
 * frames than the line reader gives, a named last frame, a line not
 * "NAME\tFILE\tLINE"), or -ENOMEM. */
int report__dwarf_row(struct report_dwarf *d, const char *text,
		      struct lines_frame *fr);
void report__dwarf_free(struct report_dwarf *d);

/*
 * Draws the functions inlined in @p's function frames as frames of
 * their own below them (CCT_INLINED), from what @d says: at each
 * callee's call site, and, for a leaf, at its function's sampled
 * instructions (@p read with RUN_PROFILE_PCS), whose samples split its
 * weight.  Replaces p->cct; a frame of a module without DWARF stays as
 * it was, and every frame id stays.  0 or -ENOMEM.
 */
int report__inline(struct run_profile *p, struct report_dwarf *d);

/* Writes @v's profile.  0, or -1 after logging why. */
int report__write(const struct report_view *v);

/* Opens an existing database: writable when the file and its folder
 * are, else read-only.  NULL after logging why. */
struct store *report__open(const char *path);

/* The latest measurement run of @st (@db names it in messages).  0, or
 * -1 after logging that there is none. */
int report__latest_run(struct store *st, const char *db, int64_t *id);

/* The one program with samples in @st that @exe names (a path, made
 * canonical when it exists, or a bare name such as cc1), into @out.
 * 0, or -1 after a line that lists the matches (several) or the
 * programs there are (none). */
int report__resolve_exe(struct store *st, const char *db, const char *exe,
			char *out, size_t len);

/* Refuses what cannot be shown with k = @k: no samples, or contexts
 * without any path map (-1 after logging why; @filtered: the samples
 * were chosen by process).  Names the programs without a map. */
int report__check(const struct run_profile *p, const char *db,
		  bool filtered, uint32_t k);

/* Calls @fn for every k-context of @t with its exclusive weight: its
 * @n frames, outermost first (valid in the call), and the group
 * report__folded() gives. */
int report__stacks(struct cct *t, uint32_t k,
		   int (*fn)(void *arg, const int64_t *frames, size_t n,
			     int64_t group, double weight),
		   void *arg);
/* What a ';' of a name is in a folded key (folded.c says why). */
#define FOLDED_SEMICOLON "\\x3b"
/* A frame of a folded key with its names' ';' back, in place. */
void report__folded_unescape(char *frame);
/* Calls @fn for every k-context of @t (exclusive weights): @key is its
 * frames, outermost first, joined by ';', a ';' in a name written as
 * FOLDED_SEMICOLON (valid in the call); @group
 * names its innermost frame, and its process when the context starts
 * with one (report__round()'s groups).  0, the first non-zero return of
 * @fn, or kccf__build's -ENOMEM or -E2BIG. */
int report__folded(struct cct *t, uint32_t k,
		   int (*fn)(void *arg, const char *key, int64_t group,
			     double weight),
		   void *arg);

/*
 * Whole counts for @n weights @w, into @out: within each group (@group,
 * the leaf function, or of one process: such samples are a whole
 * number), the
 * counts add up to the group's weight rounded, shared by largest
 * remainder, so exports in integers lose no weight.  A weight may get
 * 0.  0 or -ENOMEM.
 */
int report__round(const double *w, const int64_t *group, size_t n,
		  int64_t *out);

/* Logs why the k-contexts could not be built (-E2BIG: too deep for
 * that k; else out of memory). */
void report__forest_error(int err);

/* One line of a folded file, "frame;...;frame WEIGHT", split in place:
 * the frames stay in @line, trailing newline and weight cut off.  0 with
 * the weight (finite, >= 0) in *@w, 1 for a blank line, -1 when the
 * line is neither. */
int report__folded_line(char *line, double *w);

/* Prints @w with no decimals when it is whole, else with up to 3. */
void report__weight(FILE *out, double w);

/* The last @k + 1 frames of folded key @key (all with KCCF_INF): a
 * pointer into it. */
const char *report__cut_key(const char *key, uint32_t k);

/*
 * A baseline for a differential report (diff.c): the k-contexts of
 * profile @p (report__folded()'s keys and weights), or of the folded
 * lines of @in cut to k.  NULL with *@err -ENOMEM, report__folded()'s
 * errors, -EIO, or -EINVAL at line *@bad_line that is not a folded
 * line.
 */
struct report_base *report__base_of(const struct run_profile *p, uint32_t k,
				    int *err);
struct report_base *report__base_read(FILE *in, uint32_t k, int *err,
				      size_t *bad_line);
void report__base_free(struct report_base *b);
double report__base_total(const struct report_base *b);
/* Its contexts: @i below report__base_size(), the weight into *@w. */
size_t report__base_size(const struct report_base *b);
const char *report__base_key(const struct report_base *b, size_t i,
			     double *w);

#endif
