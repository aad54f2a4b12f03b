/*
 * run_cli.c - parsing and checking what record, train and validate
 * share (see run_cli.h).
 */
#include "cli/run_cli.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"

static int check(const struct cli_command *cmd, const struct run_mode *mode,
		 const struct run_opts *o, bool attach, bool command)
{
	if (attach == command)
		return cli__usage(cmd, "give either -p PID or -- COMMAND");
	if (o->freq && o->period)
		return cli__usage(cmd, "-F and -c exclude each other");
	if (o->mmap_pages & (o->mmap_pages - 1))	/* 0: the mode's default */
		return cli__usage(cmd, "--mmap-pages must be a power of two");
	if ((mode->unwind || (mode->learn && !o->no_learn)) &&
	    o->stack_size &&	/* 0: not given */
	    (o->stack_size % 8 || o->stack_size < 64 ||
	     o->stack_size > RUN_MAX_STACK))
		return cli__usage(cmd, "--stack-size must be a multiple of 8 from 64 "
			     "to %u", RUN_MAX_STACK);
	if (o->leaf_stack % 8 || (o->leaf_stack && o->leaf_stack < 64))
		return cli__usage(cmd, "--leaf-stack must be 0 or a multiple of 8 "
				  "from 64");
	return 0;
}

int run_cli__main(const struct cli_command *cmd, const struct run_mode *mode,
		  int argc, char **argv)
{
	struct run_opts o = { 0 };
	char dir[4096];
	int first;

	cli__defaults(cmd, &o);
	first = cli__parse(cmd, argc, argv, &o);
	if (first < 0)
		return first == -1 ? 0 : 2;
	if (o.quiet)
		log__set_level(LOG_ERROR);
	if (check(cmd, mode, &o, o.pid != 0, first < argc))
		return 2;
	if (!o.no_cache)
		o.cache_dir = cli__cache_dir(dir, sizeof(dir));
	return run__main(mode, &o, o.pid ? NULL : argv + first);
}
