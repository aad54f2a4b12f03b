/*
 * test_render.c - the renderers behind one report view, on a profile
 * built by hand: main calls leaf through work (3 samples) and through
 * other (1).  Each format is checked for the values it must carry;
 * pprof has its own test (test_pprof.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inference/cct.h"
#include "inference/kccf.h"
#include "report/report.h"
#include "tests/tap.h"

enum { MAIN = 1, WORK, OTHER, LEAF };

static void profile(struct run_profile *p)
{
	static const char *const names[] = { "", "main", "work", "other",
					     "leaf" };
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

	cct__free(p.cct);
	return tap_done();
}
