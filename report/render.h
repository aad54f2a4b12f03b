/*
 * render.h - private to report/: what the renderers share (render.c).
 * Each renderer (text.c, json.c, folded.c, hot.c, pprof.c, sorted.c,
 * children.c) writes one format of report__write()'s view; report.c
 * only dispatches to them, and no renderer calls another.
 */
#ifndef ICPPD_REPORT_RENDER_H
#define ICPPD_REPORT_RENDER_H

#include "profile/folded_keys.h"
#include "report/report.h"

struct render {
	const struct report_view *v;
	const struct run_profile *p;
	FILE *out;
	double total;		/* the profile's weight */
	bool integral;		/* every weight is a whole count: nothing
				 * was apportioned */
};

/* A line's weight and its share of the total, as the text tables start:
 * a whole count when the weight is whole, else one decimal. */
void render__count(const struct render *r, double w);

/* The forests (text.c, json.c), the HCCT (hot.c), folded (folded.c),
 * pprof (pprof.c), a flame graph (svg.c).  0, or -1 after logging why. */
void render__text(const struct render *r, const struct kccf *f);
void render__json(const struct render *r, const struct kccf *f);
int render__hot(const struct render *r);
int render__folded(const struct render *r);
int render__pprof(const struct render *r);
int render__svg(const struct render *r);
/* Text, JSON or folded against v->base (diff.c). */
int render__diff(const struct render *r);
/* The flat table of --sort (sorted.c). */
int render__sorted(const struct render *r);
/* The top-down table of --children (children.c). */
int render__children(const struct render *r);

/* What a weight counts: "samples", or "us" (microseconds blocked) in
 * an off-CPU profile. */
const char *render__unit(const struct render *r);

/* The run line and the inference shares above a text report. */
void render__header(const struct render *r);
/* `{"run_id": ..., "samples": ..., "inference": {...}` (left open). */
void render__json_stats(const struct render *r);

/* Whether forest node @n is shown: above --min-percent, and --similar
 * of its root's @root_weight. */
bool render__shown(const struct render *r, const struct kccf_node *n,
		   double root_weight);

/* "file:line" of a caller's call site into @buf, or NULL. */
const char *render__site(const struct render *r, const struct kccf_node *n,
			 char *buf, size_t len);

/*
 * Deep paths: a crafted database can hold paths of any depth, so trees
 * are walked without recursion, and indentation stops growing at
 * RENDER_INDENT_LEVELS (deeper lines say their level), which keeps the
 * text linear in the number of lines.
 */
#define RENDER_INDENT_LEVELS 32
void render__indent(const struct render *r, uint32_t level);

/*
 * Walks the tree of forest root @root depth first without recursion:
 * @open for each node shown (its callers are entered only then), then
 * @close (may be NULL) when the walk climbs back past it.
 */
struct render_walk {
	void (*open)(void *arg, const struct kccf *f,
		     const struct kccf_node *n);
	void (*close)(void *arg);
	void *arg;
};
void render__walk(const struct render *r, const struct kccf *f,
		  uint32_t root, const struct render_walk *w);

/* Prints @w with no decimals when it is whole, else with up to 3. */
void render__weight(FILE *out, double w);

/*
 * Whole counts for @n weights @w, into @out, shared by largest
 * remainder so that exports in integers lose no weight: within each
 * part (@part, a process; NULL: one part) the counts add up to the
 * part's weight rounded, and within each group (@group, the leaf
 * function, or of one process: such samples are a whole number) to the
 * group's weight rounded up or down.  A weight may get 0.  0 or -ENOMEM.
 */
int render__round(const double *w, const int64_t *group,
		  const int64_t *part, size_t n, int64_t *out);

#endif
