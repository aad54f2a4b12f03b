/*
 * cmd_daemon.c - "icppd daemon": its options, read from the command line
 * and the configuration file (defaults, then the file, then argv), and
 * reread on SIGHUP for the options marked CLI_RELOAD.  The service is
 * daemon/daemon.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "common/grow.h"
#include "common/log.h"
#include "daemon/conffile.h"
#include "daemon/daemon.h"

#define OPT(f) offsetof(struct daemon_opts, f)
/* --leaf-stack neither given nor configured: load() derives it */
#define LEAF_STACK_UNSET UINT64_MAX
#define LEAF_STACK_DEFAULT 16376
static const struct cli_option daemon_options[] = {
	{ "config", 'C', CLI_STRING, OPT(config), "FILE",
	  "read settings from FILE (see icppd.conf(5))", 0, 0 },
	{ "perf-c", 'c', CLI_STRING, 0, "N", "-c is the sampling period "
	  "elsewhere, as in perf; the daemon samples at -F HZ, and its "
	  "configuration file is -C FILE (--config)", 0, 0,
	  .flags = CLI_REFUSE },
	{ "foreground", 0, CLI_FLAG, OPT(foreground), NULL,
	  "stay in the foreground (systemd, tests)", 0, 0 },
	CLI_OPT_DATABASE(OPT(db)),
	{ "socket", 0, CLI_STRING, OPT(socket), "PATH",
	  "control socket (default /run/icppd/icppd.sock for root)", 0, 0 },
	{ "freq", 'F', CLI_UINT, OPT(freq), "HZ",
	  "samples per second of CPU time", 1, 100000, .dflt = "99" },
	{ "exe", 0, CLI_LIST, OPT(exe), "PATH",
	  "watch processes running this executable (repeatable)", 0, 0,
	  .flags = CLI_RELOAD },
	{ "comm", 0, CLI_LIST, OPT(comm), "NAME",
	  "watch processes with this command name (repeatable)", 0, 0,
	  .flags = CLI_RELOAD },
	{ "pid", 'p', CLI_LIST, OPT(pid), "PID",
	  "watch this process (repeatable)", 0, 0, .flags = CLI_RELOAD },
	{ "flush-interval", 0, CLI_DOUBLE, OPT(flush), "S",
	  "write to the database every S seconds", 0, 0, .dflt = "10",
	  CLI_SECONDS(CLI_RELOAD) },
	{ "segment", 0, CLI_DOUBLE, OPT(segment), "S",
	  "start a new run every S seconds: the time step of report "
	  "--since/--until", 0, 0, .dflt = "600", CLI_SECONDS(CLI_RELOAD) },
	{ "keep-days", 0, CLI_DOUBLE, OPT(keep_days), "D",
	  "delete the daemon's runs older than D days (default: keep)",
	  0, 0, CLI_SECONDS(CLI_RELOAD) },
	{ "max-size", 0, CLI_UINT, OPT(max_mb), "MB",
	  "delete the oldest daemon runs while the database uses more than "
	  "MB megabytes (default: no limit)", 1, 1u << 30,
	  .flags = CLI_RELOAD },
	{ "export", 0, CLI_STRING, OPT(export_url), "URL",
	  "ship each finished segment to the ClickHouse server at URL "
	  "(icppd-export(1))", 0, 0, .flags = CLI_RELOAD },
	{ "mmap-pages", 'm', CLI_UINT, OPT(mmap_pages), "N",
	  "ring buffer pages per CPU, a power of two (default 64, more where "
	  "the leaf copies need room for 800 ms of theirs, up to 1024)", 1,
	  65536 },
	{ "off-cpu", 0, CLI_FLAG, OPT(off_cpu), NULL,
	  "off-CPU time too: the watched threads' switches out, each at the "
	  "CID it entered the kernel from, weighed by the time until it ran "
	  "again (icppd report --off-cpu)", 0, 0 },
	{ "no-cache", 0, CLI_FLAG, OPT(no_cache), NULL,
	  "read every binary's frame section and symbol tables afresh, and "
	  "keep nothing of them (default: kept in $ICPPD_CACHE_DIR, else "
	  "systemd's $CACHE_DIRECTORY, else as icppd record keeps them)",
	  0, 0 },
	{ "no-learn", 0, CLI_FLAG, OPT(no_learn), NULL,
	  "CIDs only: learn no call paths while profiling", 0, 0 },
	{ "learn-freq", 0, CLI_UINT, OPT(learn_freq), "HZ",
	  "samples per second of the learning event while it is on", 1,
	  10000, .dflt = "25" },
	{ "stack-size", 0, CLI_UINT, OPT(stack_size), "BYTES",
	  "bytes of user stack each learning sample copies, a multiple of 8",
	  64, 65528, .dflt = "65528" },
	{ "leaf-stack", 0, CLI_UINT, OPT(leaf_stack), "BYTES",
	  "bytes of user stack every sample copies, a multiple of 8, less "
	  "than --stack-size: its innermost frames exact, the rest inferred "
	  "(0: none, the CIDs alone; default 16376, or 8 less than a "
	  "--stack-size below it)", 0, 65528 },
	{ "leaf-freq", 0, CLI_UINT, OPT(leaf_freq), "HZ",
	  "the bytes a second of HZ leaf copies: above HZ samples a second, "
	  "every sample copies less to keep them, at least 1024 bytes (0: "
	  "every sample copies --leaf-stack)", 0, 10000, .dflt = "500" },
	{ "leaf-known", 0, CLI_UINT, OPT(leaf_known), "N",
	  "a leaf copy whose context identifier the learned paths explain "
	  "is unwound one time in N, the others' paths inferred (1: every "
	  "copy unwound); up to --leaf-freq, not while one sample is all "
	  "its path has", 1, 1000000, .dflt = "8" },
};

