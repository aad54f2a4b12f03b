/*
 * cmd_report.c - "icppd report": a run's inferred profile as
 * k-calling-context forests (default), or the hot calling context tree
 * (--hot), in text, folded, json or pprof.
 *
 * The run is inferred afresh from its CIDs and the current path maps
 * (cheap: one hash lookup per distinct CID), and the result is written
 * to the inferred table when it changed (run_profile.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "binary/lines.h"
#include "common/grow.h"
#include "daemon/commands.h"
#include "daemon/json.h"
#include "daemon/log.h"
#include "daemon/outfile.h"
#include "daemon/report.h"
#include "daemon/run_profile.h"
#include "inference/hcct.h"
#include "inference/kccf.h"
#include "report/pprof.h"
#include "schema/store.h"

#define TEXT_MIN_PERCENT 0.5

struct report_opts {
	const char *db, *k, *min_percent, *similar, *hot, *format, *output;
	const char *since, *until, *exe;
	uint64_t run, pid;
	bool inclusive, lines;
};

#define OPT(f) offsetof(struct report_opts, f)
static const struct cli_option report_options[] = {
	{ "database", 'd', CLI_STRING, OPT(db), "FILE",
	  "profile database (default icppd.db)", 0, 0 },
	{ "run", 0, CLI_UINT, OPT(run), "ID",
	  "the run to report (default: the latest that is not training)",
	  1, INT64_MAX },
	{ "since", 0, CLI_STRING, OPT(since), "T",
	  "the runs (daemon segments) from time T: -10m, -2h, -1d, "
	  "2026-11-22T07:00:00 (UTC) or seconds since 1970", 0, 0 },
	{ "until", 0, CLI_STRING, OPT(until), "T",
	  "... up to time T (default now)", 0, 0 },
	{ "exe", 0, CLI_STRING, OPT(exe), "PROGRAM",
	  "only the samples of processes running PROGRAM (a path, or a "
	  "name such as cc1)", 0, 0 },
	{ "pid", 'p', CLI_UINT, OPT(pid), "PID",
	  "only the samples of process PID", 1, INT32_MAX },
	{ "k", 'k', CLI_STRING, OPT(k), "K",
	  "callers per context: 0 flat, 1 edges, ..., inf (default 3)", 0, 0 },
	{ "inclusive", 0, CLI_FLAG, OPT(inclusive), NULL,
	  "weigh a context by the samples anywhere below it", 0, 0 },
	{ "min-percent", 0, CLI_STRING, OPT(min_percent), "P",
	  "hide contexts under P % of all samples (default 0.5 for text, "
	  "else 0)", 0, 0 },
	{ "similar", 0, CLI_STRING, OPT(similar), "X",
	  "keep the X%-similar part: contexts with at least X % of their "
	  "function's samples", 0, 0 },
	{ "hot", 0, CLI_STRING, OPT(hot), "PHI",
	  "the hot calling context tree: contexts with at least PHI of "
	  "all samples (0 < PHI <= 1), and their callers", 0, 0 },
	{ "format", 'f', CLI_STRING, OPT(format), "FMT",
	  "text (default), folded, json or pprof", 0, 0 },
	{ "output", 'o', CLI_STRING, OPT(output), "FILE",
	  "write to FILE instead of standard output", 0, 0 },
	{ "lines", 0, CLI_FLAG, OPT(lines), NULL,
	  "show each caller's call site as file:line (DWARF)", 0, 0 },
};

const struct cli_command report_command = {
	.name = "report",
	.synopsis = "[options]",
	.brief = "call paths of a run: k-calling-context forests, hot contexts",
	.summary = "Show a run's call paths: for each function, its hottest\n"
		   "calling contexts of up to K callers, inferred from the\n"
		   "context identifiers through the training path maps.",
	.options = report_options,
	.noptions = sizeof(report_options) / sizeof(report_options[0]),
	.permute = true,
	.epilog = "Weights marked '~' are partly apportioned among ambiguous\n"
		  "candidates or found by search, not certain.  See\n"
		  "icppd-report(1), and the v_inferred and v_kccf views.\n",
};

enum format { FMT_TEXT, FMT_FOLDED, FMT_JSON, FMT_PPROF };

struct report {
	struct report_opts o;
	enum format fmt;
	uint32_t k;
	double min_percent, similar, phi;
	struct run_profile p;
	struct lines *lines;	/* --lines; NULL: none */
	FILE *out;
	double total;
};

