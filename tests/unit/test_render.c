/*
 * test_render.c - the renderers behind one report view, on a profile
 * built by hand: main calls leaf through work (3 samples) and through
 * other (1).  Each format is checked for the values it must carry;
 * pprof has its own test (test_pprof.c).  Then names no format may
 * break on: a ';' (a forged frame in folded stacks), U+FFFE (not an
 * XML character), and a baseline file's escape sequences.  Last,
 * render__round(): whole counts that keep each group's and each
 * process's samples.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inference/cct.h"
#include "inference/kccf.h"
#include "report/render.h"
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

/* Random weights whose parts' sums are whole: every count is its
 * weight's floor or ceiling, every group's count its sum's, and every
 * part keeps its sum; the number of trials that broke one. */
static int round_trials(void)
{
	enum { N = 40 };
	double w[N];
	int64_t group[N], part[N], out[N];
	int bad = 0;

	srand(53);
	for (int t = 0; t < 500; t++) {
		double gsum[8] = { 0 }, psum[3] = { 0 };
		int64_t gcount[8] = { 0 }, pcount[3] = { 0 };

		for (int i = 0; i < N; i++) {
			/* a group lies in one part, as a leaf's in a process */
			group[i] = rand() % 8;
			part[i] = group[i] % 3;
			w[i] = (rand() % 1000) / 250.0;
		}
		for (int p = 0; p < 3; p++) {	/* whole parts */
			double s = 0;

			for (int i = 0; i < N; i++)
				s += part[i] == p ? w[i] : 0;
			for (int i = 0; i < N; i++)
				if (part[i] == p) {
					w[i] += ceil(s) - s;
					break;
				}
		}
		if (render__round(w, group, part, N, out)) {
			bad++;
			continue;
		}
		for (int i = 0; i < N; i++) {
			bad += out[i] < (int64_t)floor(w[i] + 1e-9) ||
			       out[i] > (int64_t)ceil(w[i] - 1e-9);
			gsum[group[i]] += w[i];
			gcount[group[i]] += out[i];
			psum[part[i]] += w[i];
			pcount[part[i]] += out[i];
		}
		for (int g = 0; g < 8; g++)
			bad += gcount[g] < (int64_t)floor(gsum[g] + 1e-9) ||
			       gcount[g] > (int64_t)ceil(gsum[g] - 1e-9);
		for (int p = 0; p < 3; p++)
			bad += pcount[p] != llround(psum[p]);
	}
	return bad;
}

static void rounding(void)
{
	/* process 1: a function inlined in one process and not the other
	 * splits its CID in halves, leaf groups A and B; process 2 too,
	 * and a whole group E */
	const double w[] = { 0.5, 0.5, 0.5, 0.5, 2.0 };
	const int64_t group[] = { 1, 2, 3, 4, 5 }, part[] = { 1, 1, 2, 2, 2 };
	const double in_group[] = { 0.4, 0.35, 0.25 };
	const int64_t one_group[] = { 7, 7, 7 };
	int64_t out[5];

	ok(render__round(w, group, part, 5, out) == 0 &&
	   out[0] + out[1] == 1 && out[2] + out[3] == 1 && out[4] == 2,
	   "round: halves of two leaves keep their process's one sample "
	   "(%lld + %lld, %lld + %lld, %lld)", (long long)out[0],
	   (long long)out[1], (long long)out[2], (long long)out[3],
	   (long long)out[4]);
	ok(render__round(in_group, one_group, NULL, 3, out) == 0 &&
	   out[0] == 1 && out[1] == 0 && out[2] == 0,
	   "round: a group's sample to its largest share");
	is_int(round_trials(), 0, "round: 500 random profiles keep every "
	       "part's sum, and each count and group within 1");
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
	rounding();
	return tap_done();
}
