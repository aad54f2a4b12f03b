/*
 * test_cli.c - the options table (every option type, defaults, ranges,
 * enums, repeats, "--", permuted operands, settings from a file) and
 * the configuration file reader (syntax, bounds, refusals).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "daemon/conffile.h"
#include "tests/tap.h"
#include "tests/unit/tmpdir.h"

struct opts {
	bool flag;
	const char *name;
	uint64_t count;
	double secs, share;
	struct strlist list;
	int fmt;
};

static const char *const fmts[] = { "text", "json", NULL };

static const struct cli_option options[] = {
	{ "flag", 'f', CLI_FLAG, offsetof(struct opts, flag), NULL, "a flag" },
	{ "name", 'n', CLI_STRING, offsetof(struct opts, name), "NAME",
	  "a string", .dflt = "dflt" },
	{ "count", 'c', CLI_UINT, offsetof(struct opts, count), "N", "a count",
	  2, 100, .dflt = "10", .flags = CLI_RELOAD },
	{ "secs", 0, CLI_DOUBLE, offsetof(struct opts, secs), "S", "seconds",
	  CLI_SECONDS(0) },
	{ "share", 0, CLI_DOUBLE, offsetof(struct opts, share), "X", "a share",
	  .dflt = "0.5", .flags = CLI_OPEN_LO, .lo = 0, .hi = 1 },
	{ "list", 'l', CLI_LIST, offsetof(struct opts, list), "V", "repeats" },
	{ "format", 0, CLI_ENUM, offsetof(struct opts, fmt), "FMT", "a choice",
	  .dflt = "text", .choices = fmts },
};

static const struct cli_command cmd = {
	.name = "testcmd", .synopsis = "[options] -- CMD", .brief = "test",
	.summary = "A test command.", .options = options,
	.noptions = sizeof(options) / sizeof(options[0]),
};

/* cli__parse on a NULL-terminated argument list. */
static int parse(struct opts *o, ...)
{
	static char *argv[32];
	va_list ap;
	int argc = 0;

	argv[argc++] = "testcmd";
	va_start(ap, o);
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	memset(o, 0, sizeof(*o));
	cli__defaults(&cmd, o);
	return cli__parse(&cmd, argc, argv, o);
}

static void test_options(void)
{
	struct opts o, r;
	char err[256];
	uint32_t v;
	int i;

	i = parse(&o, NULL);
	is_int(i, 1, "no arguments: operands start at 1");
	is_str(o.name, "dflt", "a string default from the table");
	is_int(o.count, 10, "a number default from the table");
	ok(o.share == 0.5 && o.fmt == 0, "double and enum defaults");

	i = parse(&o, "-f", "--name=x", "-c", "42", "--secs", "1.5",
		  "--share", "1", "-l", "a", "--list", "b", "--format", "json",
		  "--", "prog", "arg", NULL);
	is_int(i, 16, "operands after --");
	ok(o.flag, "short flag");
	is_str(o.name, "x", "--name=VALUE");
	is_int(o.count, 42, "-c N");
	ok(o.secs == 1.5, "seconds");
	ok(o.share == 1.0, "the top of a closed range is taken");
	is_int(o.list.n, 2, "a repeated option keeps every value");
	ok(o.list.n == 2 && !strcmp(o.list.v[0], "a") && !strcmp(o.list.v[1], "b"),
	   "in order");
	is_int(o.fmt, 1, "an enum stores the index of its choice");

	is_int(parse(&o, "prog", "-f", NULL), 1,
	       "without permute, options stop at the first operand");
	ok(!o.flag, "so -f after it belongs to the command");

	fprintf(stderr, "# usage errors expected below\n");
	is_int(parse(&o, "-c", "1", NULL), -2, "below the minimum: usage error");
	is_int(parse(&o, "-c", "101", NULL), -2, "above the maximum");
	is_int(parse(&o, "-c", "12abc", NULL), -2, "trailing junk");
	is_int(parse(&o, "-c", "-5", NULL), -2, "a negative count");
	is_int(parse(&o, "--share", "0", NULL), -2, "an open low end refuses lo");
	is_int(parse(&o, "--share", "1.01", NULL), -2, "above hi");
	is_int(parse(&o, "--share", "nan", NULL), -2, "nan");
	is_int(parse(&o, "--secs", "0", NULL), -2, "seconds must be > 0");
	is_int(parse(&o, "--format", "xml", NULL), -2, "an unknown choice");
	is_int(parse(&o, "--nope", NULL), -2, "an unknown option");
	is_int(parse(&o, "-c", NULL), -2, "a missing value");
	is_int(parse(&o, "--flag=1", NULL), -2, "a value given to a flag");

	memset(&o, 0, sizeof(o));
	is_int(cli__set(&cmd, "count", "7", &o, err, sizeof(err)), 0,
	       "a setting from a file");
	is_int(o.count, 7, "sets the field");
	is_int(cli__set(&cmd, "bogus", "1", &o, err, sizeof(err)), -1,
	       "an unknown setting");
	ok(strstr(err, "bogus") != NULL, "names it: %s", err);
	is_int(cli__set(&cmd, "count", "1000", &o, err, sizeof(err)), -1,
	       "an out-of-range setting");
	ok(strstr(err, "100") != NULL, "says the range: %s", err);

	memset(&r, 0, sizeof(r));
	o.count = 55;
	o.name = "changed";
	cli__copy_reloadable(&cmd, &r, &o);
	ok(r.count == 55 && r.name == NULL,
	   "a reload copies only the options marked reloadable");

	is_int(cli__parse_count("testcmd", "k", "inf", 99, &v), 0, "inf");
	is_int(v, 99, "inf is the given infinity");
	is_int(cli__parse_count("testcmd", "k", "3", 99, &v), 0, "a count");
	is_int(v, 3, "3");
	is_int(cli__parse_count("testcmd", "k", "99", 99, &v), -1,
	       "the infinity itself is not a count");
}