static int usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "icppd: report: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'icppd report --help'.\n");
	return -1;
}

/* A number in [lo, hi] (lo excluded when @open_lo). */
static int parse_number(const char *opt, const char *arg, double lo,
			double hi, bool open_lo, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(arg, &end);
	if (errno || end == arg || *end || isnan(*v) || *v > hi ||
	    (open_lo ? *v <= lo : *v < lo)) {
		fprintf(stderr, "icppd: report: --%s: expected a number %s %g "
			"and <= %g, not '%s'\nTry 'icppd report --help'.\n",
			opt, open_lo ? ">" : ">=", lo, hi, arg);
		return -1;
	}
	return 0;
}

int report__parse_k(const char *cmd, const char *arg, uint32_t *k)
{
	char *end;
	long long v;

	if (!strcmp(arg, "inf") || !strcmp(arg, "infinity")) {
		*k = KCCF_INF;
		return 0;
	}
	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || v < 0 || v >= KCCF_INF) {
		fprintf(stderr, "icppd: %s: --k: expected a whole number >= 0 "
			"or inf, not '%s'\nTry 'icppd %s --help'.\n", cmd, arg,
			cmd);
		return -1;
	}
	*k = (uint32_t)v;
	return 0;
}

static int check_opts(struct report *r)
{
	static const char *const names[] = { "text", "folded", "json", "pprof" };
	const char *f = r->o.format ? r->o.format : "text";
	size_t i;

	for (i = 0; i < 4 && strcmp(f, names[i]); i++)
		;
	if (i == 4)
		return usage("--format: expected text, folded, json or pprof, "
			     "not '%s'", f);
	r->fmt = (enum format)i;
	r->k = 3;
	if (r->o.k && report__parse_k("report", r->o.k, &r->k))
		return -1;
	r->min_percent = r->fmt == FMT_TEXT ? TEXT_MIN_PERCENT : 0;
	if (r->o.min_percent &&
	    parse_number("min-percent", r->o.min_percent, 0, 100, false,
			 &r->min_percent))
		return -1;
	if (r->o.similar &&
	    parse_number("similar", r->o.similar, 0, 100, false, &r->similar))
		return -1;
	if (r->o.hot && parse_number("hot", r->o.hot, 0, 1, true, &r->phi))
		return -1;
	if (r->o.hot && (r->o.k || r->o.similar || r->o.inclusive))
		return usage("--hot shows whole contexts: it takes no --k, "
			     "--similar or --inclusive");
	if (r->o.inclusive && (r->fmt == FMT_FOLDED || r->fmt == FMT_PPROF))
		return usage("--inclusive: %s output carries self weights "
			     "(its tools add them up)", names[r->fmt]);
	return 0;
}

int report__folded_line(char *line, double *w)
{
	size_t len = strlen(line);
	char *sp, *end;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	if (!len)
		return 1;
	sp = strrchr(line, ' ');
	if (!sp || sp == line)
		return -1;
	*w = strtod(sp + 1, &end);
	if (end == sp + 1 || *end || !(*w >= 0) || isinf(*w))
		return -1;
	*sp = '\0';
	return 0;
}

void report__weight(FILE *out, double w)
{
	if (fabs(w - round(w)) < 1e-6)
		fprintf(out, "%.0f", w);
	else
		fprintf(out, "%.3f", w);
}

/* "file:line" of a caller's call site, or NULL. */
static const char *site_of(struct report *r, const struct kccf_node *n,
			   char *buf, size_t len)
{
	const struct profile_module *m;
	const char *file;
	unsigned line;

	if (!r->lines || !n->call_site || !n->site_module)
		return NULL;
	m = run_profile__module(&r->p, n->site_module);
	/* a return address: the call is the instruction before it */
	if (!m || lines__find(r->lines, m->path, m->build_id,
			      n->call_site - 1, &file, &line))
		return NULL;
	snprintf(buf, len, "%s:%u", file, line);
	return buf;
}

/* Whether @n is shown: above --min-percent, and --similar of its root. */
static bool shown(const struct report *r, const struct kccf_node *n,
		  double root_weight)
{
	if (r->total <= 0 || 100 * n->weight / r->total < r->min_percent)
		return false;
	return !r->o.similar || 100 * n->weight >= r->similar * root_weight;
}

