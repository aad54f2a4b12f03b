/*
 * main.c - icppd: subcommand dispatch.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "cli/commands.h"

/* In the order 'icppd --help' lists them, each under its heading. */
static const struct {
	const struct cli_command *cmd;
	int (*run)(int argc, char **argv);
	const char *heading;	/* starts a group */
} commands[] = {
	{ &record_command, cmd_record, "Profiling" },
	{ &report_command, cmd_report, NULL },
	{ &annotate_command, cmd_annotate, NULL },
	{ &compare_command, cmd_compare, NULL },
	{ &list_command, cmd_list, NULL },
	{ &train_command, cmd_train, NULL },
	{ &validate_command, cmd_validate, NULL },
	{ &daemon_command, cmd_daemon, "Continuous profiling" },
	{ &ctl_command, cmd_ctl, NULL },
	{ &export_command, cmd_export, NULL },
	{ &arr_command, cmd_arr, "Advanced: the binaries themselves" },
	{ &sites_command, cmd_sites, NULL },
};
#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* perf's subcommands icppd has no twin of, answered with the nearest
 * icppd command (icppd(1), PERF HABITS). */
static const struct {
	const char *perf, *answer;
} perf_habits[] = {
	{ "script", "icppd has no per-sample dump: its samples are counted "
		    "per context identifier. 'icppd report -f folded --k inf' "
		    "prints every call path with its samples, and SQL on the "
		    "database (v_cids, v_inferred) reads them row by row" },
	{ "top", "icppd has no live view: 'icppd daemon' profiles running "
		 "processes continuously and 'icppd report --since -1m' shows "
		 "the last minute" },
	{ "stat", "icppd does not count events: it samples them. 'icppd "
		  "record -- COMMAND' then 'icppd report --k 0' gives the flat "
		  "profile, and the run's CPU time is in its header" },
	{ "diff", "'icppd report --base RUN' shows what changed since run "
		  "RUN (text, folded or a red/blue flame graph with -f svg)" },
	{ "trace", "icppd does not trace system calls: try strace, or 'perf "
		   "trace'" },
	{ "sched", "icppd samples CPU time; waiting threads are not in its "
		   "profile" },
	{ "mem", "icppd samples CPU time, not memory accesses" },
	{ "c2c", "icppd samples CPU time, not cache-line sharing" },
	{ "kvm", "icppd profiles user programs, not guests" },
	{ "probe", "icppd needs no probes: 'icppd record -- COMMAND' samples "
		   "an unmodified binary" },
	{ "inject", "icppd's database needs no injected build-ids: the "
		    "modules table keeps each binary's" },
	{ "archive", "an icppd database keeps what its reports need (each "
		     "build's calls and names); copy the .db file" },
	{ "buildid-list", "SELECT path, build_id FROM modules in the database "
			  "('sqlite3 icppd.db') lists them" },
};
#define NR_PERF_HABITS (sizeof(perf_habits) / sizeof(perf_habits[0]))

static void usage(FILE *out)
{
	fprintf(out, "Usage: icppd SUBCOMMAND [options] [-- COMMAND ARGS...]\n\n"
		"Call paths at the cost of a flat profile: samples of the stack\n"
		"pointer and program counter, call paths inferred, all in SQLite.\n\n"
		"Examples:\n"
		"  icppd record -- make -j4          profile a command (into icppd.db)\n"
		"  icppd report                      its call paths, 3 callers deep\n"
		"  icppd report -f svg -o flame.svg  a flame graph to open in a browser\n"
		"  icppd report --base 1 -f svg -o diff.svg   what changed since run 1\n");
	for (size_t i = 0; i < NR_COMMANDS; i++) {
		if (commands[i].heading)
			fprintf(out, "\n%s:\n", commands[i].heading);
		fprintf(out, "  %-10s %s\n", commands[i].cmd->name,
			commands[i].cmd->brief);
	}
	fprintf(out, "\n'icppd SUBCOMMAND --help' describes each; see icppd(1).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		if (argc > 2)
			for (size_t i = 0; i < NR_COMMANDS; i++)
				if (!strcmp(argv[2], commands[i].cmd->name)) {
					cli__help(commands[i].cmd, stdout);
					return 0;
				}
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("icppd %s\n", PACKAGE_VERSION);
		return 0;
	}
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i].cmd->name))
			return commands[i].run(argc - 1, argv + 1);
	for (size_t i = 0; i < NR_PERF_HABITS; i++)
		if (!strcmp(argv[1], perf_habits[i].perf)) {
			fprintf(stderr, "icppd: %s: not an icppd subcommand "
				"(perf %s): %s.\n", argv[1], argv[1],
				perf_habits[i].answer);
			return 2;
		}
	fprintf(stderr, "icppd: unknown subcommand '%s'\nTry 'icppd --help'.\n",
		argv[1]);
	return 2;
}
