/*
 * main.c - icppd: subcommand dispatch.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "cli/commands.h"

static const struct {
	const struct cli_command *cmd;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ &record_command, cmd_record },
	{ &train_command, cmd_train },
	{ &validate_command, cmd_validate },
	{ &report_command, cmd_report },
	{ &compare_command, cmd_compare },
	{ &arr_command, cmd_arr },
	{ &sites_command, cmd_sites },
	{ &daemon_command, cmd_daemon },
	{ &ctl_command, cmd_ctl },
	{ &export_command, cmd_export },
};
#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fprintf(out, "Usage: icppd SUBCOMMAND [options] [-- COMMAND ARGS...]\n\n"
		"Inferred call path profiling: samples of the stack pointer and\n"
		"program counter, stored in SQLite.\n\nSubcommands:\n");
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i].cmd->name,
			commands[i].cmd->brief);
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