/*
 * Deep paths: a crafted database can hold paths of any depth, so trees
 * are walked without recursion, and indentation stops growing at
 * INDENT_LEVELS (deeper lines say their level), which keeps the text
 * linear in the number of lines.
 */
#define INDENT_LEVELS 32

static void indent(struct report *r, uint32_t level)
{
	if (level <= INDENT_LEVELS)
		fprintf(r->out, "%*s", 2 * (int)level, "");
	else
		fprintf(r->out, "%*s[%u] ", 2 * INDENT_LEVELS, "", level);
}

static void text_line(struct report *r, const struct kccf *f,
		      const struct kccf_node *n)
{
	char site[512];
	const char *where;

	fprintf(r->out, "%11.1f %6.2f%% ", n->weight, 100 * n->weight / r->total);
	if (n->parent == KCCF_NONE) {
		fprintf(r->out, "%7s ", "");
	} else {
		double parent = kccf__node(f, n->parent)->weight;

		fprintf(r->out, "%6.1f%% ", parent > 0 ? 100 * n->weight / parent
							: 0.0);
	}
	indent(r, n->level);
	fprintf(r->out, "%s%s", n->level ? "<- " : "",
		cct__name(r->p.cct, n->frame));
	where = site_of(r, n, site, sizeof(site));
	if (where)
		fprintf(r->out, " (%s)", where);
	if (n->weight - n->certain > 0.05)
		fprintf(r->out, "  ~%.1f", n->weight - n->certain);
	fputc('\n', r->out);
}

static void json_open(struct report *r, const struct kccf_node *n,
		      bool *first)
{
	char site[512];
	const char *where;

	fprintf(r->out, "%s{\"function\": ", *first ? "" : ", ");
	json__string(r->out, cct__name(r->p.cct, n->frame));
	fprintf(r->out, ", \"samples\": %.6f, \"certain\": %.6f", n->weight,
		n->certain);
	where = site_of(r, n, site, sizeof(site));
	if (where) {
		fprintf(r->out, ", \"call_site\": ");
		json__string(r->out, where);
	}
	fprintf(r->out, ", \"callers\": [");
	*first = true;		/* its callers come next */
}

static void json_close(struct report *r, bool *first)
{
	fprintf(r->out, "]}");
	*first = false;
}

/* Prints the tree of root @root depth first, as text or (@first: no
 * element printed yet at this level) JSON, without recursion: a node's
 * callers are entered only when it is shown, and climbing back up
 * closes each node passed. */
static void print_tree(struct report *r, const struct kccf *f, uint32_t root,
		       bool *first)
{
	double root_weight = kccf__node(f, root)->weight;
	uint32_t i = root;

	for (;;) {
		const struct kccf_node *n = kccf__node(f, i);

		if (shown(r, n, root_weight)) {
			if (first)
				json_open(r, n, first);
			else
				text_line(r, f, n);
			if (n->first_child != KCCF_NONE) {
				i = n->first_child;
				continue;
			}
			if (first)
				json_close(r, first);
		}
		while (i != root && kccf__node(f, i)->next_sibling == KCCF_NONE) {
			i = kccf__node(f, i)->parent;
			if (first)
				json_close(r, first);
		}
		if (i == root)
			return;
		i = kccf__node(f, i)->next_sibling;
	}
}

static void header(struct report *r)
{
	const struct infer_stats *s = &r->p.stats;
	double n = s->samples > 0 ? s->samples : 1;

	fprintf(r->out, "run %lld (%s, %s): %.0f samples with a context "
		"identifier, %lld without\n", (long long)r->p.run.id,
		r->p.run.kind, r->p.run.command, s->samples,
		(long long)r->p.run.unresolved);
	fprintf(r->out, "inferred: %.1f%% precise, %.1f%% ambiguous "
		"(apportioned), %.1f%% searched, %.1f%% unknown callers\n",
		100 * s->by_how[CCT_PRECISE] / n,
		100 * s->by_how[CCT_AMBIGUOUS] / n,
		100 * s->by_how[CCT_SEARCHED] / n,
		100 * s->by_how[CCT_UNKNOWN] / n);
}

