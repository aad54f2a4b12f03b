/*
 * cmd_list.c - "icppd list": the events this machine can sample, as
 * perf list shows perf's: every event of every PMU libpfm4 finds, each
 * test-opened (collector/event.h), so that a VM without a hardware PMU
 * says so instead of listing counters nothing can open.
 */
#define _GNU_SOURCE	/* strcasestr */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli/commands.h"
#include "collector/event.h"
#include "common/log.h"
#include "common/printable.h"

struct list_opts {
	bool all;
};

static const struct cli_option list_options[] = {
	{ "all", 'a', CLI_FLAG, offsetof(struct list_opts, all), NULL,
	  "also the events perf_event_open refuses here, with the reason", 0,
	  0 },
};

const struct cli_command list_command = {
	.name = "list",
	.synopsis = "[--all]",
	.brief = "list the events this machine can sample",
	.summary = "List the events icppd can sample here, by PMU: libpfm4's\n"
		   "tables for the PMUs it finds, each event test-opened as a\n"
		   "sampling event.  Give one to record with -e NAME.",
	.options = list_options,
	.noptions = sizeof(list_options) / sizeof(list_options[0]),
	.epilog = "Tracepoints and event lists are not sampled: icppd samples\n"
		  "the stack at one clock or counter overflow.  See icppd-list(1).\n",
};

struct listing {
	const struct list_opts *o;
	const char *pmu;		/* of the last line printed */
	size_t usable, refused;
	char refused_pmus[512];
};

static void one(void *arg, const struct event_entry *e)
{
	struct listing *l = arg;
	bool own;

	if (e->open_err) {
		l->refused++;
		if (!strstr(l->refused_pmus, e->pmu) &&
		    strlen(l->refused_pmus) + strlen(e->pmu) + 3 <
		    sizeof(l->refused_pmus))
			snprintf(l->refused_pmus + strlen(l->refused_pmus),
				 sizeof(l->refused_pmus) - strlen(l->refused_pmus),
				 "%s%s", l->refused_pmus[0] ? ", " : "", e->pmu);
		if (!l->o->all)
			return;
	} else {
		l->usable++;
	}
	if (!l->pmu || strcmp(l->pmu, e->pmu)) {
		printf("%s%s (%s):\n", l->pmu ? "\n" : "", e->pmu, e->pmu_desc);
		l->pmu = e->pmu;
	}
	printf("  %-32s ", e->name);
	if (e->open_err == -EINVAL)
		fputs("[not alone: needs a unit mask] ", stdout);
	else if (e->open_err)
		printf("[refused here: %s] ", strerror(-e->open_err));
	else if (e->precise)
		fputs("[precise] ", stdout);
	/* perf::'s generic events describe themselves by a name */
	own = e->desc && strcasecmp(e->desc, e->name) &&
	      !(e->aliases && strcasestr(e->aliases, e->desc));
	if (own)
		printable__write(stdout, e->desc);
	if (e->aliases) {
		fputs(own ? " (also " : "(also ", stdout);
		printable__write(stdout, e->aliases);
		putchar(')');
	}
	putchar('\n');
}

int cmd_list(int argc, char **argv)
{
	struct list_opts o = { 0 };
	struct listing l = { .o = &o };
	char err[256];
	int idx = cli__parse(&list_command, argc, argv, &o);

	if (idx < 0)
		return idx == -1 ? 0 : 2;
	if (idx < argc) {
		log_error("list: unexpected argument '%s' (try 'icppd list "
			  "--help')", argv[idx]);
		return 2;
	}
	if (event__list(one, &l, err, sizeof(err))) {
		log_error("list: %s", err);
		return 1;
	}
	printf("\n%zu events can be sampled here", l.usable);
	if (l.refused)
		printf("; %zu more are known to libpfm4 (%s) but refused by "
		       "perf_event_open here%s", l.refused, l.refused_pmus,
		       o.all ? "" : " ('icppd list --all' shows them)");
	printf(".\nRecord one with 'icppd record -e NAME -- CMD' (PMU::NAME "
	       "where names clash).\n");
	return 0;
}
