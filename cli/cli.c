/*
 * cli.c - table-driven option parsing with getopt_long, and the cache
 * directory the commands share.
 */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "binary/cfi_cache.h"
#include "common/log.h"
#include "profile/static_calls.h"
#include "schema/store.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli__usage(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "icppd: %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'icppd %s --help'.\n", cmd->name);
	return -2;
}

/* Stores @val into @o's field; -1 with the reason in @err. */
static int store_value(const struct cli_option *o, const char *val,
		       void *opts, char *err, size_t errlen)
{
	void *field = (char *)opts + o->offset;
	char *end;

	switch (o->type) {
	case CLI_FLAG:
		*(bool *)field = true;
		return 0;
	case CLI_STRING:
		*(const char **)field = val;
		return 0;
	case CLI_UINT: {
		unsigned long long v;

		errno = 0;
		v = strtoull(val, &end, 10);
		if (errno || end == val || *end || val[0] == '-' ||
		    v < o->min || v > o->max) {
			snprintf(err, errlen, "--%s wants a whole number in "
				 "%llu..%llu", o->name,
				 (unsigned long long)o->min,
				 (unsigned long long)o->max);
			return -1;
		}
		*(uint64_t *)field = v;
		return 0;
	}
	case CLI_LIST: {
		struct strlist *l = field;

		if (l->n == STRLIST_MAX) {
			snprintf(err, errlen, "--%s may be given at most %d "
				 "times", o->name, STRLIST_MAX);
			return -1;
		}
		l->v[l->n++] = val;
		return 0;
	}
	case CLI_DOUBLE: {
		double v;

		errno = 0;
		v = strtod(val, &end);
		if (errno || end == val || *end || !(v <= o->hi) ||
		    (o->flags & CLI_OPEN_LO ? !(v > o->lo) : !(v >= o->lo))) {
			if (o->flags & CLI_IN_SECONDS) {
				snprintf(err, errlen, "--%s: expected a positive "
					 "number of seconds, not '%s'", o->name,
					 val);
				return -1;
			}
			snprintf(err, errlen, "--%s: expected a number %s %g "
				 "and <= %g, not '%s'", o->name,
				 o->flags & CLI_OPEN_LO ? ">" : ">=", o->lo,
				 o->hi, val);
			return -1;
		}
		*(double *)field = v;
		return 0;
	}
	case CLI_ENUM:
		for (int i = 0; o->choices[i]; i++)
			if (!strcmp(val, o->choices[i])) {
				*(int *)field = i;
				return 0;
			}
		snprintf(err, errlen, "--%s: expected ", o->name);
		for (int i = 0; o->choices[i]; i++)
			snprintf(err + strlen(err), errlen - strlen(err), "%s%s",
				 o->choices[i], !o->choices[i + 1] ? "" :
				 !o->choices[i + 2] ? " or " : ", ");
		snprintf(err + strlen(err), errlen - strlen(err), ", not '%s'",
			 val);
		return -1;
	}
	snprintf(err, errlen, "--%s: unknown option type", o->name);
	return -1;
}

void cli__defaults(const struct cli_command *cmd, void *opts)
{
	char err[256];

	for (size_t i = 0; i < cmd->noptions; i++)
		if (cmd->options[i].dflt &&
		    store_value(&cmd->options[i], cmd->options[i].dflt, opts, err,
				sizeof(err)))
			abort();	/* a table's own default: a bug */
}

static size_t field_size(enum cli_type t)
{
	switch (t) {
	case CLI_FLAG:
		return sizeof(bool);
	case CLI_STRING:
		return sizeof(const char *);
	case CLI_UINT:
		return sizeof(uint64_t);
	case CLI_DOUBLE:
		return sizeof(double);
	case CLI_LIST:
		return sizeof(struct strlist);
	case CLI_ENUM:
		return sizeof(int);
	}
	return 0;
}

void cli__copy_reloadable(const struct cli_command *cmd, void *to,
			  const void *from)
{
	for (size_t i = 0; i < cmd->noptions; i++) {
		const struct cli_option *o = &cmd->options[i];

		if (o->flags & CLI_RELOAD)
			memcpy((char *)to + o->offset,
			       (const char *)from + o->offset,
			       field_size(o->type));
	}
}

int cli__parse_count(const char *cmd, const char *opt, const char *arg,
		     uint32_t inf, uint32_t *v)
{
	char *end;
	long long n;

	if (!strcmp(arg, "inf") || !strcmp(arg, "infinity")) {
		*v = inf;
		return 0;
	}
	errno = 0;
	n = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || n < 0 || n >= inf) {
		fprintf(stderr, "icppd: %s: --%s: expected a whole number >= 0 "
			"or inf, not '%s'\nTry 'icppd %s --help'.\n", cmd, opt,
			arg, cmd);
		return -1;
	}
	*v = (uint32_t)n;
	return 0;
}

