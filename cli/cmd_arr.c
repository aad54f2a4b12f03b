/*
 * cmd_arr.c - "icppd arr": its options, the job of arr/resize.h, and
 * what it did printed.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "arr/resize.h"
#include "cli/commands.h"
#include "common/log.h"

struct arr_cli {
	const char *db, *output;
	double growth, target;
	uint64_t seed;
};

#define OPT(f) offsetof(struct arr_cli, f)
static const struct cli_option arr_options[] = {
	CLI_OPT_DATABASE(OPT(db)),
	{ "output", 'o', CLI_STRING, OPT(output), "OUT",
	  "the rewritten binary to write (required)", 0, 0 },
	{ "max-stack-growth", 0, CLI_DOUBLE, OPT(growth), "F",
	  "deepest training stack may grow F times", 0, 0, .dflt = "1.25",
	  .lo = 1, .hi = 100 },
	{ "target", 0, CLI_DOUBLE, OPT(target), "P",
	  "stop when P % of the training samples are precise", 0, 0,
	  .dflt = "97", .lo = 0, .hi = 100 },
	{ "seed", 0, CLI_UINT, OPT(seed), "N",
	  "seed of the search (default 1): the same seed, the same pads",
	  0, UINT32_MAX },
};

const struct cli_command arr_command = {
	.name = "arr",
	.synopsis = "[options] -o OUT BINARY",
	.brief = "activation record resizing: separate colliding context identifiers",
	.summary = "Activation record resizing: write a copy of BINARY whose\n"
		   "chosen functions have larger frames, so that colliding\n"
		   "context identifiers separate.",
	.options = arr_options,
	.noptions = sizeof(arr_options) / sizeof(arr_options[0]),
	.permute = true,
	.epilog = "BINARY needs a training run (icppd train).  OUT is\n"
		  "registered with the predicted path map at once.  See\n"
		  "icppd-arr(1) and the v_arr views.\n",
};

static int usage(const char *msg, const char *arg)
{
	fprintf(stderr, "icppd: arr: %s%s\nTry 'icppd arr --help'.\n", msg,
		arg);
	return 2;
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100 * part / whole : 0;
}

static void print(const struct resize_outcome *j)
{
	const struct arr_result *r = &j->res;
	size_t unsafe = 0;

	printf("arr: %s (build-id %s)\n", j->output, j->build_id);
	printf("  precise, by training samples: %.1f%% -> %.1f%% (predicted)\n",
	       pct(r->precise_before, r->total), pct(r->precise_after, r->total));
	printf("  precise, by path:             %.1f%% -> %.1f%% (%zu paths)\n",
	       pct((double)r->unique_before, (double)r->paths),
	       pct((double)r->unique_after, (double)r->paths), r->paths);
	printf("  deepest stack: %lld -> %lld bytes (growth %.3fx); search %.0f "
	       "ms, %u steps\n", (long long)r->deepest_before,
	       (long long)r->deepest_after, r->deepest_before ?
	       (double)r->deepest_after / (double)r->deepest_before : 1.0,
	       j->search_ms, r->steps);
	printf("\n  %-32s %8s %6s\n", "padded function", "frame", "pad");
	for (size_t i = 0; i < j->nfuncs; i++)
		if (r->pads[i])
			printf("  %-32s %8lld %6lld\n", j->funcs[i].name,
			       (long long)j->funcs[i].frame.frame,
			       (long long)r->pads[i]);
	for (size_t i = 0; i < j->nfuncs; i++)
		unsafe += j->funcs[i].module_id == j->program && j->funcs[i].why;
	if (unsafe) {
		printf("\n  not padable (%zu):\n", unsafe);
		for (size_t i = 0; i < j->nfuncs; i++)
			if (j->funcs[i].module_id == j->program && j->funcs[i].why)
				printf("  %-32s %s\n", j->funcs[i].name,
				       j->funcs[i].why);
	}
	if (r->inseparable > 0)
		printf("\n  %.0f training samples (%.1f%%) collide in contexts "
		       "no pad can separate (same functions in another order, or "
		       "differing only in functions that cannot be padded): see "
		       "v_arr_inseparable\n", r->inseparable,
		       pct(r->inseparable, r->total));
}

int cmd_arr(int argc, char **argv)
{
	struct arr_cli o = { 0 };
	struct resize_request q;
	struct resize_outcome out;
	int idx, ret = 1;

	cli__defaults(&arr_command, &o);
	idx = cli__parse(&arr_command, argc, argv, &o);
	if (idx < 0)
		return idx == -1 ? 0 : 2;
	if (argc - idx != 1)
		return usage("expected one BINARY", "");
	if (!o.output)
		return usage("-o OUT is required: arr writes a new file", "");
	q = (struct resize_request){ .db = o.db, .binary = argv[idx],
		.output = o.output, .growth = o.growth,
		.target = o.target / 100, .seed = o.seed };
	if (!resize__run(&q, &out)) {
		if (out.known)
			log_info("%s: this build (build-id %s) is registered "
				 "already; the file is written again", o.output,
				 out.build_id);
		else
			print(&out);
		ret = 0;
	}
	resize__exit(&out);
	return ret;
}
