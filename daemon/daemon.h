/*
 * daemon.h - the long-running service: continuous profiling of the
 * processes it is told to watch (by PID, executable or command name)
 * through one system-wide recorder (record/recorder.h), a /proc scan
 * for the processes that were there first, segments, retention, and a
 * control socket (daemon/ctl.h).  The command line and the
 * configuration file are the caller's (cli/cmd_daemon.c).
 */
#ifndef ICPPD_DAEMON_DAEMON_H
#define ICPPD_DAEMON_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strlist.h"

/* The daemon's settings (the daemon subcommand's options table writes
 * them). */
struct daemon_opts {
	const char *config, *db, *socket;
	const char *export_url;		/* ClickHouse, or NULL */
	/* what was read of binaries' frame sections and symbol tables
	 * (binary/cfi_cache.h): the caller's choice of directory, NULL
	 * with --no-cache */
	const char *cache_dir;
	bool foreground, no_learn, off_cpu, no_cache;
	uint64_t freq, mmap_pages, learn_freq, stack_size, leaf_stack;
	uint64_t leaf_freq, leaf_known;
	double flush, segment, keep_days;
	uint64_t max_mb;
	struct strlist exe, comm, pid;
};

/*
 * SIGHUP: rereads the settings into @o (only those a reload may change;
 * the caller owns the strings, and keeps those of the last successful
 * reload).  0, or -1 after logging why: the old settings stay.
 */
typedef int (*daemon_reload_fn)(void *arg, struct daemon_opts *o);

/* Whether @o's watch rules and export URL are well formed: -1 after
 * logging what is wrong (an empty --exe or --comm, a --pid that is no
 * pid, an --export URL that is not http). */
int daemon__check_rules(const struct daemon_opts *o);

/* Runs the daemon until SIGTERM, SIGINT or 'icppd ctl stop'.  The exit
 * status: 0, or 1 after logging why it could not start or flush. */
int daemon__run(const struct daemon_opts *o, daemon_reload_fn reload,
		void *arg);

/* The control socket's default path for this user. */
void daemon__default_socket(char *buf, size_t len);

#endif