int cli__set(const struct cli_command *cmd, const char *name,
	     const char *val, void *opts, char *err, size_t errlen)
{
	for (size_t i = 0; i < cmd->noptions; i++) {
		const struct cli_option *o = &cmd->options[i];

		if (strcmp(o->name, name))
			continue;
		if (o->flags & (CLI_NOTE | CLI_REFUSE))	/* perf's, not ours */
			break;
		if (o->type == CLI_FLAG && val && *val && strcmp(val, "yes") &&
		    strcmp(val, "true") && strcmp(val, "1")) {
			snprintf(err, errlen, "%s is a switch: no value, or "
				 "yes", name);
			return -1;
		}
		if (o->type != CLI_FLAG && (!val || !*val)) {
			snprintf(err, errlen, "%s needs a value", name);
			return -1;
		}
		return store_value(o, val, opts, err, errlen);
	}
	snprintf(err, errlen, "unknown setting '%s'", name);
	return -1;
}

int cli__parse(const struct cli_command *cmd, int argc, char **argv,
	       void *opts)
{
	struct option lopts[cmd->noptions + 2];
	char sopts[3 * cmd->noptions + 4];
	char err[256];
	size_t ns = 0;
	int c, idx;

	/* '+': stop at the first operand (the command to profile). */
	if (!cmd->permute)
		sopts[ns++] = '+';
	sopts[ns++] = ':';
	for (size_t i = 0; i < cmd->noptions; i++) {
		const struct cli_option *o = &cmd->options[i];

		lopts[i] = (struct option){ o->name,
			o->type == CLI_FLAG ? no_argument : required_argument,
			NULL, 256 + (int)i };
		if (o->short_name) {
			sopts[ns++] = o->short_name;
			if (o->type != CLI_FLAG)
				sopts[ns++] = ':';
		}
	}
	lopts[cmd->noptions] = (struct option){ "help", no_argument, NULL, 'h' };
	lopts[cmd->noptions + 1] = (struct option){ 0 };
	sopts[ns++] = 'h';
	sopts[ns] = '\0';
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, sopts, lopts, &idx)) != -1) {
		const struct cli_option *o = NULL;

		if (c == 'h') {
			cli__help(cmd, stdout);
			return -1;
		}
		if (c == '?')
			return cli__usage(cmd, "unknown option '%s'",
					   argv[optind - 1]);
		if (c == ':')
			return cli__usage(cmd, "option '%s' needs a value",
					   argv[optind - 1]);
		if (c >= 256) {
			o = &cmd->options[c - 256];
		} else {
			for (size_t i = 0; i < cmd->noptions && !o; i++)
				if (cmd->options[i].short_name == c)
					o = &cmd->options[i];
		}
		if (!o)
			return -2;
		if (o->flags & CLI_REFUSE)
			return c < 256 ?
			       cli__usage(cmd, "-%c: %s", c, o->help) :
			       cli__usage(cmd, "--%s: %s", o->name, o->help);
		if (o->flags & CLI_NOTE) {
			log_info("%s: %s", cmd->name, o->help);
			continue;
		}
		if (store_value(o, optarg, opts, err, sizeof(err)))
			return cli__usage(cmd, "%s", err);
	}
	return optind;
}

void cli__help(const struct cli_command *cmd, FILE *out)
{
	fprintf(out, "Usage: icppd %s %s\n\n%s\n\nOptions:\n", cmd->name,
		cmd->synopsis, cmd->summary);
	for (size_t i = 0; i < cmd->noptions; i++) {
		const struct cli_option *o = &cmd->options[i];
		char left[64];

		if (o->flags & (CLI_NOTE | CLI_REFUSE))
			continue;
		snprintf(left, sizeof(left), "%c%c%s--%s%s%s",
			 o->short_name ? '-' : ' ',
			 o->short_name ? o->short_name : ' ',
			 o->short_name ? ", " : "  ", o->name,
			 o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(out, "  %-26s %s", left, o->help);
		if (o->dflt)
			fprintf(out, " (default %s)", o->dflt);
		fputc('\n', out);
	}
	fprintf(out, "  %-26s %s\n", "-h, --help", "show this help and exit");
	if (cmd->epilog)
		fprintf(out, "\n%s", cmd->epilog);
}

const char *cli__cache_dir(char *buf, size_t len)
{
	const char *d = getenv("ICPPD_CACHE_DIR"), *home;

	if (d && *d)
		return d;
	if ((d = getenv("XDG_CACHE_HOME")) && *d == '/')
		return snprintf(buf, len, "%s/icppd", d) < (int)len ? buf :
		       NULL;
	if ((home = getenv("HOME")) && *home == '/')
		return snprintf(buf, len, "%s/.cache/icppd", home) < (int)len ?
		       buf : NULL;
	return NULL;
}

void cli__use_calls_cache(void)
{
	static struct cfi_cache *c;
	char buf[4096];
	const char *dir = cli__cache_dir(buf, sizeof(buf));

	if (!c && dir && !cfi_cache__open(dir, &c)) {
		static_calls__use_cache(c);
		store__use_check_cache(c);
	}
}
