/*
 * validation.c - the scores of a validation run, as users read them:
 * outcome shares (precise, ambiguous, incorrect, missing: the outcomes
 * of the ICPP paper), the degree of ambiguity, and the shares by
 * function, in text or JSON (see report/validation.h).
 */
#include "report/validation.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/json.h"
#include "common/log.h"
#include "schema/validation.h"

/* Functions listed by the text format; json lists all. */
#define TEXT_FUNCTIONS 20

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

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

/* Samples not scored for reason @name (0 when none is given). */
static uint64_t unscored(const struct validation_input *in, const char *name)
{
	for (size_t i = 0; i < in->nunscored; i++)
		if (!strcmp(in->unscored[i].name, name))
			return in->unscored[i].samples;
	return 0;
}

static void print_json(FILE *out, const struct validation_input *in,
		       const struct scores *sc)
{
	fprintf(out, "{\"run_id\": %lld, \"samples\": %llu",
		(long long)in->run_id, (unsigned long long)sc->samples);
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
	fprintf(out, "]}\n");
}

static void print_text(FILE *out, const struct validation_input *in,
		       const struct scores *sc)
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

int report__validation(struct store *st, FILE *out, bool json,
		       const struct validation_input *in, uint64_t *scored)
{
	struct scores sc = { 0 };

	*scored = 0;
	if (store__score(st, in->run_id) ||
	    store__validation(st, in->run_id, add_row, &sc)) {
		log_error("%s", store__error(st));
		free_scores(&sc);
		return -1;
	}
	qsort(sc.funcs, sc.nfuncs, sizeof(*sc.funcs), cmp_func);
	if (json)
		print_json(out, in, &sc);
	else
		print_text(out, in, &sc);
	*scored = sc.samples;
	free_scores(&sc);
	return 0;
}