static void print_text(struct report *r, const struct kccf *f)
{
	header(r);
	fprintf(r->out, "k = ");
	if (r->k == KCCF_INF)
		fprintf(r->out, "inf");
	else
		fprintf(r->out, "%u", r->k);
	fprintf(r->out, ", %s weights; contexts under %g%% of all samples "
		"hidden%s; ~N: weight not certain\n\n",
		r->o.inclusive ? "inclusive" : "self", r->min_percent,
		r->o.similar ? " and under --similar" : "");
	fprintf(r->out, "%11s %7s %7s %s\n", "samples", "total", "parent",
		"function <- callers");
	for (uint32_t i = kccf__first_root(f); i != KCCF_NONE;
	     i = kccf__node(f, i)->next_sibling)
		print_tree(r, f, i, NULL);
}

static void json_stats(struct report *r)
{
	const struct infer_stats *s = &r->p.stats;

	fprintf(r->out, "{\"run_id\": %lld, \"samples\": %.6f, \"inference\": "
		"{", (long long)r->p.run.id, s->samples);
	for (int h = 0; h < CCT_NR_HOW; h++)
		fprintf(r->out, "%s\"%s\": %.6f", h ? ", " : "",
			cct_how__name((enum cct_how)h), s->by_how[h]);
	fprintf(r->out, "}");
}

static void print_json(struct report *r, const struct kccf *f)
{
	bool first = true;

	json_stats(r);
	fprintf(r->out, ", \"k\": ");
	if (r->k == KCCF_INF)
		fprintf(r->out, "\"inf\"");
	else
		fprintf(r->out, "%u", r->k);
	fprintf(r->out, ", \"inclusive\": %s, \"functions\": [",
		r->o.inclusive ? "true" : "false");
	for (uint32_t i = kccf__first_root(f); i != KCCF_NONE;
	     i = kccf__node(f, i)->next_sibling)
		print_tree(r, f, i, &first);
	fprintf(r->out, "]}\n");
}

/* The frames of forest node @i up to its root, outermost first. */
static char *folded_key(const struct cct *t, const struct kccf *f, uint32_t i)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return NULL;
	for (; i != KCCF_NONE; i = kccf__node(f, i)->parent)
		fprintf(m, "%s%s", cct__name(t, kccf__node(f, i)->frame),
			kccf__node(f, i)->parent == KCCF_NONE ? "" : ";");
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int report__folded(struct cct *t, uint32_t k,
		   int (*fn)(void *arg, const char *key, double weight),
		   void *arg)
{
	int ret;
	struct kccf *f = kccf__build(t, k, false, &ret);

	if (!f)
		return ret;
	ret = 0;
	for (uint32_t i = 0; i < kccf__size(f) && !ret; i++) {
		const struct kccf_node *n = kccf__node(f, i);
		double self = n->weight;
		char *key;

		for (uint32_t c = n->first_child; c != KCCF_NONE;
		     c = kccf__node(f, c)->next_sibling)
			self -= kccf__node(f, c)->weight;
		if (self <= 1e-9)
			continue;
		key = folded_key(t, f, i);
		ret = key ? fn(arg, key, self) : -ENOMEM;
		free(key);
	}
	kccf__free(f);
	return ret;
}

static int folded_line(void *arg, const char *key, double weight)
{
	struct report *r = arg;

	if (r->total <= 0 || 100 * weight / r->total < r->min_percent)
		return 0;
	fprintf(r->out, "%s ", key);
	report__weight(r->out, weight);
	fputc('\n', r->out);
	return 0;
}

/* --hot: the HCCT, from a Space-Saving pass over the records. */
#define HOT_NONE UINT32_MAX
struct hot {
	uint32_t *nodes;	/* hot nodes and their ancestors, CCT order */
	/* the tree over positions in nodes[]: parent, first child and
	 * next sibling (CCT order), HOT_NONE for none */
	uint32_t *up, *first, *next;
	double *count, *error;	/* per CCT node: NAN when not monitored */
	size_t n, ncounters;
	size_t hot;
};

