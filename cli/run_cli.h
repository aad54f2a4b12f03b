/*
 * run_cli.h - the options record, train and validate share, and their
 * checks, in front of record/run.h.
 */
#ifndef ICPPD_CLI_RUN_CLI_H
#define ICPPD_CLI_RUN_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "cli/cli.h"
#include "record/run.h"

/* Parses @argv for @cmd (its options write a struct run_opts), checks
 * them, and runs @mode.  The exit status. */
int run_cli__main(const struct cli_command *cmd, const struct run_mode *mode,
		  int argc, char **argv);

/* Option table entries the subcommands share. */
#define RUN_OPT(f) offsetof(struct run_opts, f)
#define RUN_OPT_DB CLI_OPT_DATABASE(RUN_OPT(db))
#define RUN_OPT_EVENT { "event", 'e', CLI_STRING, RUN_OPT(event), \
	"EVENT", "libpfm4 event to sample (default: a precise event, else " \
	"cpu-clock)", 0, 0 }
#define RUN_OPT_FREQ(d) { "freq", 'F', CLI_UINT, RUN_OPT(freq), \
	"HZ", "samples per second of CPU time (default " d \
	" for cpu-clock)", 1, 100000 }
#define RUN_OPT_PERIOD(d) { "period", 'c', CLI_UINT, RUN_OPT(period), \
	"N", "one sample every N events (default " d " for precise " \
	"events)", 1, UINT64_MAX }
#define RUN_OPT_MMAP(d) { "mmap-pages", 'm', CLI_UINT, \
	RUN_OPT(mmap_pages), "N", "ring buffer pages per CPU, a power of " \
	"two", 1, 65536, .dflt = d }
#define RUN_OPT_PID { "pid", 'p', CLI_UINT, RUN_OPT(pid), "PID", \
	"attach to a running process and all its threads", 1, INT32_MAX }
#define RUN_OPT_DURATION { "duration", 0, CLI_DOUBLE, RUN_OPT(duration), \
	"S", "stop after S seconds", 0, 0, CLI_SECONDS(0) }
#define RUN_OPT_OUTPUT { "output", 'o', CLI_STRING, RUN_OPT(output), \
	"FILE", "write the report to FILE, not to standard output (which " \
	"the command shares)", 0, 0 }
#define RUN_OPT_QUIET { "quiet", 'q', CLI_FLAG, RUN_OPT(quiet), NULL, \
	"print errors only", 0, 0 }
/* What perf record takes that icppd does not (cli.h's CLI_NOTE). */
#define RUN_OPT_PERF_HABITS \
	{ "perf-g", 'g', CLI_FLAG, 0, NULL, "call paths are always " \
	  "recorded: perf's -g is not needed", 0, 0, .flags = CLI_NOTE }, \
	{ "call-graph", 0, CLI_STRING, 0, "MODE", "call paths are always " \
	  "recorded, frame pointers or not: perf's --call-graph is not " \
	  "needed", 0, 0, .flags = CLI_NOTE }, \
	{ "all-cpus", 'a', CLI_FLAG, 0, NULL, "icppd follows a command " \
	  "(or -p PID) and its children; to profile every process, run " \
	  "'icppd daemon' as root (icppd-daemon(8))", 0, 0, \
	  .flags = CLI_REFUSE }, \
	{ "per-thread", 0, CLI_FLAG, 0, NULL, "each thread's samples are " \
	  "kept apart already: report --tid TID shows one thread, --sort " \
	  "comm,pid the threads side by side", 0, 0, .flags = CLI_NOTE }
#define RUN_OPT_NO_CACHE { "no-cache", 0, CLI_FLAG, RUN_OPT(no_cache), \
	NULL, "read every binary's frame section (.eh_frame) afresh, and " \
	"keep nothing of it in the cache directory ($ICPPD_CACHE_DIR, else " \
	"$XDG_CACHE_HOME/icppd, else ~/.cache/icppd)", 0, 0 }
#define RUN_OPT_STACK { "stack-size", 0, CLI_UINT, RUN_OPT(stack_size), \
	"BYTES", "user stack copied per sample, a multiple of 8, at most " \
	"65528 (default 16384, more when earlier runs of the build " \
	"sampled deeper stacks, and 65528 for the rest of a run once its " \
	"copies are cut short)", 1, UINT64_MAX }

#endif
