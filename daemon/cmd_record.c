/*
 * cmd_record.c - "icppd record": the measurement run (CIDs only).
 */
#include <stddef.h>

#include "daemon/commands.h"
#include "daemon/profile.h"
#include "daemon/run_profile.h"

static const struct cli_option record_options[] = {
	PROFILE_OPT_DB,
	PROFILE_OPT_EVENT,
	PROFILE_OPT_FREQ("1000"),
	PROFILE_OPT_PERIOD("1000003"),
	PROFILE_OPT_PID,
	PROFILE_OPT_DURATION,
	PROFILE_OPT_MMAP("64"),
	PROFILE_OPT_QUIET,
};

const struct cli_command record_command = {
	.name = "record",
	.synopsis = "[options] -- COMMAND [ARGS...]\n       icppd record [options] -p PID",
	.brief = "the measurement run: sample stack pointer and program counter",
	.summary = "Sample the stack pointer and program counter of COMMAND (or of\n"
		   "a running process) and store context identifiers (function,\n"
		   "stack height) in the profile database.",
	.options = record_options,
	.noptions = sizeof(record_options) / sizeof(record_options[0]),
	.epilog = "With a COMMAND, icppd exits with its exit status (128+N when it\n"
		  "was killed by signal N).  Ctrl-C stops recording and keeps what\n"
		  "was recorded.  See icppd-record(1) and icppd-schema(5).\n",
};

/* The inferred contexts are stored with the samples, so the v_inferred
 * and v_kccf views answer as soon as the run ends.  A failure costs
 * only that: report infers again. */
static int record_finish(const struct profile_result *res)
{
	struct store_selection sel = { .run_id = res->run_id };
	struct run_profile p;

	run_profile__infer(res->store, &sel, true, &p);
	run_profile__free(&p);
	return 0;
}

static const struct profile_mode record_mode = {
	.cmd = &record_command,
	.finish = record_finish,
};

int cmd_record(int argc, char **argv)
{
	return profile__main(&record_mode, argc, argv);
}
