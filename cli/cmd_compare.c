/*
 * cmd_compare.c - "icppd compare A B": its options, and the scores of
 * profile/compare.h printed.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "common/outfile.h"
#include "inference/kccf.h"
#include "profile/compare.h"

struct compare_opts {
	const char *db, *k, *threshold, *format, *output;
	bool no_inline;
};

#define OPT(f) offsetof(struct compare_opts, f)
static const struct cli_option compare_options[] = {
	CLI_OPT_DATABASE(OPT(db)),
	{ "k", 'k', CLI_STRING, OPT(k), "K",
	  "compare k-contexts: the last K callers of each context "
	  "(default inf: whole contexts)", 0, 0 },
	{ "threshold", 't', CLI_STRING, OPT(threshold), "P",
	  "a context is hot with at least P % of its profile (default 1)",
	  0, 0 },
	{ "format", 'f', CLI_STRING, OPT(format), "FMT",
	  "text (default) or json", 0, 0 },
	CLI_OPT_OUTPUT(OPT(output)),
	{ "no-inline", 0, CLI_FLAG, OPT(no_inline), NULL,
	  "runs without their inlined frames, as report --no-inline "
	  "shows them (a comparison with truth:ID never has them)", 0, 0 },
};

const struct cli_command compare_command = {
	.name = "compare",
	.synopsis = "[options] A B",
	.brief = "how alike two call-path profiles are",
	.summary = "Score how alike two profiles are: degree of overlap and\n"
		   "hot-edge coverage of B against the reference A.",
	.options = compare_options,
	.noptions = sizeof(compare_options) / sizeof(compare_options[0]),
	.permute = true,
	.epilog = "A and B: a run id (its inferred profile), truth:ID (the\n"
		  "true paths of validation run ID), or a folded file\n"
		  "(icppd report --format folded, or any flame graph input).\n"
		  "See icppd-compare(1).\n",
};

int cmd_compare(int argc, char **argv)
{
	struct compare_opts o = { 0 };
	struct compare_request q = { .k = KCCF_INF };
	struct compare_scores sc;
	const struct compare_result *r = &sc.r;
	struct outfile out = { 0 };
	double threshold = 1;
	bool json;
	int idx, ret = 1;
	char *end;

	cli__defaults(&compare_command, &o);
	idx = cli__parse(&compare_command, argc, argv, &o);
	if (idx < 0)
		return idx == -1 ? 0 : 2;
	json = o.format && !strcmp(o.format, "json");
	if (argc - idx != 2 || (o.format && !json && strcmp(o.format, "text"))) {
		fprintf(stderr, "icppd: compare: %s\nTry 'icppd compare "
			"--help'.\n", argc - idx != 2 ? "expected two profiles, "
			"A and B" : "--format: expected text or json");
		return 2;
	}
	if (o.k && cli__parse_count("compare", "k", o.k, KCCF_INF, &q.k))
		return 2;
	if (o.threshold) {
		threshold = strtod(o.threshold, &end);
		if (end == o.threshold || *end || !(threshold > 0) ||
		    threshold > 100) {
			fprintf(stderr, "icppd: compare: --threshold: expected "
				"a percentage > 0 and <= 100, not '%s'\n"
				"Try 'icppd compare --help'.\n", o.threshold);
			return 2;
		}
	}
	q.db = o.db;
	q.a = argv[idx];
	q.b = argv[idx + 1];
	q.threshold = threshold / 100;
	q.no_inline = o.no_inline;
	if (outfile__open(&out, o.output))
		return 1;
	cli__use_calls_cache();
	if (compare__profiles(&q, &sc))
		goto out;
	if (json)
		fprintf(out.f, "{\"overlap\": %.6f, \"coverage\": %.6f, "
			"\"hot_a\": %zu, \"hot_both\": %zu, \"contexts_a\": %zu, "
			"\"contexts_b\": %zu, \"common\": %zu, \"samples_a\": "
			"%.6f, \"samples_b\": %.6f}\n", r->overlap, r->coverage,
			r->hot_a, r->hot_both, sc.contexts_a, sc.contexts_b,
			r->common, r->total_a, r->total_b);
	else if (r->hot_a)
		fprintf(out.f, "degree of overlap: %.4f\nhot-edge coverage "
			"(>= %g%%): %.4f (%zu of %zu hot contexts of A are hot "
			"in B)\ncontexts: %zu in A, %zu in B, %zu in both\n",
			r->overlap, threshold, r->coverage, r->hot_both, r->hot_a,
			sc.contexts_a, sc.contexts_b, r->common);
	else	/* a broad profile: a coverage of nothing says nothing */
		fprintf(out.f, "degree of overlap: %.4f\nhot-edge coverage "
			"(>= %g%%): none measured, no context of A holds %g%% "
			"(-t P lowers the threshold)\ncontexts: %zu in A, %zu "
			"in B, %zu in both\n", r->overlap, threshold, threshold,
			sc.contexts_a, sc.contexts_b, r->common);
	ret = 0;
out:
	if (outfile__close(&out, !ret))
		ret = 1;
	return ret;
}
