/*
 * render.h - private to report/: what the renderers share (render.c).
 * Each renderer (text.c, json.c, folded.c, hot.c, pprof.c, sorted.c)
 * writes one format of report__write()'s view; report.c only
 * dispatches to them.
 */
#ifndef ICPPD_REPORT_RENDER_H
#define ICPPD_REPORT_RENDER_H

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
 * whole counts when the profile is integral, else one decimal. */
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

/* What the header and report__check() say of the binaries whose calls
 * could not be read, into @buf. */
const char *render__unreadable(const struct static_calls_stats *c,
			       char *buf, size_t len);

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

#endif
