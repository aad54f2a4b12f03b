/*
 * validation.c - the scores of a validation run, as users read them, in
 * text or JSON (see report/validation.h):
 * - what a report of the run shows (profile/run_profile.h scores it):
 *   by outcome (precise, ambiguous, searched, unknown), the weight the
 *   true context got (correct) and the rest (incorrect), and the
 *   functions with the most incorrect weight; stored in the accuracy
 *   table, whose rates report headers quote;
 * - the path map alone, the outcomes of the ICPP paper (precise,
 *   ambiguous, incorrect, missing: is the true path among the map's
 *   candidates for the CID), the degree of ambiguity, and the shares by
 *   function; stored in the validation table.
 */
#include "report/validation.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/json.h"
#include "common/log.h"
#include "inference/metrics.h"
#include "profile/folded_keys.h"
#include "profile/profile.h"
#include "schema/validation.h"

/* The k of the overlap validate reports (what a report shows by
 * default). */
#define VALIDATION_K 3

/* Functions listed by the text format; json lists all. */
#define TEXT_FUNCTIONS 20
/* Functions with the most incorrect weight, listed by the text format. */
#define TEXT_WRONG 10

enum outcome { PRECISE, AMBIGUOUS, INCORRECT, MISSING, NR_OUTCOMES };
static const char *const outcome_names[NR_OUTCOMES] = {
	"precise", "ambiguous", "incorrect", "missing" };

struct func_score {
	char *program, *function;
	uint64_t samples, by[NR_OUTCOMES];
};

struct bucket {
	int64_t candidates;
	uint64_t samples;
};

struct scores {
	uint64_t samples, by[NR_OUTCOMES];
	struct bucket *hist;		/* by candidates, ascending */
	size_t nhist, hist_cap;
	struct func_score *funcs;	/* biggest first */
	size_t nfuncs, funcs_cap;
};

static int outcome_of(const char *name)
{
	for (int i = 0; i < NR_OUTCOMES; i++)
		if (!strcmp(name, outcome_names[i]))
			return i;
	return -1;
}

static struct func_score *func_score(struct scores *sc, const char *program,
				     const char *function)
{
	struct func_score *f;

	for (size_t i = 0; i < sc->nfuncs; i++)
		if (!strcmp(sc->funcs[i].function, function) &&
		    !strcmp(sc->funcs[i].program, program))
			return &sc->funcs[i];
	if (grow(&sc->funcs, &sc->funcs_cap, sc->nfuncs + 1,
		 sizeof(*sc->funcs), 64))
		return NULL;
	f = &sc->funcs[sc->nfuncs];
	*f = (struct func_score){ strdup(program), strdup(function), 0, { 0 } };
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
	struct scores *sc = arg;
	int o = outcome_of(r->outcome);
	struct func_score *f;
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
		sc->hist[i] = (struct bucket){ r->candidates, 0 };
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
	const struct func_score *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->function, y->function);
}

static double share(double part, double whole)
{
	return whole > 0 ? part / whole : 0.0;
}

/* Samples not scored for reason @name (0 when none is given). */
static uint64_t unscored(const struct validation_input *in, const char *name)
{
	for (size_t i = 0; i < in->nunscored; i++)
		if (!strcmp(in->unscored[i].name, name))
			return in->unscored[i].samples;
	return 0;
}

/* What a report shows, from run_profile__score(): one entry per true
 * path, then merged by group. */
struct acc_entry {
	int64_t program_id, function_id;
	char *function;
	enum cct_how how;
	size_t solutions;
	double samples, correct;
	double wrong;		/* incorrect() weight, summed by function */
};

struct accuracy {
	struct acc_entry *v;
	size_t n, cap;
	double samples, by[CCT_NR_HOW], correct[CCT_NR_HOW], cut[CCT_NR_HOW];
};

static int add_score(void *arg, const struct run_score *r)
{
	struct accuracy *a = arg;
	struct acc_entry *e;

	if (grow(&a->v, &a->cap, a->n + 1, sizeof(*a->v), 256))
		return -ENOMEM;
	e = &a->v[a->n];
	*e = (struct acc_entry){ r->program_id, r->function_id,
		strdup(r->function), r->how, r->solutions, r->samples,
		r->correct, 0 };
	if (!e->function)
		return -ENOMEM;
	a->n++;
	a->samples += r->samples;
	a->by[r->how] += r->samples;
	a->correct[r->how] += r->correct;
	a->cut[r->how] += r->cut;
	return 0;
}

