/*
 * test_render.c - the renderers behind one report view, on a profile
 * built by hand: main calls leaf through work (3 samples) and through
 * other (1).  Each format is checked for the values it must carry;
 * pprof has its own test (test_pprof.c).  Then names no format may
 * break on: a ';' (a forged frame in folded stacks), U+FFFE (not an
 * XML character), and a baseline file's escape sequences.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inference/cct.h"
#include "inference/kccf.h"
#include "report/report.h"
#include "tests/tap.h"

enum { MAIN = 1, WORK, OTHER, LEAF };

static const char *const plain_names[] = { "", "main", "work", "other",
					   "leaf" };

static void profile_named(struct run_profile *p, const char *const *names)
{
	const int64_t via_work[] = { MAIN, WORK, LEAF },
		      via_other[] = { MAIN, OTHER, LEAF };
	uint32_t n;

	memset(p, 0, sizeof(*p));
	p->run.id = 1;
	strcpy(p->run.kind, "record");
	strcpy(p->run.command, "prog");
	p->cct = cct__new();
	for (int f = MAIN; f <= LEAF; f++)
		cct__define(p->cct, f, names[f], 1, 0x100 * (unsigned)f);
	n = 0;
	for (int i = 0; i < 3; i++)
		cct__child(p->cct, n, via_work[i], &n);
	cct__add(p->cct, n, 3, CCT_PRECISE, 3);
	n = 0;
	for (int i = 0; i < 3; i++)
		cct__child(p->cct, n, via_other[i], &n);
	cct__add(p->cct, n, 3, CCT_PRECISE, 1);
	p->stats.samples = 4;
	p->stats.by_how[CCT_PRECISE] = 4;
}

static void profile(struct run_profile *p)
{
	profile_named(p, plain_names);
}

/* @v rendered into a string (freed by the next call). */
static const char *render(struct report_view v)
{
	static char *buf;
	size_t len;

	free(buf);
	buf = NULL;
	v.out = open_memstream(&buf, &len);
	if (!v.out || report__write(&v)) {
		if (v.out)
			fclose(v.out);
		return "(failed)";
	}
	fclose(v.out);
	return buf;
}

/* The number of bytes of @s below 0x20 other than newline. */
static int controls(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += (unsigned char)*s < 0x20 && *s != '\n';
	return n;
}

/* Hostile names (issue 51, items 3 to 5), each failed before its fix. */
static void hostile_names(void)
{
	static const char *const names[] = { "", "main", "ev;FORGED",
		"bad\xef\xbf\xbe\xef\xbf\xbfname", "leaf" };
	static const char base_file[] =
		"main;\x1b]0;pwned\x07\x1b[2Jwork;leaf 2\n"
		"main;FAKE\rother;leaf\xff\xfe 1\n";
	struct run_profile p;
	struct report_view v = { .p = &p, .k = KCCF_INF };
	struct profile_base *b;
	size_t bad_line;
	const char *s;
	FILE *in;
	int err;

	profile_named(&p, names);
	v.fmt = REPORT_FOLDED;
	s = render(v);
	ok(strstr(s, "main;ev\\x3bFORGED;leaf 3\n") != NULL,
	   "folded: a ';' in a name is written \\x3b, one frame");
	ok(!strstr(s, ";FORGED"), "folded: no forged frame FORGED");
	v.fmt = REPORT_TEXT;
	s = render(v);
	ok(strstr(s, "ev;FORGED") != NULL, "text: the name whole, as it is");
	v.fmt = REPORT_JSON;
	s = render(v);
	ok(strstr(s, "\"ev;FORGED\"") != NULL, "json: the name whole");

	v.fmt = REPORT_SVG;
	s = render(v);
	ok(!strstr(s, "\xef\xbf\xbe") && !strstr(s, "\xef\xbf\xbf"),
	   "svg: no U+FFFE or U+FFFF (not XML characters)");
	ok(strstr(s, "bad\xef\xbf\xbd\xef\xbf\xbdname") != NULL,
	   "svg: each written as U+FFFD");
	ok(strstr(s, "ev;FORGED") != NULL, "svg: the ';' name one frame");

	/* a baseline file's keys are printable, as the database's are */
	in = fmemopen((void *)base_file, sizeof(base_file) - 1, "r");
	b = in ? profile_base__read(in, KCCF_INF, &err, &bad_line) : NULL;
	if (in)
		fclose(in);
	ok(b != NULL, "a crafted baseline file reads");
	v.base = b;
	v.fmt = REPORT_TEXT;
	s = render(v);
	is_int(controls(s), 0, "text against it: no control byte");
	ok(strstr(s, "\\x1b]0") != NULL && strstr(s, "FAKE\\x0dother"),
	   "... ESC and CR written \\xNN");
	ok(strstr(s, "\\xff\\xfe") != NULL, "... invalid UTF-8 too");
	v.fmt = REPORT_FOLDED;
	s = render(v);
	is_int(controls(s), 0, "folded against it: no control byte");
	v.fmt = REPORT_SVG;
	s = render(v);
	is_int(controls(s), 0, "svg against it: no control byte");
	ok(strstr(s, "ev;FORGED") != NULL,
	   "svg against it: the ';' name still one frame");
	profile_base__delete(b);
	cct__delete(p.cct);
}

int main(void)
{
	struct run_profile p;
	struct report_view v = { .p = &p, .k = KCCF_INF };
	const char *s;

	profile(&p);
	is_int(cct__total(p.cct), 4, "the profile holds 4 samples");

	v.fmt = REPORT_FOLDED;
	s = render(v);
	ok(strstr(s, "main;work;leaf 3\n") != NULL,
	   "folded: the whole stack through work, weight 3");
	ok(strstr(s, "main;other;leaf 1\n") != NULL,
	   "folded: the one through other, weight 1");
	v.k = 1;
	s = render(v);
	ok(strstr(s, "work;leaf 3\n") && strstr(s, "other;leaf 1\n") &&
	   !strstr(s, "main;"), "folded --k 1: one caller per context");

	v.fmt = REPORT_TEXT;
	s = render(v);
	ok(strstr(s, "leaf") && strstr(s, "work") && strstr(s, "other"),
	   "text names leaf and both callers");
	ok(strstr(s, "75.0%") != NULL, "text: work's share of leaf is 75.0%%");
	v.min_percent = 30;
	s = render(v);
	ok(strstr(s, "work") && !strstr(s, "other"),
	   "text --min-percent 30 hides other (25%%)");
	v.min_percent = 0;

	v.fmt = REPORT_JSON;
	s = render(v);
	ok(s[0] == '{' && strstr(s, "\"leaf\"") && strstr(s, "\"work\""),
	   "json: an object naming the frames");
	ok(strstr(s, "\"samples\"") != NULL, "json carries the run's samples");

	v.fmt = REPORT_TEXT;
	v.k = KCCF_INF;
	v.phi = 0.5;
	s = render(v);
	ok(strstr(s, "work") && !strstr(s, "other"),
	   "the hot tree at phi 0.5 keeps work's path only");

	cct__delete(p.cct);
	hostile_names();
	return tap_done();
}
