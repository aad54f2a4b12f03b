/*
 * validation.c - the scores of a validation run (validation.h): what a
 * report of the run shows against its true stacks, stored in the
 * accuracy table whose rates report headers quote; what the path map
 * alone gives, stored in the validation table; and the k = 3 overlap
 * of the run's profile with its true stacks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/log.h"
#include "inference/metrics.h"
#include "profile/compare.h"
#include "profile/folded_keys.h"
#include "profile/profile.h"
#include "profile/validation.h"
#include "schema/validation.h"

const char *const validation_outcome_names[VALIDATION_NR_OUTCOMES] = {
	"precise", "ambiguous", "incorrect", "missing" };

static int outcome_of(const char *name)
{
	for (int i = 0; i < VALIDATION_NR_OUTCOMES; i++)
		if (!strcmp(name, validation_outcome_names[i]))
			return i;
	return -1;
}

static struct validation_func *func_score(struct validation_map *sc,
					  const char *program,
					  const char *function)
{
	struct validation_func *f;

	for (size_t i = 0; i < sc->nfuncs; i++)
		if (!strcmp(sc->funcs[i].function, function) &&
		    !strcmp(sc->funcs[i].program, program))
			return &sc->funcs[i];
	if (grow(&sc->funcs, &sc->funcs_cap, sc->nfuncs + 1,
		 sizeof(*sc->funcs), 64))
		return NULL;
	f = &sc->funcs[sc->nfuncs];
	*f = (struct validation_func){ strdup(program), strdup(function), 0, { 0 } };
	if (!f->program || !f->function) {
		free(f->program);
		free(f->function);
		return NULL;
	}
	sc->nfuncs++;
	return f;
}

static int add_row(void *arg, const struct validation_row *r)
{
	struct validation_map *sc = arg;
	int o = outcome_of(r->outcome);
	struct validation_func *f;
	size_t i;

	if (o < 0 || r->samples <= 0)
		return 0;
	sc->samples += (uint64_t)r->samples;
	sc->by[o] += (uint64_t)r->samples;
	for (i = 0; i < sc->nhist && sc->hist[i].candidates < r->candidates; i++)
		;
	if (i == sc->nhist || sc->hist[i].candidates != r->candidates) {
		if (grow(&sc->hist, &sc->hist_cap, sc->nhist + 1,
			 sizeof(*sc->hist), 16))
			return -ENOMEM;
		memmove(&sc->hist[i + 1], &sc->hist[i],
			(sc->nhist - i) * sizeof(*sc->hist));
		sc->hist[i] = (struct validation_bucket){ r->candidates, 0 };
		sc->nhist++;
	}
	sc->hist[i].samples += (uint64_t)r->samples;
	f = func_score(sc, r->program, r->function);
	if (!f)
		return -ENOMEM;
	f->samples += (uint64_t)r->samples;
	f->by[o] += (uint64_t)r->samples;
	return 0;
}

static int cmp_func(const void *a, const void *b)
{
	const struct validation_func *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->function, y->function);
}

static int add_score(void *arg, const struct run_score *r)
{
	struct validation_report *a = arg;
	struct validation_entry *e;

	if (grow(&a->v, &a->cap, a->n + 1, sizeof(*a->v), 256))
		return -ENOMEM;
	e = &a->v[a->n];
	*e = (struct validation_entry){ r->program_id, r->function_id,
		strdup(r->function), r->how, r->solutions, r->samples,
		r->correct, 0 };
	if (!e->function)
		return -ENOMEM;
	a->n++;
	a->samples += r->samples;
	a->by[r->how] += r->samples;
	a->correct[r->how] += r->correct;
	a->cut[r->how] += r->cut;
	a->correct_k[r->how] += r->correct_k;
	return 0;
}

static int cmp_entry(const void *x, const void *y)
{
	const struct validation_entry *a = x, *b = y;

	if (a->program_id != b->program_id)
		return a->program_id < b->program_id ? -1 : 1;
	if (a->function_id != b->function_id)
		return a->function_id < b->function_id ? -1 : 1;
	if (a->how != b->how)
		return a->how < b->how ? -1 : 1;
	if (a->solutions != b->solutions)
		return a->solutions < b->solutions ? -1 : 1;
	return 0;
}

double validation__incorrect(enum cct_how how, double samples,
			     double correct)
{
	double w = samples - correct;

	return how == CCT_UNKNOWN || w < 1e-6 * samples ? 0 : w;
}

static int cmp_wrong(const void *x, const void *y)
{
	const struct validation_entry *a = x, *b = y;

	return a->wrong != b->wrong ? (a->wrong > b->wrong ? -1 : 1) : 0;
}

/* Sorts the entries by group, merges each group into a row and stores
 * the rows.  0, or -1 after logging why. */