static int cmp_entry(const void *x, const void *y)
{
	const struct acc_entry *a = x, *b = y;

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

/* Weight a report gives to other contexts than the true one: none for
 * unknown callers, which claim no context; shares that add up to 1 only
 * up to rounding leave crumbs, not weight. */
static double incorrect(enum cct_how how, double samples, double correct)
{
	double w = samples - correct;

	return how == CCT_UNKNOWN || w < 1e-6 * samples ? 0 : w;
}

static int cmp_wrong(const void *x, const void *y)
{
	const struct acc_entry *a = x, *b = y;

	return a->wrong != b->wrong ? (a->wrong > b->wrong ? -1 : 1) : 0;
}

/* Sorts the entries by group, merges each group into a row and stores
 * the rows.  0, or -1 after logging why. */
static int store_accuracy(struct store *st, int64_t run_id,
			  struct accuracy *a)
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
		const struct acc_entry *e = &a->v[i];

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
static void by_function(struct accuracy *a)
{
	size_t k = 0;

	for (size_t i = 0; i < a->n; i++) {
		struct acc_entry *e = &a->v[i];

		e->wrong = incorrect(e->how, e->samples, e->correct);
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

static double wrong_of(const struct accuracy *a, int h)
{
	return incorrect((enum cct_how)h, a->by[h], a->correct[h]);
}

/* Correct (of it, cut short) and incorrect weight over all outcomes. */
static void totals(const struct accuracy *a, double *right, double *cut,
		   double *wrong)
{
	*right = *cut = *wrong = 0;
	for (int h = 0; h < CCT_UNKNOWN; h++) {
		*right += a->correct[h];
		*cut += a->cut[h];
		*wrong += wrong_of(a, h);
	}
}

static void print_accuracy_text(FILE *out, const struct accuracy *a)
{
	double wrong, right, cut;

	totals(a, &right, &cut, &wrong);
	fprintf(out, "what a report of this run shows, against the true "
		"stacks (correct: all\nframes shown are true; cut: of those, "
		"the callers left unknown where the\ncandidates disagree):\n");
	fprintf(out, "  %-10s %10s %8s %8s %8s %9s\n", "outcome", "samples",
		"share", "correct", "cut", "incorrect");
	for (int h = 0; h < CCT_NR_HOW; h++) {
		fprintf(out, "  %-10s %10.0f %7.1f%%", cct_how__name(h),
			a->by[h], 100 * share(a->by[h], a->samples));
		if (h == CCT_UNKNOWN || !a->by[h]) {
			fprintf(out, " %8s %8s %9s\n", "-", "-", "-");
			continue;
		}
		fprintf(out, " %7.1f%% %7.1f%% %8.1f%%\n",
			100 * a->correct[h] / a->by[h],
			100 * a->cut[h] / a->by[h],
			100 * wrong_of(a, h) / a->by[h]);
	}
	fprintf(out, "  %-10s %10.0f %7.1f%% %7.1f%% %7.1f%% %8.1f%%\n", "all",
		a->samples, a->samples ? 100.0 : 0.0,
		100 * share(right, a->samples), 100 * share(cut, a->samples),
		100 * share(wrong, a->samples));
	if (!a->n || a->v[0].wrong <= 0)
		return;
	fprintf(out, "\n  %-32s %9s %9s\n", "most incorrect", "samples",
		"incorrect");
	for (size_t i = 0; i < a->n && i < TEXT_WRONG; i++) {
		const struct acc_entry *e = &a->v[i];

		if (e->wrong <= 0)
			break;
		fprintf(out, "  %-32.32s %9.0f %8.1f%%\n", e->function,
			e->samples, 100 * e->wrong / e->samples);
	}
}

static void print_accuracy_json(FILE *out, const struct accuracy *a)
{
	double wrong, right, cut;

	totals(a, &right, &cut, &wrong);
	fprintf(out, ",\n \"report\": {\"samples\": %.0f, \"correct\": %.6f, "
		"\"cut\": %.6f, \"incorrect\": %.6f, \"unknown\": %.6f, "
		"\"outcomes\": {", a->samples, share(right, a->samples),
		share(cut, a->samples), share(wrong, a->samples),
		share(a->by[CCT_UNKNOWN], a->samples));
	for (int h = 0; h < CCT_NR_HOW; h++)
		fprintf(out, "%s\"%s\": {\"samples\": %.0f, \"correct\": %.6f, "
			"\"cut\": %.6f}", h ? ", " : "", cct_how__name(h),
			a->by[h],
			h == CCT_UNKNOWN ? 0 : share(a->correct[h], a->by[h]),
			h == CCT_UNKNOWN ? 0 : share(a->cut[h], a->by[h]));
	fprintf(out, "}}");
}

static void free_accuracy(struct accuracy *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i].function);
	free(a->v);
}

static void print_json(FILE *out, const struct validation_input *in,
		       const struct scores *sc, const struct accuracy *a,
		       double overlap)
{
	fprintf(out, "{\"run_id\": %lld, \"samples\": %llu",
		(long long)in->run_id, (unsigned long long)sc->samples);
	if (overlap >= 0)
		fprintf(out, ", \"overlap_k%d\": %.6f", VALIDATION_K, overlap);
	for (int o = 0; o < NR_OUTCOMES; o++)
		fprintf(out, ", \"%s\": %.6f", outcome_names[o],
			share(sc->by[o], sc->samples));
	fprintf(out, ",\n \"ambiguity_histogram\": {");
	for (size_t i = 0; i < sc->nhist; i++)
		fprintf(out, "%s\"%lld\": %llu", i ? ", " : "",
			(long long)sc->hist[i].candidates,
			(unsigned long long)sc->hist[i].samples);
	fprintf(out, "},\n \"unscored\": {\"unresolved\": %llu",
		(unsigned long long)in->unresolved);
	for (size_t i = 0; i < in->nunscored; i++)
		fprintf(out, ", \"%s\": %llu", in->unscored[i].name,
			(unsigned long long)in->unscored[i].samples);
	fprintf(out, "},\n \"functions\": [");
	for (size_t i = 0; i < sc->nfuncs; i++) {
		const struct func_score *f = &sc->funcs[i];

		fprintf(out, "%s\n  {\"function\": ", i ? "," : "");
		json__string(out, f->function);
		fprintf(out, ", \"program\": ");
		json__string(out, f->program);
		fprintf(out, ", \"samples\": %llu",
			(unsigned long long)f->samples);
		for (int o = 0; o < NR_OUTCOMES; o++)
			fprintf(out, ", \"%s\": %.6f", outcome_names[o],
				share(f->by[o], f->samples));
		fputc('}', out);
	}
	fprintf(out, "]");
	print_accuracy_json(out, a);
	fprintf(out, "}\n");
}

static void print_text(FILE *out, const struct validation_input *in,
		       const struct scores *sc, const struct accuracy *a,
		       double overlap)
{
	uint64_t other = 0, truncated = unscored(in, "truncated");

	for (size_t i = 0; i < in->nunscored; i++)
		other += in->unscored[i].samples;
	other -= truncated;
	fprintf(out, "validation (run %lld): %llu samples scored, %llu not "
		"(truncated %llu, unresolved %llu, other %llu)\n\n",
		(long long)in->run_id, (unsigned long long)sc->samples,
		(unsigned long long)(truncated + in->unresolved + other),
		(unsigned long long)truncated,
		(unsigned long long)in->unresolved, (unsigned long long)other);
	print_accuracy_text(out, a);
	if (overlap >= 0)
		fprintf(out, "\nthe profile as a whole: k = %d degree of overlap "
			"with the true stacks %.3f (1: the same; icppd compare "
			"truth:%lld %lld)\n", VALIDATION_K, overlap,
			(long long)in->run_id, (long long)in->run_id);
	fprintf(out, "\nthe path map alone (is the true path among the "
		"CID's candidates):\n");
	fprintf(out, "  %-10s %10s %8s\n", "outcome", "samples", "share");
	for (int o = 0; o < NR_OUTCOMES; o++)
		fprintf(out, "  %-10s %10llu %7.1f%%\n", outcome_names[o],
			(unsigned long long)sc->by[o],
			100 * share(sc->by[o], sc->samples));
	fprintf(out, "\n  %-10s %10s %8s\n", "candidates", "samples", "share");
	for (size_t i = 0; i < sc->nhist; i++)
		fprintf(out, "  %-10lld %10llu %7.1f%%\n",
			(long long)sc->hist[i].candidates,
			(unsigned long long)sc->hist[i].samples,
			100 * share(sc->hist[i].samples, sc->samples));
	fprintf(out, "\n  %-32s %9s %8s %8s %8s %8s\n", "function", "samples",
		"precise", "ambig.", "incorr.", "missing");
	for (size_t i = 0; i < sc->nfuncs && i < TEXT_FUNCTIONS; i++) {
		const struct func_score *f = &sc->funcs[i];

		fprintf(out, "  %-32.32s %9llu", f->function,
			(unsigned long long)f->samples);
		for (int o = 0; o < NR_OUTCOMES; o++)
			fprintf(out, " %7.1f%%", 100 * share(f->by[o], f->samples));
		fputc('\n', out);
	}
	if (sc->nfuncs > TEXT_FUNCTIONS)
		fprintf(out, "  ... %zu more functions (--format json, or the "
			"v_validation view)\n", sc->nfuncs - TEXT_FUNCTIONS);
}

static void free_scores(struct scores *sc)
{
	for (size_t i = 0; i < sc->nfuncs; i++) {
		free(sc->funcs[i].program);
		free(sc->funcs[i].function);
	}
	free(sc->funcs);
	free(sc->hist);
}

/* The k-contexts of a profile, each key once. */
struct contexts {
	struct flat_entry *v;
	size_t n, cap;
};

static int add_context(void *arg, const char *key, int64_t group,
		       double weight)
{
	struct contexts *c = arg;

	(void)group;
	if (grow(&c->v, &c->cap, c->n + 1, sizeof(*c->v), 256) ||
	    !(c->v[c->n].key = strdup(key)))
		return -ENOMEM;
	c->v[c->n++].weight = weight;
	return 0;
}

/* @p's k-contexts into @c, equal keys merged.  0 or -errno. */
static int contexts_of(struct run_profile *p, uint32_t k, struct contexts *c)
{
	int ret = folded__keys(p->cct, k, add_context, c);

	if (!ret)
		metrics__merge(c->v, &c->n);
	return ret;
}

static void contexts_free(struct contexts *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].key);
	free(c->v);
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
	struct contexts a = { 0 }, b = { 0 };
	struct compare_result r;
	double overlap = -1;
	int err;

	if (profile__load(st, &tr, &truth) || profile__load(st, &rr, &p))
		goto out;
	err = contexts_of(&truth.p, VALIDATION_K, &a);
	if (!err)
		err = contexts_of(&p.p, VALIDATION_K, &b);
	if (err) {
		folded__forest_error(err);
		goto out;
	}
	metrics__compare(a.v, a.n, b.v, b.n, 0.01, &r);
	overlap = r.overlap;
out:
	contexts_free(&a);
	contexts_free(&b);
	profile__exit(&truth);
	profile__exit(&p);
	return overlap;
}

int report__validation(struct store *st, FILE *out, bool json,
		       const struct validation_input *in, uint64_t *scored)
{
	struct scores sc = { 0 };
	struct accuracy a = { 0 };
	double overlap;
	int ret = -1;

	*scored = 0;
	if (run_profile__score(st, in->run_id, add_score, &a) < 0)
		goto out;
	if (store_accuracy(st, in->run_id, &a))
		goto out;
	by_function(&a);
	if (store__score(st, in->run_id) ||
	    store__validation(st, in->run_id, add_row, &sc)) {
		log_error("%s", store__error(st));
		goto out;
	}
	qsort(sc.funcs, sc.nfuncs, sizeof(*sc.funcs), cmp_func);
	overlap = overlap_with_truth(st, in->run_id);
	if (json)
		print_json(out, in, &sc, &a, overlap);
	else
		print_text(out, in, &sc, &a, overlap);
	*scored = sc.samples;
	ret = 0;
out:
	free_accuracy(&a);
	free_scores(&sc);
	return ret;
}