const struct cli_command daemon_command = {
	.name = "daemon",
	.synopsis = "[-C CONFIG] [--foreground] [-d DB] [--socket PATH] [-F HZ]\n"
		    "       [--exe PATH]... [--comm NAME]... [--pid PID]...\n"
		    "       [--export URL]",
	.brief = "continuous, low-overhead call-path profiling of running processes",
	.summary = "Profile the watched processes continuously, at a low rate,\n"
		   "into the database, learning their call paths as it goes;\n"
		   "control it with icppd ctl.",
	.options = daemon_options,
	.noptions = sizeof(daemon_options) / sizeof(daemon_options[0]),
	.permute = true,
	.epilog = "Needs permission to sample every CPU (root, or CAP_PERFMON).\n"
		  "See icppd-daemon(8), icppd.conf(5) and icppd-ctl(1).\n",
};

/*
 * The strings of the configuration file, which the options point into:
 * those of the settings in force, then those of a load in progress.  A
 * reload that succeeds frees the old ones; one that fails, its own.
 */
struct settings {
	int argc;
	char **argv;
	char **lines;
	size_t n, cap;
	size_t live;			/* lines[0, live): in force */
	struct daemon_opts *pending;	/* what a file being loaded sets */
};

static int set_config(void *arg, const char *key, const char *val,
		      char *err, size_t errlen)
{
	struct settings *s = arg;
	char *copy = strdup(val);

	if (!copy || grow(&s->lines, &s->cap, s->n + 1, sizeof(*s->lines), 16)) {
		free(copy);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->lines[s->n++] = copy;
	return cli__set(&daemon_command, key, copy, s->pending, err, errlen);
}

/* Frees lines [from, to) and closes the gap. */
static void drop_lines(struct settings *s, size_t from, size_t to)
{
	if (from == to)
		return;
	for (size_t i = from; i < to; i++)
		free(s->lines[i]);
	memmove(s->lines + from, s->lines + to, (s->n - to) * sizeof(*s->lines));
	s->n -= to - from;
}

/* --leaf-stack's default: LEAF_STACK_DEFAULT, or less than a smaller
 * learner's copies, as a leaf copy is what they are not (none beside a
 * learner of 64 bytes; docs/daemon.md, "Leaf copies by the rate"). */
static uint64_t default_leaf_stack(uint64_t stack_size)
{
	if (stack_size > LEAF_STACK_DEFAULT)
		return LEAF_STACK_DEFAULT;
	return stack_size > 64 ? stack_size / 8 * 8 - 8 : 0;
}

/* Defaults, then the configuration file, then argv into @o.  0; -1
 * after --help; -2 after a usage error; -3 after a bad file. */
static int load(struct settings *s, struct daemon_opts *o)
{
	struct daemon_opts first = { 0 };
	char *text;
	int idx, ret;

	cli__defaults(&daemon_command, &first);
	idx = cli__parse(&daemon_command, s->argc, s->argv, &first);
	if (idx < 0)
		return idx;
	if (idx < s->argc) {
		fprintf(stderr, "icppd: daemon: unexpected argument '%s'\n"
			"Try 'icppd daemon --help'.\n", s->argv[idx]);
		return -2;
	}
	memset(o, 0, sizeof(*o));
	cli__defaults(&daemon_command, o);
	o->leaf_stack = LEAF_STACK_UNSET;
	if (first.config) {
		if (config__read(first.config, &text))
			return -3;
		s->pending = o;
		ret = config__parse(text, first.config, set_config, s);
		s->pending = NULL;
		free(text);
		if (ret)
			return -3;
	}
	if (cli__parse(&daemon_command, s->argc, s->argv, o) < 0)
		return -2;
	if (o->leaf_stack == LEAF_STACK_UNSET)
		o->leaf_stack = default_leaf_stack(o->stack_size);
	return 0;
}

/* SIGHUP (daemon_reload_fn). */
static int reload(void *arg, struct daemon_opts *o)
{
	struct settings *s = arg;
	struct daemon_opts next;

	if (load(s, &next) || daemon__check_rules(&next)) {
		drop_lines(s, s->live, s->n);
		return -1;
	}
	drop_lines(s, 0, s->live);
	s->live = s->n;
	cli__copy_reloadable(&daemon_command, o, &next);
	return 0;
}

/* The CFI cache's directory: record's (cli__cache_dir()), but under
 * systemd the one its CacheDirectory= made (the unit's home is read
 * only), unless ICPPD_CACHE_DIR names one.  NULL: none. */
static const char *cache_dir(char *buf, size_t len)
{
	const char *d = getenv("ICPPD_CACHE_DIR"),
		   *sd = getenv("CACHE_DIRECTORY");
	size_t n;

	if ((!d || !*d) && sd && *sd == '/') {
		n = strcspn(sd, ":");	/* several: the first */
		if (n < len) {
			memcpy(buf, sd, n);
			buf[n] = 0;
			return buf;
		}
	}
	return cli__cache_dir(buf, len);
}

int cmd_daemon(int argc, char **argv)
{
	struct settings s = { .argc = argc, .argv = argv };
	struct daemon_opts o;
	char dir[4096];
	int ret = load(&s, &o);

	s.live = s.n;
	if (ret) {
		ret = ret == -1 ? 0 : ret == -3 ? 1 : 2;	/* -1: --help */
	} else if (!o.exe.n && !o.comm.n && !o.pid.n && !o.config) {
		/* A configuration file may watch nothing yet: the
		 * installed one does, and a reload adds what to watch. */
		fprintf(stderr, "icppd: daemon: nothing to watch: give --exe, "
			"--comm or --pid (or a configuration file)\n"
			"Try 'icppd daemon --help'.\n");
		ret = 2;
	} else if (o.mmap_pages & (o.mmap_pages - 1)) {
		fprintf(stderr, "icppd: daemon: --mmap-pages must be a power of "
			"two\n");
		ret = 2;
	} else if (o.stack_size % 8) {	/* the range is the option's */
		fprintf(stderr, "icppd: daemon: --stack-size must be a multiple "
			"of 8 from 64 to 65528\n");
		ret = 2;
	} else if (o.leaf_stack % 8 || o.leaf_stack >= o.stack_size ||
		   (o.leaf_stack && o.leaf_stack < 64)) {
		fprintf(stderr, "icppd: daemon: --leaf-stack must be 0 or a "
			"multiple of 8 from 64, less than --stack-size\n");
		ret = 2;
	} else {
		if (!o.no_cache)
			o.cache_dir = cache_dir(dir, sizeof(dir));
		ret = daemon__run(&o, reload, &s);
	}
	drop_lines(&s, 0, s.n);
	free(s.lines);
	return ret;
}
