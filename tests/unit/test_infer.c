/*
 * test_infer.c - the inference engine on a hand-made path map: precise,
 * ambiguous (apportioned by training frequency, shared suffix certain),
 * missing CIDs explained by a search of one and of two call-graph
 * edges, unexplained ones under an unknown frame, memoised searches,
 * and a program without a map.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "inference/cct.h"
#include "inference/infer.h"
#include "tests/tap.h"

enum { MAIN = 1, A, B, T, S, C, U, W, X, Y, Z, NFUNCS };
static const char *const names[NFUNCS] = { "", "main", "a", "b", "t", "s",
	"c", "u", "w", "x", "y", "z" };

#define PROG 42

/* "main;a;t" for a CCT node. */
static void path_of(const struct cct *t, uint32_t node, char *buf, size_t len)
{
	const struct cct_node *n = cct__node((struct cct *)t, node);

	if (n->parent == CCT_ROOT || n->parent == CCT_NONE) {
		snprintf(buf, len, "%s", cct__name(t, n->frame));
		return;
	}
	path_of(t, n->parent, buf, len);
	snprintf(buf + strlen(buf), len - strlen(buf), ";%s",
		 cct__name(t, n->frame));
}

/* The record ending in @path: its weight, exact and how; -1 if none. */
static double record(const struct cct *t, const char *path, uint32_t *exact,
		     enum cct_how *how)
{
	const struct cct_record *r;
	size_t n;
	char buf[256];

	r = cct__records(t, &n);
	for (size_t i = 0; i < n; i++) {
		path_of(t, r[i].node, buf, sizeof(buf));
		if (!strcmp(buf, path)) {
			*exact = r[i].exact;
			*how = r[i].how;
			return r[i].weight;
		}
	}
	return -1;
}

/* Nodes: parent index, function, height, self, total. */
static const struct infer_node map[] = {
	{ -1, MAIN, 16, 0, 0, 0, 0 },	/* 0 */
	{ 0, A, 48, 0x11, 0, 6, 0 },	/* 1 main;a */
	{ 1, T, 96, 0x21, 3, 3, 0 },	/* 2 main;a;t */
	{ 0, B, 48, 0x12, 0, 1, 0 },	/* 3 main;b */
	{ 3, T, 96, 0x31, 1, 1, 0 },	/* 4 main;b;t: same CID as 2 */
	{ 0, S, 40, 0x13, 2, 2, 0 },	/* 5 main;s */
	{ 0, C, 48, 0x14, 0, 1, 0 },	/* 6 main;c */
	{ 6, A, 80, 0x41, 0, 1, 0 },	/* 7 main;c;a */
	{ 7, U, 112, 0x22, 1, 1, 0 },	/* 8 main;c;a;u: edge a->u, 32 */
	{ 0, W, 40, 0x15, 0, 1, 0 },	/* 9 main;w */
	{ 9, X, 72, 0x51, 0, 1, 0 },	/* 10 main;w;x */
	{ 0, X, 48, 0x16, 0, 1, 0 },	/* 11 main;x */
	{ 11, Y, 80, 0x61, 0, 1, 0 },	/* 12 main;x;y: edge x->y, 32 */
	{ 12, Z, 112, 0x71, 1, 1, 0 },	/* 13 main;x;y;z: edge y->z, 32 */
};

