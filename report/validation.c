/*
 * validation.c - the scores of a validation run (profile/validation.h)
 * as users read them, in text or JSON: what a report of the run shows
 * against its true stacks, the profile's overlap with them, and what
 * the path map alone gives.
 */
#include "report/validation.h"

#include <string.h>

#include "common/json.h"

/* Functions listed by the text format; json lists all. */
#define TEXT_FUNCTIONS 20
/* Functions with the most incorrect weight, listed by the text format. */
#define TEXT_WRONG 10

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

static double wrong_of(const struct validation_report *a, int h)
{
	return validation__incorrect((enum cct_how)h, a->by[h], a->correct[h]);
}

/* Correct (of it, cut short), incorrect, and correct as far as a k = 3
 * report shows, weight over all outcomes. */
static void totals(const struct validation_report *a, double *right, double *cut,
		   double *wrong, double *right_k)
{
	*right = *cut = *wrong = *right_k = 0;
	for (int h = 0; h < CCT_UNKNOWN; h++) {
		*right += a->correct[h];
		*cut += a->cut[h];
		*wrong += wrong_of(a, h);
		*right_k += a->correct_k[h];
	}
}

static void print_accuracy_text(FILE *out, const struct validation_report *a)
{
	double wrong, right, cut, right_k;

	totals(a, &right, &cut, &wrong, &right_k);
	fprintf(out, "what a report of this run shows, against the true "
		"stacks (correct: all\nframes shown are true; cut: of those, "
		"the callers left unknown where the\ncandidates disagree; "
		"k=%d: the frames a report with --k %d shows\nare true, the "
		"leaf and %d callers):\n", VALIDATION_K, VALIDATION_K,
		VALIDATION_K);
	fprintf(out, "  %-10s %10s %8s %8s %8s %9s %7s%d\n", "outcome",
		"samples", "share", "correct", "cut", "incorrect", "k=",
		VALIDATION_K);
	for (int h = 0; h < CCT_NR_HOW; h++) {
		fprintf(out, "  %-10s %10.0f %7.1f%%", cct_how__name(h),
			a->by[h], 100 * share(a->by[h], a->samples));
		if (h == CCT_UNKNOWN || !a->by[h]) {
			fprintf(out, " %8s %8s %9s %8s\n", "-", "-", "-",
				"-");
			continue;
		}
		fprintf(out, " %7.1f%% %7.1f%% %8.1f%% %7.1f%%\n",
			100 * a->correct[h] / a->by[h],
			100 * a->cut[h] / a->by[h],
			100 * wrong_of(a, h) / a->by[h],
			100 * a->correct_k[h] / a->by[h]);
	}
	fprintf(out, "  %-10s %10.0f %7.1f%% %7.1f%% %7.1f%% %8.1f%% %7.1f%%\n",
		"all", a->samples, a->samples ? 100.0 : 0.0,
		100 * share(right, a->samples), 100 * share(cut, a->samples),
		100 * share(wrong, a->samples),
		100 * share(right_k, a->samples));
	if (!a->n || a->v[0].wrong <= 0)
		return;
	fprintf(out, "\n  %-32s %9s %9s\n", "most incorrect", "samples",
		"incorrect");
	for (size_t i = 0; i < a->n && i < TEXT_WRONG; i++) {
		const struct validation_entry *e = &a->v[i];

		if (e->wrong <= 0)
			break;
		fprintf(out, "  %-32.32s %9.0f %8.1f%%\n", e->function,
			e->samples, 100 * e->wrong / e->samples);
	}
}

static void print_accuracy_json(FILE *out, const struct validation_report *a)
{
	double wrong, right, cut, right_k;

	totals(a, &right, &cut, &wrong, &right_k);
	fprintf(out, ",\n \"report\": {\"samples\": %.0f, \"correct\": %.6f, "
		"\"cut\": %.6f, \"incorrect\": %.6f, \"unknown\": %.6f, "
		"\"correct_k%d\": %.6f, \"outcomes\": {", a->samples,
		share(right, a->samples), share(cut, a->samples),
		share(wrong, a->samples), share(a->by[CCT_UNKNOWN], a->samples),
		VALIDATION_K, share(right_k, a->samples));
	for (int h = 0; h < CCT_NR_HOW; h++)
		fprintf(out, "%s\"%s\": {\"samples\": %.0f, \"correct\": %.6f, "
			"\"cut\": %.6f, \"correct_k%d\": %.6f}", h ? ", " : "",
			cct_how__name(h), a->by[h],
			h == CCT_UNKNOWN ? 0 : share(a->correct[h], a->by[h]),
			h == CCT_UNKNOWN ? 0 : share(a->cut[h], a->by[h]),
			VALIDATION_K,
			h == CCT_UNKNOWN ? 0 : share(a->correct_k[h], a->by[h]));
	fprintf(out, "}}");
}

static void print_json(FILE *out, const struct validation_input *in,
		       const struct validation_map *sc, const struct validation_report *a,
		       double overlap)
{
	fprintf(out, "{\"run_id\": %lld, \"samples\": %llu",
		(long long)in->run_id, (unsigned long long)sc->samples);
	if (overlap >= 0)
		fprintf(out, ", \"overlap_k%d\": %.6f", VALIDATION_K, overlap);
	for (int o = 0; o < VALIDATION_NR_OUTCOMES; o++)
		fprintf(out, ", \"%s\": %.6f", validation_outcome_names[o],
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
		const struct validation_func *f = &sc->funcs[i];

		fprintf(out, "%s\n  {\"function\": ", i ? "," : "");
		json__string(out, f->function);
		fprintf(out, ", \"program\": ");
		json__string(out, f->program);
		fprintf(out, ", \"samples\": %llu",
			(unsigned long long)f->samples);
		for (int o = 0; o < VALIDATION_NR_OUTCOMES; o++)
			fprintf(out, ", \"%s\": %.6f", validation_outcome_names[o],
				share(f->by[o], f->samples));
		fputc('}', out);
	}
	fprintf(out, "]");
	print_accuracy_json(out, a);
	fprintf(out, "}\n");
}

static void print_text(FILE *out, const struct validation_input *in,
		       const struct validation_map *sc, const struct validation_report *a,
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
	for (int o = 0; o < VALIDATION_NR_OUTCOMES; o++)
		fprintf(out, "  %-10s %10llu %7.1f%%\n", validation_outcome_names[o],
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
		const struct validation_func *f = &sc->funcs[i];

		fprintf(out, "  %-32.32s %9llu", f->function,
			(unsigned long long)f->samples);
		for (int o = 0; o < VALIDATION_NR_OUTCOMES; o++)
			fprintf(out, " %7.1f%%", 100 * share(f->by[o], f->samples));
		fputc('\n', out);
	}
	if (sc->nfuncs > TEXT_FUNCTIONS)
		fprintf(out, "  ... %zu more functions (--format json, or the "
			"v_validation view)\n", sc->nfuncs - TEXT_FUNCTIONS);
}

void report__validation(FILE *out, bool json,
			const struct validation_input *in,
			const struct validation_scores *s)
{
	if (json)
		print_json(out, in, &s->map, &s->report, s->overlap);
	else
		print_text(out, in, &s->map, &s->report, s->overlap);
}
