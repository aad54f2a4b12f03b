/*
 * cmd_validate.c - "icppd validate": a measurement run that also unwinds
 * each sample's stack copy to learn its true path, then scores what the
 * path map infers from the CID alone: precise, ambiguous, incorrect,
 * missing (the outcomes of the ICPP paper), the degree of ambiguity and
 * the shares by function.  Scores are stored (v_validation) and printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/collector.h"
#include "common/grow.h"
#include "cli/commands.h"
#include "common/json.h"
#include "common/log.h"
#include "cli/run_cli.h"
#include "schema/store.h"
#include "schema/validation.h"

/* Functions listed by the text format; json lists all. */
#define TEXT_FUNCTIONS 20

static const char *const formats[] = { "text", "json", NULL };

static const struct cli_option validate_options[] = {
	RUN_OPT_DB,
	{ "format", 0, CLI_ENUM, RUN_OPT(format), "FMT", "text or json", 0, 0,
	  .dflt = "text", .choices = formats },
	RUN_OPT_EVENT,
	RUN_OPT_FREQ("1000"),
	RUN_OPT_PERIOD("1000003"),
	RUN_OPT_STACK,
	RUN_OPT_PID,
	RUN_OPT_DURATION,
	RUN_OPT_MMAP("1024"),
	RUN_OPT_OUTPUT,
	RUN_OPT_QUIET,
};

const struct cli_command validate_command = {
	.name = "validate",
	.synopsis = "[options] -- COMMAND [ARGS...]\n       icppd validate [options] -p PID",
	.brief = "score call-path inference against the true stacks",
	.summary = "Score inference: record COMMAND with the true stack of each\n"
		   "sample, and compare the paths the path map gives for each\n"
		   "context identifier with the truth.",
	.options = validate_options,
	.noptions = sizeof(validate_options) / sizeof(validate_options[0]),
	.epilog = "Needs a training run of the same build first (icppd train).\n"
		  "COMMAND writes to the same standard output: give -o FILE\n"
		  "for output a program reads (--format json).\n"
		  "See icppd-validate(1) and the v_validation view.\n",
};

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
	int err;
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
			return sc->err = -1;
		memmove(&sc->hist[i + 1], &sc->hist[i],
			(sc->nhist - i) * sizeof(*sc->hist));
		sc->hist[i] = (struct bucket){ r->candidates, 0 };
		sc->nhist++;
	}
	sc->hist[i].samples += (uint64_t)r->samples;
	f = func_score(sc, r->program, r->function);
	if (!f)
		return sc->err = -1;
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

/* Samples with a CID whose truth is unknown, by reason. */
static uint64_t unscored(const struct run_result *res, int status)
{
	return res->stats->unwind[status];
}

static void print_json(FILE *out, const struct run_result *res,
		       const struct scores *sc)
{
	const struct collector_stats *cs = res->stats;

	fprintf(out, "{\"run_id\": %lld, \"samples\": %llu",
		(long long)res->run_id, (unsigned long long)sc->samples);
	for (int o = 0; o < NR_OUTCOMES; o++)
		fprintf(out, ", \"%s\": %.6f", outcome_names[o],
			share(sc->by[o], sc->samples));
	fprintf(out, ",\n \"ambiguity_histogram\": {");
	for (size_t i = 0; i < sc->nhist; i++)
		fprintf(out, "%s\"%lld\": %llu", i ? ", " : "",
			(long long)sc->hist[i].candidates,
			(unsigned long long)sc->hist[i].samples);
	fprintf(out, "},\n \"unscored\": {\"unresolved\": %llu",
		(unsigned long long)cs->unresolved);
	for (int i = UNW_TRUNCATED; i < UNW_NR_STATUS; i++)
		fprintf(out, ", \"%s\": %llu", unwind_status__name(i),
			(unsigned long long)unscored(res, i));
	fprintf(out, ", \"map_full\": %llu},\n \"functions\": [",
		(unsigned long long)res->map_full);
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

static void print_text(FILE *out, const struct run_result *res,
		       const struct scores *sc)
{
	const struct collector_stats *cs = res->stats;
	uint64_t other = cs->unresolved + res->map_full;

	for (int i = UNW_TRUNCATED; i < UNW_NR_STATUS; i++)
		other += unscored(res, i);
	fprintf(out, "validation (run %lld): %llu samples scored, %llu not "
		"(truncated %llu, unresolved %llu, other %llu)\n\n",
		(long long)res->run_id, (unsigned long long)sc->samples,
		(unsigned long long)other,
		(unsigned long long)unscored(res, UNW_TRUNCATED),
		(unsigned long long)cs->unresolved,
		(unsigned long long)(other - unscored(res, UNW_TRUNCATED) -
				     cs->unresolved));
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

static int validate_finish(const struct run_result *res)
{
	struct scores sc = { 0 };
	bool json = res->opts->format == 1;
	int ret = 0;

	if (store__score(res->store, res->run_id) ||
	    store__validation(res->store, res->run_id, add_row, &sc)) {
		log_error("%s", store__error(res->store));
		ret = -1;
		goto out;
	}
	if (sc.err) {
		log_error("out of memory");
		ret = -1;
		goto out;
	}
	qsort(sc.funcs, sc.nfuncs, sizeof(*sc.funcs), cmp_func);
	if (json)
		print_json(res->out, res, &sc);
	else
		print_text(res->out, res, &sc);
	if (!sc.samples)
		log_warn("no sample could be scored: none had a whole stack "
			 "(see 'unscored'; a larger --stack-size may help)");
out:
	for (size_t i = 0; i < sc.nfuncs; i++) {
		free(sc.funcs[i].program);
		free(sc.funcs[i].function);
	}
	free(sc.funcs);
	free(sc.hist);
	return ret;
}

static const struct run_mode validate_mode = {
	.kind = "validate",
	.unwind = true,
	.truth = true,
	.needs_training = true,
	.finish = validate_finish,
};

int cmd_validate(int argc, char **argv)
{
	return run_cli__main(&validate_command, &validate_mode, argc, argv);
}
