/*
 * cli.h - a declarative table of options drives parsing, validation and
 * --help for every subcommand (after Redis config.c standardConfig).
 *
 * Each option writes into a field of the subcommand's options struct at
 * @offset.  Parsing stops at the first non-option argument or at "--";
 * what follows is the subcommand's operands (the command to run).  A
 * command with @permute set takes options anywhere among its operands.
 */
#ifndef ICPPD_CLI_CLI_H
#define ICPPD_CLI_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/strlist.h"

enum cli_type {
	CLI_FLAG,	/* bool */
	CLI_STRING,	/* const char * (points into argv) */
	CLI_UINT,	/* uint64_t, >= min, <= max */
	CLI_LIST,	/* struct strlist: the option may repeat */
	CLI_DOUBLE,	/* double, in [lo, hi] (lo excluded: CLI_OPEN_LO) */
	CLI_ENUM,	/* int: the index of the value in @choices */
};

/* A duration in seconds is a CLI_DOUBLE above 0 (and below ~31 years):
 * end its option with CLI_SECONDS(flags); its errors say "seconds". */
#define CLI_SECONDS_MAX 1e9
#define CLI_SECONDS(more_flags) \
	.flags = CLI_OPEN_LO | CLI_IN_SECONDS | (more_flags), \
	.lo = 0, .hi = CLI_SECONDS_MAX

/* Options several commands take, spelled once: the database every
 * command but ctl reads or writes, and a report written to a file. */
#define CLI_OPT_DATABASE(off) { "database", 'd', CLI_STRING, (off), "FILE", \
	"profile database", 0, 0, .dflt = "icppd.db" }
#define CLI_OPT_OUTPUT(off) { "output", 'o', CLI_STRING, (off), "FILE", \
	"write to FILE instead of standard output", 0, 0 }

/* cli_option.flags */
enum {
	CLI_RELOAD = 1,		/* a daemon's SIGHUP reload applies it */
	CLI_OPEN_LO = 2,	/* CLI_DOUBLE: lo itself is refused */
	CLI_IN_SECONDS = 4,	/* CLI_DOUBLE: a duration (CLI_SECONDS) */
	/* perf's options, where icppd's differ (icppd(1), PERF HABITS): not in
	 * --help, nothing stored (@offset unused); given, @help is printed
	 * as a one-line note and the command goes on (CLI_NOTE), or as a
	 * usage error (CLI_REFUSE) */
	CLI_NOTE = 8,
	CLI_REFUSE = 16,
};


struct cli_option {
	const char *name;	/* long name, without "--" */
	char short_name;	/* 0: none */
	enum cli_type type;
	size_t offset;
	const char *arg;	/* placeholder in help: "FILE" */
	const char *help;
	uint64_t min, max;	/* CLI_UINT */
	const char *dflt;	/* the default as the command line would give
				 * it (cli__defaults; --help shows it), or
				 * NULL: zero, or a default the help explains */
	unsigned flags;		/* CLI_RELOAD, CLI_OPEN_LO, CLI_IN_SECONDS */
	const char *const *choices;	/* CLI_ENUM: NULL-terminated */
	double lo, hi;		/* CLI_DOUBLE */
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

/* Sets every option with a default to it (before a configuration file
 * and cli__parse). */
void cli__defaults(const struct cli_command *cmd, void *opts);

/* Copies the CLI_RELOAD options' fields from @from into @to. */
void cli__copy_reloadable(const struct cli_command *cmd, void *to,
			  const void *from);

/* "inf" or a whole number below @inf into *@v (@inf for "inf").  0, or
 * -1 after a usage message for option --@opt of subcommand @cmd. */
int cli__parse_count(const char *cmd, const char *opt, const char *arg,
		     uint32_t inf, uint32_t *v);

/*
 * Parses @argv (argv[0] is the subcommand name) into @opts.  Returns the
 * index of the first operand, or -1 after printing help (--help), or -2
 * after printing a usage error.
 */
int cli__parse(const struct cli_command *cmd, int argc, char **argv,
	       void *opts);
void cli__help(const struct cli_command *cmd, FILE *out);

/* Prints "icppd NAME: what is wrong" and the --help hint.  -2. */
int cli__usage(const struct cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Sets option @name (long name, no dashes) to @val as the command line
 * would (configuration files); @val must outlive @opts.  0, or -1 with
 * "unknown setting 'x'" or what is wrong with the value in @err. */
int cli__set(const struct cli_command *cmd, const char *name,
	     const char *val, void *opts, char *err, size_t errlen);

/* Where CFI tables, symbols and builds' calls are cached:
 * $ICPPD_CACHE_DIR, else $XDG_CACHE_HOME/icppd, else ~/.cache/icppd
 * (perf keeps its build-id cache in ~/.debug alike), in @buf or the
 * environment's; NULL with none of them set. */
const char *cli__cache_dir(char *buf, size_t len);
/* Opens that cache, once, for the builds' calls every inference of this
 * process reads and writes (static_calls__use_cache()) and the states
 * its databases are left whole in (store__use_check_cache()); none
 * when it cannot be opened (not the user's own: a report goes on
 * without). */
void cli__use_calls_cache(void);

#endif
