/*
 * cmd_record.c - "icppd record": the measurement run (CIDs only).
 */
#include <stddef.h>

#include "daemon/commands.h"
#include "daemon/profile.h"

static const struct cli_option record_options[] = {
	PROFILE_OPT_DB,
	PROFILE_OPT_EVENT,
	{ "freq", 'F', CLI_UINT, PROFILE_OPT(freq), "HZ",
	  "samples per second of CPU time (default 1000 for cpu-clock)",
	  1, 100000 },
	{ "period", 'c', CLI_UINT, PROFILE_OPT(period), "N",
	  "one sample every N events (default 1000003 for precise events)",
	  1, UINT64_MAX },
	PROFILE_OPT_PID,
	{ "duration", 0, CLI_SECONDS, PROFILE_OPT(duration), "S",
	  "stop recording after S seconds", 0, 0 },
	{ "mmap-pages", 'm', CLI_UINT, PROFILE_OPT(mmap_pages), "N",
	  "ring buffer pages per CPU, a power of two (default 64)", 1, 65536 },
	PROFILE_OPT_QUIET,
};

const struct cli_command record_command = {
	.name = "record",
	.synopsis = "[options] -- COMMAND [ARGS...]\n       icppd record [options] -p PID",
	.summary = "Sample the stack pointer and program counter of COMMAND (or of\n"
		   "a running process) and store context identifiers (function,\n"
		   "stack height) in the profile database.",
	.options = record_options,
	.noptions = sizeof(record_options) / sizeof(record_options[0]),
	.epilog = "With a COMMAND, icppd exits with its exit status (128+N when it\n"
		  "was killed by signal N).  Ctrl-C stops recording and keeps what\n"
		  "was recorded.  See icppd-record(1) and icppd-schema(5).\n",
};

static const struct profile_mode record_mode = {
	.cmd = &record_command,
};

int cmd_record(int argc, char **argv)
{
	return profile__main(&record_mode, argc, argv);
}
