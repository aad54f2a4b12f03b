/*
 * cmd_annotate.c - "icppd annotate SYMBOL": a function's samples by
 * instruction and source line, as perf annotate prints them
 * (profile/annotate.h builds them, report/annotate.h prints them).
 */
#include <stdio.h>

#include "cli/commands.h"
#include "common/log.h"
#include "common/outfile.h"
#include "profile/annotate.h"
#include "profile/profile.h"
#include "report/annotate.h"
#include "schema/report_store.h"

struct annotate_opts {
	const char *db, *output, *comm;
	uint64_t run, pid, tid;
	bool no_source, no_lines;
};

#define OPT(f) offsetof(struct annotate_opts, f)

static const struct cli_option annotate_options[] = {
	CLI_OPT_DATABASE(OPT(db)),
	{ "input", 'i', CLI_STRING, OPT(db), "FILE",
	  "the profile database, as -d (perf annotate's -i)", 0, 0 },
	{ "run", 0, CLI_UINT, OPT(run), "ID",
	  "the run (default: the latest measurement run)", 1, INT64_MAX },
	{ "pid", 'p', CLI_UINT, OPT(pid), "PID",
	  "only the samples of process PID", 1, INT32_MAX },
	{ "tid", 0, CLI_UINT, OPT(tid), "TID",
	  "only the samples of the process of thread TID", 1, INT32_MAX },
	{ "comm", 0, CLI_STRING, OPT(comm), "NAME",
	  "only the samples of processes with a thread named NAME", 0, 0 },
	{ "no-source", 0, CLI_FLAG, OPT(no_source), NULL,
	  "name each source line by file and number, without its text",
	  0, 0 },
	{ "no-lines", 0, CLI_FLAG, OPT(no_lines), NULL,
	  "instructions only: no DWARF lines", 0, 0 },
	{ "stdio", 0, CLI_FLAG, 0, NULL, "text on standard output is the "
	  "default: perf's --stdio is not needed", 0, 0, .flags = CLI_NOTE },
	CLI_OPT_OUTPUT(OPT(output)),
};

const struct cli_command annotate_command = {
	.name = "annotate",
	.synopsis = "[options] SYMBOL",
	.brief = "a function's samples by instruction and source line",
	.summary = "Show where in function SYMBOL its samples fell: each\n"
		   "instruction of its code (decoded from the binary the run\n"
		   "sampled) with its share of the function's samples, the\n"
		   "source lines (DWARF) between them, and first a summary of\n"
		   "the sampled lines, as perf annotate --stdio prints them.\n"
		   "SYMBOL is a name as reports show it (with or without its\n"
		   "parameters), mangled, or an address label of stripped code\n"
		   "(prog+0x1130): stripped code is shown by instruction.",
	.options = annotate_options,
	.noptions = sizeof(annotate_options) / sizeof(annotate_options[0]),
	.permute = true,
	.epilog = "See icppd-annotate(1).\n",
};

int cmd_annotate(int argc, char **argv)
{
	struct annotate_opts o = { .db = "icppd.db" };
	struct annotate_request r = { 0 };
	struct annotation *a = NULL;
	struct outfile out = { 0 };
	struct run_row run;
	struct store *st;
	size_t n = 0;
	int64_t run_id;
	int idx, ret = 1, got;

	idx = cli__parse(&annotate_command, argc, argv, &o);
	if (idx < 0)
		return idx == -1 ? 0 : 2;
	if (argc - idx != 1 || !*argv[idx]) {
		fprintf(stderr, "icppd: annotate: expected one SYMBOL (a "
			"function's name)\nTry 'icppd annotate --help'.\n");
		return 2;
	}
	r.symbol = argv[idx];
	r.sel = (struct store_selection){ .run_id = (int64_t)o.run,
		.until_ns = INT64_MAX, .pid = (int64_t)o.pid,
		.tid = (int64_t)o.tid, .comm = o.comm };
	r.no_lines = o.no_lines;
	if (!(st = profile__open(o.db)))
		return 1;
	got = annotate__load(st, &r, &run_id, &a, &n);
	if (got)
		goto out;
	if (store__run(st, run_id, &run)) {
		log_error("%s", store__error(st));
		goto out;
	}
	if (outfile__open(&out, o.output))
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (n > 1)
			fprintf(out.f, "%s%s (%zu of %zu functions of that "
				"name)\n", i ? "\n" : "", a[i].module ?
				a[i].module : "?", i + 1, n);
		annotate__print(out.f, &a[i], run.event, run_id, !o.no_source);
	}
	ret = 0;
out:
	annotate__free(a, n);
	store__close(st);
	if (outfile__close(&out, !ret))
		ret = 1;
	return ret;
}