static int hot_build(struct report *r, struct hot *h)
{
	size_t nrecs, nitems, size = cct__size(r->p.cct);
	const struct cct_record *recs = cct__records(r->p.cct, &nrecs);
	const struct ss_item *items;
	struct spacesaving *ss;
	uint32_t *pos = NULL;
	bool *mark;
	int ret = -ENOMEM;

	h->ncounters = hcct__counters(r->phi);
	ss = ss__new(h->ncounters);
	mark = calloc(size, sizeof(*mark));
	h->count = malloc(size * sizeof(*h->count));
	h->error = malloc(size * sizeof(*h->error));
	h->nodes = malloc(size * sizeof(*h->nodes));
	if (!ss || !mark || !h->count || !h->error || !h->nodes)
		goto out;
	for (size_t i = 0; i < size; i++)
		h->count[i] = h->error[i] = NAN;
	for (size_t i = 0; i < nrecs; i++)
		if (recs[i].weight > 0 &&
		    ss__add(ss, recs[i].node, recs[i].weight))
			goto out;
	items = ss__items(ss, &nitems);
	for (size_t i = 0; i < nitems; i++) {
		h->count[items[i].key] = items[i].count;
		h->error[items[i].key] = items[i].error;
		if (items[i].count < r->phi * ss__total(ss))
			continue;
		h->hot++;
		for (uint32_t x = items[i].key; x != CCT_ROOT && !mark[x];
		     x = cct__node(r->p.cct, x)->parent)
			mark[x] = true;
	}
	for (uint32_t i = 0; i < size; i++)	/* parents come first */
		if (mark[i])
			h->nodes[h->n++] = i;
	h->up = malloc((h->n + 1) * sizeof(*h->up));
	h->first = malloc((h->n + 1) * sizeof(*h->first));
	h->next = malloc((h->n + 1) * sizeof(*h->next));
	pos = malloc(size * sizeof(*pos));	/* CCT node -> position */
	if (!h->up || !h->first || !h->next || !pos)
		goto out;
	for (uint32_t i = 0; i < h->n; i++) {
		uint32_t parent = cct__node(r->p.cct, h->nodes[i])->parent;

		h->first[i] = h->next[i] = HOT_NONE;
		h->up[i] = parent == CCT_ROOT ? HOT_NONE : pos[parent];
		pos[h->nodes[i]] = i;
	}
	for (uint32_t i = (uint32_t)h->n; i-- > 0;)
		if (h->up[i] != HOT_NONE) {
			h->next[i] = h->first[h->up[i]];
			h->first[h->up[i]] = i;
		}
	ret = 0;
out:
	ss__free(ss);
	free(mark);
	free(pos);
	return ret;
}

static void hot_free(struct hot *h)
{
	free(h->nodes);
	free(h->up);
	free(h->first);
	free(h->next);
	free(h->count);
	free(h->error);
}

static void hot_line(struct report *r, const struct hot *h, uint32_t i)
{
	uint32_t node = h->nodes[i];
	const struct cct_node *n = cct__node(r->p.cct, node);

	if (isnan(h->count[node]) || h->count[node] < r->phi * r->total)
		fprintf(r->out, "%11s %7s ", "-", "");
	else
		fprintf(r->out, "%11.1f %6.2f%% ", h->count[node],
			100 * h->count[node] / r->total);
	indent(r, n->depth - 1);
	fprintf(r->out, "%s", cct__name(r->p.cct, n->frame));
	if (!isnan(h->error[node]) && h->error[node] > 0 &&
	    h->count[node] >= r->phi * r->total)
		fprintf(r->out, "  (+- %.1f)", h->error[node]);
	fputc('\n', r->out);
}

/* Prints the tree of hot node h->nodes[@root] depth first, without
 * recursion (see INDENT_LEVELS). */
static void hot_tree(struct report *r, const struct hot *h, uint32_t root)
{
	uint32_t i = root;

	for (;;) {
		hot_line(r, h, i);
		if (h->first[i] != HOT_NONE) {
			i = h->first[i];
			continue;
		}
		while (i != root && h->next[i] == HOT_NONE)
			i = h->up[i];
		if (i == root)
			return;
		i = h->next[i];
	}
}

