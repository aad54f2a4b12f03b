/*
 * cmd_record.c - "icppd record": the measurement run: CIDs, and the
 * call paths a sparse learning event unwinds meanwhile.
 */
#include <stddef.h>

#include "cli/commands.h"
#include "cli/run_cli.h"
#include "common/log.h"
#include "export/export.h"
#include "export/pull.h"

static const struct cli_option record_options[] = {
	RUN_OPT_DB,
	{ "output", 'o', CLI_STRING, RUN_OPT(db), "FILE",
	  "the profile database, as -d (perf record's -o)", 0, 0 },
	RUN_OPT_PERF_HABITS,
	RUN_OPT_EVENT,
	RUN_OPT_FREQ("1000"),
	RUN_OPT_PERIOD("1000003"),
	RUN_OPT_PID,
	RUN_OPT_DURATION,
	{ "mmap-pages", 'm', CLI_UINT, RUN_OPT(mmap_pages), "N",
	  "ring buffer pages per CPU, a power of two (default 64; while "
	  "learning, 1024 at 1000 Hz with 16 KiB stack copies, in "
	  "proportion up to 4096, and copies grown to 64 KiB get rings "
	  "of their own so sized)", 1, 65536 },
	RUN_OPT_QUIET,
	{ "kernel", 0, CLI_FLAG, RUN_OPT(kernel), NULL,
	  "sample time in the kernel too, attributed to the user call path "
	  "that entered it and shown under [kernel]", 0, 0 },
	{ "off-cpu", 0, CLI_FLAG, RUN_OPT(off_cpu), NULL,
	  "off-CPU time too: each switch out of a thread, at the CID it "
	  "entered the kernel from, weighed by the time until it ran again "
	  "(report --off-cpu shows it); needs what --kernel needs", 0, 0 },
	{ "no-learn", 0, CLI_FLAG, RUN_OPT(no_learn), NULL,
	  "CIDs only: learn no call paths during the run", 0, 0 },
	{ "learn-freq", 0, CLI_UINT, RUN_OPT(learn_freq), "HZ",
	  "samples per second of the learning event while it is on "
	  "(default: the sampling rate up to 1000, when it takes the main "
	  "event's turn and its samples are exact ones; 1000 above it, 250 "
	  "above --leaf-freq, where every sample's leaf copy is cut; -F's "
	  "rate: every sample exact at any rate)", 1,
	  RUN_MAX_LEARN_HZ },
	{ "leaf-stack", 0, CLI_UINT, RUN_OPT(leaf_stack), "BYTES",
	  "while the learning event runs below the sampling rate (a "
	  "--learn-freq), every sample copies the innermost BYTES of its "
	  "stack, a multiple of 8, less than --stack-size: its innermost "
	  "frames exact, the rest inferred (0: none, the CIDs alone)", 0,
	  RUN_MAX_STACK, .dflt = "4096" },
	{ "leaf-freq", 0, CLI_UINT, RUN_OPT(leaf_freq), "HZ",
	  "the bytes a second of HZ leaf copies: above HZ samples a second, "
	  "every sample copies less to keep them, at least 1024 bytes (0: "
	  "every sample copies --leaf-stack)", 0, RUN_MAX_LEARN_HZ,
	  .dflt = "2500" },
	{ "leaf-known", 0, CLI_UINT, RUN_OPT(leaf_known), "N",
	  "a leaf copy whose context identifier the learned paths explain "
	  "is unwound one time in N, the others' paths inferred as a sample's "
	  "without a copy (1: every copy unwound); up to --leaf-freq, "
	  "not while one sample is all its path has", 1, 1000000,
	  .dflt = "8" },
	RUN_OPT_STACK,
	RUN_OPT_NO_CACHE,
	{ "export", 0, CLI_STRING, RUN_OPT(export_url), "URL",
	  "then ship the run (and any still queued) to the ClickHouse "
	  "server at URL (http://HOST:8123)", 0, 0 },
};

const struct cli_command record_command = {
	.name = "record",
	.synopsis = "[options] -- COMMAND [ARGS...]\n       icppd record [options] -p PID",
	.brief = "the measurement run: sample stack pointer and program counter",
	.summary = "Sample the stack pointer and program counter of COMMAND (or of\n"
		   "a running process) and store context identifiers (function,\n"
		   "stack height) in the profile database.  Meanwhile a learning\n"
		   "event copies stacks, in bursts while some context identifiers\n"
		   "are not yet explained, taking the main event's turn: a sample\n"
		   "it unwinds whole is reported in its own call path, and the\n"
		   "paths join the path map of each program's build.",
	.options = record_options,
	.noptions = sizeof(record_options) / sizeof(record_options[0]),
	.epilog = "With a COMMAND, icppd exits with its exit status (128+N when it\n"
		  "was killed by signal N).  Ctrl-C stops recording and keeps what\n"
		  "was recorded.  See icppd-record(1) and icppd-schema(5).\n",
};

/* Recording ends when the command does: no inference here.  The
 * first report (or export) of the run infers it once and stores the
 * result for every later one (profile/). */
static int record_finish(const struct run_result *res)
{
	struct export_result ex;

	/* a server away costs the run nothing: it stays queued */
	if (res->opts->export_url &&
	    !export__run(res->store, res->run_id, res->opts->export_url,
			 false, &ex) && ex.failed)
		log_warn("export: %s: run %lld stays queued (icppd export "
			 "--retry -d %s %s retries)", ex.error,
			 (long long)res->run_id, res->opts->db,
			 res->opts->export_url);
	return 0;
}

/* With --export, a build this database never asked the fleet about:
 * its path map from the server, so that the run is explained from its
 * first sample.  A server away costs the run nothing. */
static void record_start(struct store *st, const struct run_opts *o,
			 const char *path, const char *build_id)
{
	struct pull_result res;
	int r;

	if (!o->export_url || !*build_id)
		return;
	r = pull__builds(st, o->export_url, 0, build_id, &res);
	if (r == PULL_REMOTE_FAILED)
		log_warn("fleet: no path map pulled for %s: %s", path,
			 res.error);
	else if (!r && res.paths)
		log_info("fleet: %s: %lld path%s learned by %lld other "
			 "host%s, from %s", path, (long long)res.paths,
			 res.paths == 1 ? "" : "s", (long long)res.sources,
			 res.sources == 1 ? "" : "s", o->export_url);
}

static const struct run_mode record_mode = {
	.kind = "record",
	.learn = true,
	.start = record_start,
	.finish = record_finish,
};

int cmd_record(int argc, char **argv)
{
	return run_cli__main(&record_command, &record_mode, argc, argv);
}
