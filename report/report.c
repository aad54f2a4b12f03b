/*
 * report.c - report__write's dispatch to the renderers (render.h), and
 * choosing what to report: opening the database, the run, the program,
 * and what a profile must hold to be shown.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/lines.h"
#include "common/json.h"
#include "common/log.h"
#include "report/render.h"
#include "schema/store.h"

const char *const report_format_names[] = { "text", "folded", "json", "pprof",
					    "svg", NULL };

int report__write(const struct report_view *v)
{
	struct render r = { .v = v, .p = v->p, .out = v->out,
			    .total = cct__total(v->p->cct), .integral = true };
	size_t n;
	const struct cct_record *recs = cct__records(v->p->cct, &n);
	struct kccf *f;
	int err;

	for (size_t i = 0; i < n && r.integral; i++)
		r.integral = fabs(recs[i].weight - round(recs[i].weight)) < 1e-6;

	if (v->base && v->fmt != REPORT_SVG)
		return render__diff(&r);
	if (v->phi > 0)
		return render__hot(&r);
	if (v->nsort)
		return render__sorted(&r);
	if (v->fmt == REPORT_FOLDED)
		return render__folded(&r);
	if (v->fmt == REPORT_PPROF)
		return render__pprof(&r);
	if (v->fmt == REPORT_SVG)
		return render__svg(&r);
	f = kccf__build(v->p->cct, v->k, v->inclusive, &err);
	if (!f) {
		report__forest_error(err);
		return -1;
	}
	if (v->fmt == REPORT_JSON)
		render__json(&r, f);
	else
		render__text(&r, f);
	kccf__free(f);
	return 0;
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

int report__latest_run(struct store *st, const char *db, int64_t *id)
{
	int ret = store__latest_run(st, id);

	if (ret > 0)
		log_error("%s: no measurement run to report (icppd record -d "
			  "%s -- COMMAND)", db, db);
	else if (ret < 0)
		log_error("%s", store__error(st));
	return ret ? -1 : 0;
}

/* What --exe matched, for report__resolve_exe(). */
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

int report__resolve_exe(struct store *st, const char *db, const char *exe,
			char *out, size_t len)
{
	struct exe_matches m = { .n = 0 };
	const char *name = exe;
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
			  "%s: %s; give the path of one", exe, m.n, db, m.list);
		return -1;
	}
	if (store__programs_named(st, NULL, add_match, &m))
		m.n = 0;
	log_error("--exe %s: no program of that name has samples in %s%s%s%s",
		  exe, db, m.n ? " (programs with samples: " : "",
		  m.n ? m.list : "", m.n ? ")" : "");
	return -1;
}

int report__check(const struct run_profile *p, const char *db, bool filtered,
		  uint32_t k)
{
	if (p->stats.samples <= 0) {
		if (p->run.id)
			log_error("run %lld has no samples with a context "
				  "identifier%s (%lld samples, %lld unresolved: "
				  "see v_unresolved)", (long long)p->run.id,
				  filtered ? " for that process" : "",
				  (long long)p->run.samples,
				  (long long)p->run.unresolved);
		else
			log_error("no samples with a context identifier in that "
				  "window%s (%s)", filtered ?
				  " for that process" : "", p->run.command);
		return -1;
	}
	if (p->unmapped && p->unmapped == p->programs && k != 0) {
		log_error("%s: no path map for %s: its call paths cannot be "
			  "inferred; train first (icppd train -d %s -- %s ...), "
			  "or use --k 0 for a flat profile", db,
			  p->unmapped_path[0] ? p->unmapped_path : "the run's "
			  "programs", db, p->unmapped_path[0] ?
			  p->unmapped_path : "COMMAND");
		return -1;
	}
	/* a flat profile (k = 0, --sort) shows no callers to miss */
	if (p->unmapped && k != 0)
		log_warn("%zu of %zu programs have no path map (%s): their "
			 "samples appear under [unknown callers ...]",
			 p->unmapped, p->programs, p->unmapped_list);
	/* said on stderr too: folded, pprof and JSON have no header, and
	 * another user's report differs from the owner's for this alone */
	if (p->calls_stats.unreadable && k != 0) {
		char line[512];

		log_warn("%s", render__unreadable(&p->calls_stats, line,
					       sizeof(line)));
	}
	return 0;
}

/* A weight's place in report__round()'s order. */
struct round_item {
	int64_t group;
	double frac;
	size_t i;
};

static int by_group_frac(const void *a, const void *b)
{
	const struct round_item *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->frac != y->frac)
		return x->frac > y->frac ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

int report__round(const double *w, const int64_t *group, size_t n,
		  int64_t *out)
{
	struct round_item *it = malloc((n ? n : 1) * sizeof(*it));

	if (!it)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		/* 1e-9: a sum of shares that should be whole is not quite */
		double fl = floor(w[i] + 1e-9);

		out[i] = (int64_t)fl;
		it[i] = (struct round_item){ group[i], w[i] - fl, i };
	}
	qsort(it, n, sizeof(*it), by_group_frac);
	for (size_t s = 0, e; s < n; s = e) {
		double sum = 0;
		int64_t floors = 0, extra;

		for (e = s; e < n && it[e].group == it[s].group; e++) {
			sum += w[it[e].i];
			floors += out[it[e].i];
		}
		extra = llround(sum) - floors;
		for (size_t j = s; j < e && extra > 0; j++, extra--)
			out[it[j].i]++;
	}
	free(it);
	return 0;
}

void report__weight(FILE *out, double w)
{
	if (fabs(w - round(w)) < 1e-6)
		fprintf(out, "%.0f", w);
	else
		fprintf(out, "%.3f", w);
}