int main(void)
{
	struct cct *t = cct__new();
	struct infer *inf = infer__new(t, NULL);
	const struct infer_cand *c;
	enum cct_how how;
	uint32_t exact;
	double w;

	for (int f = 1; f < NFUNCS; f++)
		cct__define(t, f, names[f], 1, 0x1000 * (unsigned)f);
	is_int(infer__begin_map(inf, PROG), 0, "map begun");
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		infer__add_node(inf, &map[i]);
	is_int(infer__add_node(inf, &(struct infer_node){ 99, A, 1, 0, 0, 0, 0 }),
	       -22, "a node whose parent was not seen: -EINVAL");
	is_int(infer__end_map(inf), 0, "map built");

	is_int(infer__lookup(inf, PROG, T, 96, &c), 2, "CID (t, 96): two candidates");
	ok(fabs(c[0].share + c[1].share - 1) < 1e-9, "shares add up to 1");
	is_int(infer__lookup(inf, PROG, S, 40, &c), 1, "CID (s, 40): one");
	is_int(infer__lookup(inf, PROG, S, 41, &c), 0, "CID (s, 41): none");
	is_int(infer__lookup(inf, PROG + 1, S, 40, &c), 0, "another program: none");

	is_int(infer__cid(inf, PROG, S, 40, 5), 0, "precise CID");
	w = record(t, "main;s", &exact, &how);
	ok(w == 5 && exact == 2 && how == CCT_PRECISE,
	   "precise: all 5 samples on main;s, both frames certain");

	is_int(infer__cid(inf, PROG, T, 96, 8), 0, "ambiguous CID");
	w = record(t, "main;a;t", &exact, &how);
	ok(w == 6 && exact == 1 && how == CCT_AMBIGUOUS,
	   "ambiguous: 3/4 of 8 to main;a;t (training 3 vs 1), only t certain");
	w = record(t, "main;b;t", &exact, &how);
	ok(w == 2 && how == CCT_AMBIGUOUS, "ambiguous: 1/4 of 8 to main;b;t");

	/* (u, 80): no candidate; edge a->u (32) reaches the known (a, 48) */
	is_int(infer__cid(inf, PROG, U, 80, 4), 0, "missing CID, one edge");
	w = record(t, "main;a;u", &exact, &how);
	ok(w == 4 && exact == 1 && how == CCT_SEARCHED,
	   "searched: main;a;u, only the leaf certain");

	/* (z, 136): y at 104 unknown, then x->y reaches the known (x, 72) */
	is_int(infer__cid(inf, PROG, Z, 136, 2), 0, "missing CID, two edges");
	w = record(t, "main;w;x;y;z", &exact, &how);
	ok(w == 2 && how == CCT_SEARCHED, "searched: main;w;x;y;z");

	is_int(infer__cid(inf, PROG, U, 9999, 3), 0, "unexplained CID");
	w = record(t, "[unknown callers of u at height 9999];u", &exact, &how);
	ok(w == 3 && how == CCT_UNKNOWN, "unknown: under its own frame, never dropped");
	is_int(infer__cid(inf, PROG, U, 9999, 1), 0, "the same CID again");
	w = record(t, "[unknown callers of u at height 9999];u", &exact, &how);
	is_int(w, 4, "weights merge");
	is_int(infer__stats(inf)->searches, 3, "three searches: the repeat was memoised");

	is_int(infer__cid(inf, PROG + 1, S, 40, 7), 0, "a program without a map");
	w = record(t, "[unknown callers of s at height 40];s", &exact, &how);
	ok(w == 7 && how == CCT_UNKNOWN, "no map: unknown callers");

	ok(fabs(infer__stats(inf)->samples - 30) < 1e-9, "30 samples attributed");
	ok(fabs(cct__total(t) - 30) < 1e-9, "the CCT holds all 30");
	ok(fabs(infer__stats(inf)->by_how[CCT_PRECISE] - 5) < 1e-9 &&
	   fabs(infer__stats(inf)->by_how[CCT_AMBIGUOUS] - 8) < 1e-9 &&
	   fabs(infer__stats(inf)->by_how[CCT_SEARCHED] - 6) < 1e-9 &&
	   fabs(infer__stats(inf)->by_how[CCT_UNKNOWN] - 11) < 1e-9,
	   "by how: 5 precise, 8 ambiguous, 6 searched, 11 unknown");
	is_int(infer__begin_map(inf, PROG), -22, "a second map for one program refused");
	infer__free(inf);
	cct__free(t);
	infer__free(NULL);
	return tap_done();
}
