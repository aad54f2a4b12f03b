/*
 * profile.h - the run loop that record, train and validate share: launch
 * COMMAND or attach to PID, sample, form CIDs (and, for train and
 * validate, unwind each sample's stack copy into a path map), flush to
 * the database, end the run.  Each subcommand is a profile_mode: its
 * options table and the hooks that make it different.
 */
#ifndef ICPPD_DAEMON_PROFILE_H
#define ICPPD_DAEMON_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "daemon/cli.h"

struct collector_stats;
struct pathmap;
struct store;

/* Bytes of user stack copied with each training sample.  perf's own
 * default is 8192; 16 KiB holds the whole stack of most programs. */
#define PROFILE_DEFAULT_STACK 16384
/* The kernel's limit: the record size is a u16. */
#define PROFILE_MAX_STACK 65528

/* Every option any of the three subcommands takes; each one's table
 * names the fields it uses. */
struct profile_opts {
	const char *db;
	const char *event;
	uint64_t freq, period, pid, mmap_pages, stack_size;
	double duration;
	bool quiet;
	const char *format;	/* validate: "text" or "json" */
	const char *output;	/* validate: -o FILE, NULL for stdout */
};

struct profile_result {
	struct store *store;
	int64_t run_id;
	const struct profile_opts *opts;
	const struct collector_stats *stats;
	struct pathmap *paths;	/* NULL for record */
	uint64_t map_full;	/* complete paths the map had no room for */
	FILE *out;		/* the report: stdout or -o FILE (the run
				 * loop opens it before the command starts,
				 * and keeps it only if finish succeeds) */
};

struct profile_mode {
	const struct cli_command *cmd;	/* its name is the run's kind */
	bool unwind;		/* sample stack copies and unwind them */
	bool truth;		/* paths are the run's own truth (validate),
				 * not training for the program's map */
	bool needs_training;	/* refuse a target without a path map */
	unsigned rate_scale;	/* default sampling rate multiplier */
	/* Extra option checks; non-zero after a usage message. */
	int (*check_opts)(const struct profile_opts *o);
	/* After the last flush: summaries, scores.  Non-zero fails the run
	 * (exit status 1 unless the command's own status is non-zero). */
	int (*finish)(const struct profile_result *res);
};

/* Appends "NAME COUNT" to a " (a 1, b 2)" list in @buf (a string of
 * @len bytes, "" to start); nothing when @count is 0. */
void profile__breakdown(char *buf, size_t len, const char *name,
			uint64_t count);

/* Runs @mode with @argv (argv[0] is the subcommand).  The exit status. */
int profile__main(const struct profile_mode *mode, int argc, char **argv);

/* Option table entries the subcommands share. */
#define PROFILE_OPT(f) offsetof(struct profile_opts, f)
#define PROFILE_OPT_DB { "database", 'd', CLI_STRING, PROFILE_OPT(db), \
	"FILE", "profile database (default icppd.db)", 0, 0 }
#define PROFILE_OPT_EVENT { "event", 'e', CLI_STRING, PROFILE_OPT(event), \
	"EVENT", "libpfm4 event to sample (default: a precise event, else " \
	"cpu-clock)", 0, 0 }
#define PROFILE_OPT_FREQ(dflt) { "freq", 'F', CLI_UINT, PROFILE_OPT(freq), \
	"HZ", "samples per second of CPU time (default " dflt \
	" for cpu-clock)", 1, 100000 }
#define PROFILE_OPT_PERIOD(dflt) { "period", 'c', CLI_UINT, \
	PROFILE_OPT(period), "N", "one sample every N events (default " \
	dflt " for precise events)", 1, UINT64_MAX }
#define PROFILE_OPT_MMAP(dflt) { "mmap-pages", 'm', CLI_UINT, \
	PROFILE_OPT(mmap_pages), "N", "ring buffer pages per CPU, a power " \
	"of two (default " dflt ")", 1, 65536 }
#define PROFILE_OPT_PID { "pid", 'p', CLI_UINT, PROFILE_OPT(pid), "PID", \
	"attach to a running process and all its threads", 1, INT32_MAX }
#define PROFILE_OPT_DURATION { "duration", 0, CLI_SECONDS, \
	PROFILE_OPT(duration), "S", "stop after S seconds", 0, 0 }
#define PROFILE_OPT_OUTPUT { "output", 'o', CLI_STRING, \
	PROFILE_OPT(output), "FILE", "write the report to FILE, not to " \
	"standard output (which the command shares)", 0, 0 }
#define PROFILE_OPT_QUIET { "quiet", 'q', CLI_FLAG, PROFILE_OPT(quiet), \
	NULL, "print errors only", 0, 0 }
#define PROFILE_OPT_STACK { "stack-size", 0, CLI_UINT, \
	PROFILE_OPT(stack_size), "BYTES", "user stack copied per sample, a " \
	"multiple of 8 (default 16384, at most 65528)", 1, UINT64_MAX }

struct store;
/* Marks the runs a killed icppd left 'running' as crashed (a warning
 * says how many). */
void profile__crash_runs(struct store *st);

#endif