static char dir[] = "/tmp/icppd-cli-XXXXXX";

static int collect(void *arg, const char *key, const char *val, char *err,
		   size_t errlen)
{
	char *out = arg;
	size_t used = strlen(out);

	if (!strcmp(key, "bad")) {
		snprintf(err, errlen, "bad is refused");
		return -1;
	}
	snprintf(out + used, 256 - used, "[%s=%s]", key, val);
	return 0;
}

static const char *write_file(const char *name, const char *text, mode_t mode)
{
	return tmpdir_file(dir, name, text, mode);
}

static void test_config(void)
{
	char text[] = "# a comment\n\nalpha value one\nbeta = v2  \n"
		      "  gamma=v3 # a comment after a value\n";
	char bad[] = "ok 1\nbad 2\n", digits[] = "key1 v\n",
	     self[] = "config /etc/x\n", *longline;
	char out[256] = "", *t;
	const char *path;
	char *big;

	is_int(config__parse(text, "test.conf", collect, out), 0,
	       "a configuration parses");
	is_str(out, "[alpha=value one][beta=v2][gamma=v3]",
	       "both forms, blanks and comments skipped, values trimmed");
	out[0] = '\0';
	fprintf(stderr, "# configuration errors expected below\n");
	is_int(config__parse(bad, "test.conf", collect, out), -1,
	       "a refused setting fails the file");
	is_int(config__parse(digits, "test.conf", collect, out), -1,
	       "a name that is no option name");
	is_int(config__parse(self, "test.conf", collect, out), -1,
	       "'config' inside the configuration");
	longline = malloc(CONFIG_MAX_LINE + 8);
	memset(longline, 'a', CONFIG_MAX_LINE + 4);
	longline[CONFIG_MAX_LINE + 4] = '\0';
	is_int(config__parse(longline, "test.conf", collect, out), -1,
	       "a line over the bound");
	free(longline);

	path = write_file("good.conf", "count 3\n", 0600);
	is_int(config__read(path, &t), 0, "a private file reads");
	ok(t && !strcmp(t, "count 3\n"), "whole");
	free(t);
	path = write_file("open.conf", "count 3\n", 0666);
	is_int(config__read(path, &t), -1, "a world-writable file is refused");
	big = malloc(CONFIG_MAX_BYTES + 2);
	memset(big, 'x', CONFIG_MAX_BYTES + 1);
	big[CONFIG_MAX_BYTES + 1] = '\0';
	path = write_file("big.conf", big, 0600);
	free(big);
	is_int(config__read(path, &t), -1, "a file over the bound is refused");
	{
		char fifo[128], link[128];

		snprintf(fifo, sizeof(fifo), "%s/fifo.conf", dir);
		mkfifo(fifo, 0600);
		is_int(config__read(fifo, &t), -1,
		       "a FIFO is refused (and does not block)");
		snprintf(link, sizeof(link), "%s/link.conf", dir);
		if (symlink("good.conf", link))
			link[0] = '\0';
		t = NULL;
		ok(link[0] && config__read(link, &t) == 0,
		   "a symlink to a private file reads (the target is checked)");
		free(t);
	}
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_options();
	test_config();
	if (tmpdir_remove(dir))
		return 1;
	return tap_done();
}