static int store_accuracy(struct store *st, int64_t run_id,
			  struct validation_report *a)
{
	struct accuracy_row *rows = NULL;
	size_t n = 0;
	int ret;

	qsort(a->v, a->n, sizeof(*a->v), cmp_entry);
	if (a->n && !(rows = malloc(a->n * sizeof(*rows)))) {
		log_error("out of memory");
		return -1;
	}
	for (size_t i = 0; i < a->n; i++) {
		const struct validation_entry *e = &a->v[i];

		if (n && !cmp_entry(e, &a->v[i - 1])) {
			rows[n - 1].samples += (int64_t)e->samples;
			rows[n - 1].correct += e->correct;
			continue;
		}
		rows[n++] = (struct accuracy_row){ e->program_id,
			e->function_id, cct_how__name(e->how),
			(int64_t)e->solutions, (int64_t)e->samples, e->correct };
	}
	ret = store__accuracy(st, run_id, rows, n);
	free(rows);
	if (ret)
		log_error("%s", store__error(st));
	return ret;
}

/* Merges the sorted entries by function, most incorrect first: the
 * text format's list. */
static void by_function(struct validation_report *a)
{
	size_t k = 0;

	for (size_t i = 0; i < a->n; i++) {
		struct validation_entry *e = &a->v[i];

		e->wrong = validation__incorrect(e->how, e->samples, e->correct);
		if (k && a->v[k - 1].program_id == e->program_id &&
		    a->v[k - 1].function_id == e->function_id) {
			a->v[k - 1].samples += e->samples;
			a->v[k - 1].wrong += e->wrong;
			free(e->function);
			continue;
		}
		a->v[k++] = *e;
	}
	a->n = k;
	qsort(a->v, a->n, sizeof(*a->v), cmp_wrong);
}

/*
 * The degree of overlap of run @run_id's report with its own true
 * stacks, over k = VALIDATION_K contexts (what "icppd compare truth:N
 * N" computes): an apportioned profile is right in aggregate where it
 * is wrong per sample, and this scores the aggregate.  The report's
 * inference is stored on the way, for the reports after.  -1 when
 * either side could not be made (logged).
 */
static double overlap_with_truth(struct store *st, int64_t run_id)
{
	struct profile_request tr = { .sel.run_id = run_id,
				      .source = PROFILE_TRUTH };
	struct profile_request rr = { .sel.run_id = run_id, .budget_s = -1,
		.flags = RUN_PROFILE_STATIC | RUN_PROFILE_SAVE };
	struct profile truth = { 0 }, p = { 0 };
	struct flat_entry *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	struct compare_result r;
	double overlap = -1;
	int err;

	if (profile__load(st, &tr, &truth) || profile__load(st, &rr, &p))
		goto out;
	err = compare__contexts(truth.p.cct, VALIDATION_K, &a, &na);
	if (!err)
		err = compare__contexts(p.p.cct, VALIDATION_K, &b, &nb);
	if (err) {
		folded__forest_error(err);
		goto out;
	}
	metrics__compare(a, na, b, nb, 0.01, &r);
	overlap = r.overlap;
out:
	compare__free_contexts(a, na);
	compare__free_contexts(b, nb);
	profile__exit(&truth);
	profile__exit(&p);
	return overlap;
}


int validation__score(struct store *st, int64_t run_id,
		      struct validation_scores *s)
{
	memset(s, 0, sizeof(*s));
	if (run_profile__score(st, run_id, VALIDATION_K, add_score,
			       &s->report) < 0 ||
	    store_accuracy(st, run_id, &s->report))
		return -1;
	by_function(&s->report);
	if (store__score(st, run_id) ||
	    store__validation(st, run_id, add_row, &s->map)) {
		log_error("%s", store__error(st));
		return -1;
	}
	qsort(s->map.funcs, s->map.nfuncs, sizeof(*s->map.funcs), cmp_func);
	s->overlap = overlap_with_truth(st, run_id);
	return 0;
}

void validation__exit(struct validation_scores *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->report.n; i++)
		free(s->report.v[i].function);
	free(s->report.v);
	for (size_t i = 0; i < s->map.nfuncs; i++) {
		free(s->map.funcs[i].program);
		free(s->map.funcs[i].function);
	}
	free(s->map.funcs);
	free(s->map.hist);
	memset(s, 0, sizeof(*s));
}
