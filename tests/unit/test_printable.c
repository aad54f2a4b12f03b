/*
 * test_printable.c - names and paths a local user controls, written so
 * that they cannot forge a line or reach the terminal as an escape
 * sequence (printable.h), JSON that stays valid UTF-8 (json.h), and the
 * report's frames named that way whatever the symbol held (cct.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/printable.h"
#include "inference/cct.h"
#include "tests/tap.h"

static void check(const char *in, const char *want, const char *what)
{
	char *got = printable__dup(in);

	is_str(got, want, "%s", what);
	free(got);
}

/* json__string(@in) as a string (the caller frees it). */
static char *json(const char *in)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	json__string(m, in);
	fclose(m);
	return buf;
}

/* Whether @s is valid UTF-8 with no control character. */
static int clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = utf8__len(p);

		if (!n || utf8__is_control(p, n))
			return 0;
		p += n;
	}
	return 1;
}

int main(void)
{
	char *j;

	check("main", "main", "a plain name as it is");
	check("x\nFORGED;stack 999999", "x\\x0aFORGED;stack 999999",
	      "a newline cannot start a line of its own");
	check("\x1b[2J\x1b]0;pwned\x07", "\\x1b[2J\\x1b]0;pwned\\x07",
	      "terminal escapes are shown, not sent");
	check("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5", "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5",
	      "valid UTF-8 (2, 3 and 4 bytes) kept");
	check("a\xff\xfe" "b", "a\\xff\\xfeb", "bytes that are not UTF-8 shown as \\xNN");
	check("\xc0\xaf", "\\xc0\\xaf", "an overlong '/' is not UTF-8");
	check("\xed\xa0\x80", "\\xed\\xa0\\x80", "a surrogate is not UTF-8");
	check("\xe2\x86", "\\xe2\\x86", "a truncated sequence at the end");
	check("\xc2\x9b" "31m", "\\xc2\\x9b31m", "a C1 control (CSI) is shown, not sent");
	check("\x7f", "\\x7f", "DEL shown");

	j = json("a\xff" "b\"\\\n\xc2\x85\xc3\xa9");
	is_str(j, "\"a\\ufffdb\\\"\\\\\\u000a\\u0085\xc3\xa9\"",
	       "JSON: a stray byte is U+FFFD, controls (C1 too) escaped, UTF-8 kept");
	ok(clean(j), "JSON output is valid UTF-8 without control characters");
	free(j);

	{
		struct cct *t = cct__new();
		int64_t pr;

		ok(t && !cct__define(t, 1, "x\nFORGED;stack 999999", 1, 0x1000),
		   "a function named with a newline defined");
		ok(clean(cct__name(t, 1)) && !strchr(cct__name(t, 1), '\n'),
		   "its frame's name has no newline: %s", cct__name(t, 1));
		pr = cct__process(t, 42, "sh\x1b[31m");
		ok(pr < 0 && clean(cct__name(t, pr)), "a process named with an escape: %s",
		   cct__name(t, pr));
		is_int(cct__process(t, 42, "sh\x1b[31m"), pr,
		       "and the same name gives the same frame");
		ok(clean(cct__name(t, cct__pseudo(t, 1, 64))),
		   "unknown callers of it: printable too");
		cct__delete(t);
	}
	return tap_done();
}