/* The frames of CCT node @node, outermost first, joined by ';'. */
static char *cct_key(const struct cct *t, uint32_t node)
{
	uint32_t *chain = NULL;
	size_t n = 0, cap = 0, len = 0;
	char *buf = NULL;
	FILE *m;

	for (uint32_t x = node; x != CCT_ROOT;
	     x = cct__node((struct cct *)t, x)->parent) {
		if (grow(&chain, &cap, n + 1, sizeof(*chain), 64)) {
			free(chain);
			return NULL;
		}
		chain[n++] = x;
	}
	m = open_memstream(&buf, &len);
	for (size_t j = n; m && j-- > 0;)
		fprintf(m, "%s%s", cct__name(t, cct__node((struct cct *)t,
							  chain[j])->frame),
			j ? ";" : "");
	free(chain);
	if (!m || fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int print_hot(struct report *r)
{
	struct hot h = { 0 };
	bool first = true;

	if (hot_build(r, &h)) {
		hot_free(&h);
		log_error("out of memory");
		return -1;
	}
	if (r->fmt == FMT_TEXT) {
		header(r);
		fprintf(r->out, "hot calling context tree: %zu contexts with at "
			"least %g of all samples (%zu counters); '-': a caller "
			"that is not hot itself\n\n", h.hot, r->phi,
			h.ncounters);
		fprintf(r->out, "%11s %7s %s\n", "samples", "total",
			"context (outermost first)");
		for (uint32_t i = 0; i < h.n; i++)
			if (h.up[i] == HOT_NONE)
				hot_tree(r, &h, i);
	} else {
		if (r->fmt == FMT_JSON) {
			json_stats(r);
			fprintf(r->out, ", \"phi\": %g, \"contexts\": [", r->phi);
		}
		for (size_t i = 0; i < h.n; i++) {
			uint32_t node = h.nodes[i];
			char *key;

			if (isnan(h.count[node]) ||
			    h.count[node] < r->phi * r->total)
				continue;
			key = cct_key(r->p.cct, node);
			if (!key)
				continue;
			if (r->fmt == FMT_JSON) {
				fprintf(r->out, "%s\n {\"context\": ",
					first ? "" : ",");
				json__string(r->out, key);
				fprintf(r->out, ", \"samples\": %.6f, \"error\": "
					"%.6f}", h.count[node], h.error[node]);
			} else {
				fprintf(r->out, "%s ", key);
				report__weight(r->out, h.count[node]);
				fputc('\n', r->out);
			}
			first = false;
			free(key);
		}
		if (r->fmt == FMT_JSON)
			fprintf(r->out, "]}\n");
	}
	hot_free(&h);
	return 0;
}

struct store *report__open(const char *path)
{
	char err[600];
	struct store *st;

	if (access(path, F_OK)) {
		log_error("%s: no such database (record a run first: icppd "
			  "record -d %s -- COMMAND)", path, path);
		return NULL;
	}
	st = store__writable(path) ? store__open(path, err, sizeof(err)) :
	     store__open_readonly(path, err, sizeof(err));
	if (!st)
		log_error("%s", err);
	return st;
}

/* @s as nanoseconds since 1970: "now", -Ns/-Nm/-Nh/-Nd before now,
 * seconds since 1970, or an ISO 8601 UTC date and time. */
static int parse_time(const char *s, int64_t *ns)
{
	struct timespec now;
	static const char *const formats[] = { "%Y-%m-%dT%H:%M:%S",
		"%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d" };
	char *end;
	double v;

	clock_gettime(CLOCK_REALTIME, &now);
	if (!strcmp(s, "now")) {
		*ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
		return 0;
	}
	if (s[0] == '-') {
		v = strtod(s + 1, &end);
		if (end != s + 1 && v >= 0 && end[0] && !end[1] &&
		    strchr("smhd", end[0])) {
			double unit = end[0] == 's' ? 1 : end[0] == 'm' ? 60 :
				      end[0] == 'h' ? 3600 : 86400;

			/* Up to 280 years back, so that no conversion or
			 * subtraction below overflows an int64_t. */
			if (!(v * unit <= 9e9 - (double)now.tv_sec))
				return -1;
			*ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec -
			      (int64_t)(v * unit * 1e9);
			return 0;
		}
		return -1;
	}
	v = strtod(s, &end);
	if (end != s && !*end && v >= 0 && v <= 9e9) {
		*ns = (int64_t)(v * 1e9);
		return 0;
	}
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		struct tm tm = { 0 };
		const char *e = strptime(s, formats[i], &tm);

		time_t t = e && !*e ? timegm(&tm) : -1;

		if (t >= 0 && t <= 9000000000) {	/* year 2255 */
			*ns = (int64_t)t * 1000000000;
			return 0;
		}
	}
	return -1;
}

/* What --exe matched, for resolve_exe(). */
struct exe_matches {
	char first[PATH_MAX];
	char list[640];		/* "PATH, PATH, ..." */
	size_t n;
};

static int add_match(void *arg, const char *path)
{
	struct exe_matches *m = arg;
	size_t used = strlen(m->list);

	if (!m->n++)
		snprintf(m->first, sizeof(m->first), "%s", path);
	if (m->n <= 8)
		snprintf(m->list + used, sizeof(m->list) - used, "%s%s",
			 used ? ", " : "", path);
	else if (m->n == 9)
		snprintf(m->list + used, sizeof(m->list) - used, ", ...");
	return 0;
}

/*
 * --exe: a path (made canonical when it exists, as the database keeps
 * programs) or a bare name such as cc1, matched against the programs
 * with samples in the database.  The one program's path in @out; -1
 * after a line that lists what matched (several) or what there is (none).
 */
static int resolve_exe(const struct report *r, struct store *st, char *out,
		       size_t len)
{
	struct exe_matches m = { .n = 0 };
	const char *name = r->o.exe;
	char real[PATH_MAX];

	if (strchr(name, '/') && realpath(name, real))
		name = real;
	if (store__programs_named(st, name, add_match, &m)) {
		log_error("%s", store__error(st));
		return -1;
	}
	if (m.n == 1) {
		snprintf(out, len, "%s", m.first);
		return 0;
	}
	if (m.n > 1) {
		log_error("--exe %s: %zu programs of that name have samples in "
			  "%s: %s; give the path of one", r->o.exe, m.n,
			  r->o.db, m.list);
		return -1;
	}
	if (store__programs_named(st, NULL, add_match, &m))
		m.n = 0;
	log_error("--exe %s: no program of that name has samples in %s%s%s%s",
		  r->o.exe, r->o.db, m.n ? " (programs with samples: " : "",
		  m.n ? m.list : "", m.n ? ")" : "");
	return -1;
}

static int pick_run(struct store *st, struct report *r, int64_t *id)
{
	int ret;

	if (r->o.since || r->o.until) {
		*id = 0;	/* the window */
		return 0;
	}
	if (r->o.run) {
		*id = (int64_t)r->o.run;
		return 0;
	}
	ret = store__latest_run(st, id);
	if (ret > 0)
		log_error("%s: no measurement run to report (icppd record -d "
			  "%s -- COMMAND)", r->o.db, r->o.db);
	else if (ret < 0)
		log_error("%s", store__error(st));
	return ret ? -1 : 0;
}

/* Refuses what cannot be shown: an empty run, or contexts without any
 * path map.  With some maps, the programs without one are named. */
static int check_profile(struct report *r)
{
	const struct run_profile *p = &r->p;

	if (p->stats.samples <= 0) {
		if (p->run.id)
			log_error("run %lld has no samples with a context "
				  "identifier%s (%lld samples, %lld unresolved: "
				  "see v_unresolved)", (long long)p->run.id,
				  r->o.pid || r->o.exe ? " for that process" : "",
				  (long long)p->run.samples,
				  (long long)p->run.unresolved);
		else
			log_error("no samples with a context identifier in that "
				  "window%s (%s)", r->o.pid || r->o.exe ?
				  " for that process" : "", p->run.command);
		return -1;
	}
	if (p->unmapped && p->unmapped == p->programs && r->k != 0) {
		log_error("%s: no path map for %s: its call paths cannot be "
			  "inferred; train first (icppd train -d %s -- %s ...), "
			  "or use --k 0 for a flat profile", r->o.db,
			  p->unmapped_path[0] ? p->unmapped_path : "the run's "
			  "programs", r->o.db, p->unmapped_path[0] ?
			  p->unmapped_path : "COMMAND");
		return -1;
	}
	if (p->unmapped)
		log_warn("%zu of %zu programs have no path map (%s): their "
			 "samples appear under [unknown callers ...]",
			 p->unmapped, p->programs, p->unmapped_path);
	return 0;
}

static int write_pprof(struct report *r)
{
	struct pprof_module *mods = calloc(r->p.nmodules + 1, sizeof(*mods));
	struct pprof_input in = { .cct = r->p.cct, .k = r->k,
		.modules = mods, .nmodules = r->p.nmodules,
		.time_ns = r->p.run.started_ns };
	const struct run_row *run = &r->p.run;
	int ret = -1;

	if (!mods) {
		log_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < r->p.nmodules; i++)
		mods[i] = (struct pprof_module){ r->p.modules[i].id,
			r->p.modules[i].path, r->p.modules[i].build_id };
	/* clock events count nanoseconds: a sample is its period */
	if (!strcmp(run->event, "cpu-clock") || !strcmp(run->event, "task-clock"))
		in.ns_per_sample = run->period ? run->period :
				   run->frequency ? 1000000000 / run->frequency
						  : 0;
	/* line numbers always, where DWARF has them */
	in.lines = r->lines ? r->lines : lines__new();
	ret = in.lines ? pprof__write(r->out, &in) : -ENOMEM;
	if (ret)
		log_error("writing the pprof profile: %s", strerror(-ret));
	if (in.lines != r->lines)
		lines__free(in.lines);
	free(mods);
	return ret;
}

void report__forest_error(int err)
{
	if (err == -E2BIG)
		log_error("report: the contexts of this profile take more than "
			  "%llu frames to build or %zu to hold (paths that deep, "
			  "or --inclusive over deep paths): use a smaller --k",
			  (unsigned long long)KCCF_MAX_STEPS, KCCF_MAX_NODES);
	else
		log_error("out of memory");
}

static int write_report(struct report *r)
{
	struct kccf *f;
	int err;

	r->total = cct__total(r->p.cct);
	if (r->o.hot)
		return print_hot(r);
	if (r->fmt == FMT_FOLDED) {
		err = report__folded(r->p.cct, r->k, folded_line, r);
		if (err)
			report__forest_error(err);
		return err ? -1 : 0;
	}
	if (r->fmt == FMT_PPROF)
		return write_pprof(r);
	f = kccf__build(r->p.cct, r->k, r->o.inclusive, &err);
	if (!f) {
		report__forest_error(err);
		return -1;
	}
	if (r->fmt == FMT_JSON)
		print_json(r, f);
	else
		print_text(r, f);
	kccf__free(f);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report r = { .o = { .db = "icppd.db" } };
	struct store_selection sel = { .until_ns = INT64_MAX };
	struct store *st = NULL;
	struct outfile out = { 0 };
	char exe_path[PATH_MAX];
	int64_t run_id;
	int idx = cli__parse(&report_command, argc, argv, &r.o), ret = 1;

	if (idx < 0)
		return idx == -1 ? 0 : 2;
	if (idx < argc) {
		usage("unexpected argument '%s'", argv[idx]);
		return 2;
	}
	if (check_opts(&r))
		return 2;
	if ((r.o.since && parse_time(r.o.since, &sel.since_ns)) ||
	    (r.o.until && parse_time(r.o.until, &sel.until_ns))) {
		usage("--%s: expected now, -10m (s, m, h, d), seconds since "
		      "1970 or 2026-11-22T07:00:00, not '%s'",
		      r.o.since && parse_time(r.o.since, &sel.since_ns) ?
		      "since" : "until", r.o.since && parse_time(r.o.since,
		      &sel.since_ns) ? r.o.since : r.o.until);
		return 2;
	}
	if ((r.o.since || r.o.until) && r.o.run) {
		usage("--run and --since/--until choose runs two ways: give one");
		return 2;
	}
	if (r.o.exe && !*r.o.exe) {
		usage("--exe: expected a program's path or name, not ''");
		return 2;
	}
	sel.pid = (int64_t)r.o.pid;
	if (r.fmt == FMT_PPROF && r.o.hot) {
		usage("--hot: pprof holds whole samples; use --k inf instead");
		return 2;
	}
	if (outfile__open(&out, r.o.output))
		return 1;
	r.out = out.f;
	st = report__open(r.o.db);
	if (!st || (r.o.exe && resolve_exe(&r, st, exe_path, sizeof(exe_path))) ||
	    pick_run(st, &r, &run_id))
		goto out;
	sel.program = r.o.exe ? exe_path : NULL;
	sel.run_id = run_id;
	if (run_profile__infer(st, &sel, true, &r.p) || check_profile(&r))
		goto out;
	if (r.o.lines && !(r.lines = lines__new()))
		goto out;
	if (write_report(&r))
		goto out;
	ret = 0;
out:
	lines__free(r.lines);
	run_profile__free(&r.p);
	store__close(st);
	if (outfile__close(&out, !ret))
		ret = 1;
	return ret;
}
