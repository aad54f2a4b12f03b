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
	fprintf(stderr, "icppd: unknown subcommand '%s'\nTry 'icppd --help'.\n",
		argv[1]);
	return 2;
}
