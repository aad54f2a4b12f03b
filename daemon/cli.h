/*
 * cli.h - a declarative table of options drives parsing, validation and
 * --help for every subcommand (after Redis config.c standardConfig).
 *
 * Each option writes into a field of the subcommand's options struct at
 * @offset.  Parsing stops at the first non-option argument or at "--";
 * what follows is the subcommand's operands (the command to run).  A
 * command with @permute set takes options anywhere among its operands.
 */
#ifndef ICPPD_DAEMON_CLI_H
#define ICPPD_DAEMON_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cli_type {
	CLI_FLAG,	/* bool */
	CLI_STRING,	/* const char * (points into argv) */
	CLI_UINT,	/* uint64_t, >= min, <= max */
	CLI_SECONDS,	/* double, > 0 */
	CLI_LIST,	/* struct cli_list: the option may repeat */
};

#define CLI_LIST_MAX 64
struct cli_list {
	const char *v[CLI_LIST_MAX];	/* point into argv */
	size_t n;
};

struct cli_option {
	const char *name;	/* long name, without "--" */
	char short_name;	/* 0: none */
	enum cli_type type;
	size_t offset;
	const char *arg;	/* placeholder in help: "FILE" */
	const char *help;
	uint64_t min, max;	/* CLI_UINT */
};

struct cli_command {
	const char *name;
	const char *synopsis;	/* after "icppd NAME " */
	const char *brief;	/* one line for 'icppd --help': the man
				 * page's NAME line (tests/e2e/cli.sh) */
	const char *summary;	/* a paragraph, for 'icppd NAME --help' */
	const struct cli_option *options;
	size_t noptions;
	const char *epilog;	/* extra help text, or NULL */
	/* Options may follow operands (no command to run after them). */
	bool permute;
};

/*
 * Parses @argv (argv[0] is the subcommand name) into @opts.  Returns the
 * index of the first operand, or -1 after printing help (--help), or -2
 * after printing a usage error.
 */
int cli__parse(const struct cli_command *cmd, int argc, char **argv,
	       void *opts);
void cli__help(const struct cli_command *cmd, FILE *out);

/* Sets option @name (long name, no dashes) to @val as the command line
 * would (configuration files); @val must outlive @opts.  0, or -1 with
 * "unknown setting 'x'" or what is wrong with the value in @err. */
int cli__set(const struct cli_command *cmd, const char *name,
	     const char *val, void *opts, char *err, size_t errlen);

#endif
