/*
 * test_infer.c - the inference engine on a hand-made path map: precise,
 * ambiguous (apportioned by training frequency, shared suffix certain),
 * missing CIDs explained by a search of one and of two call-graph
 * edges, unexplained ones under an unknown frame, memoised searches,
 * and a program without a map.  Then calls the binary proves: a chain
 * only they explain (precise), two chains (ambiguous, apportioned by
 * learned weight), a recursive function (the search is bounded and
 * memoised), the bounds, a cut list that keeps the most probable
 * chain, and tail calls (a jump that hands the callee its frame); and
 * a missing CID from its function's shapes at other heights.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "inference/cct.h"
#include "inference/infer.h"
#include "tests/tap.h"

enum { MAIN = 1, A, B, T, S, C, U, W, X, Y, Z, P, Q, L, R1, R2, M, R, G,
	H, V, F_, NFUNCS };
static const char *const names[NFUNCS] = { "", "main", "a", "b", "t", "s",
	"c", "u", "w", "x", "y", "z", "p", "q", "l", "r1", "r2", "m", "r", "g", "h",
	"v", "f" };

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

/*
 * Learned: main at 16, main;r1, and main;c;r1;m (4 samples: the edge
 * r1 -> m, 40).  Proven: main -> p (32) -> q (48) -> l (16);
 * main -> r1 (32), main -> r2 (32), r1 -> m (40), r2 -> m (40);
 * main -> r (32), r -> r (16); main -> g, h (32) and g, h -> g, h (16).
 */
static const struct infer_node rmap[] = {
	{ -1, MAIN, 16, 0, 2, 9, 0 },
	{ 0, R1, 48, 0x10, 3, 3, 0 },
	{ 0, C, 40, 0x11, 0, 4, 0 },
	{ 2, R1, 72, 0x12, 0, 4, 0 },
	{ 3, M, 112, 0x13, 4, 4, 0 },
};
static const int64_t rcalls[][3] = {
	{ MAIN, P, 32 }, { P, Q, 48 }, { Q, L, 16 }, { MAIN, R1, 32 },
	{ MAIN, R2, 32 }, { R1, M, 40 }, { R2, M, 40 }, { MAIN, R, 32 },
	{ R, R, 16 }, { MAIN, G, 32 }, { MAIN, H, 32 }, { G, G, 16 },
	{ G, H, 16 }, { H, G, 16 }, { H, H, 16 },
};

/* An engine for PROG with the learned map and the proven calls. */
static struct infer *learned_and_proven(struct cct *t,
					const struct infer_limits *lim)
{
	struct infer *inf = infer__new(t, lim);

	for (int f = 1; f < NFUNCS; f++)
		cct__define(t, f, names[f], 1, 0x1000 * (unsigned)f);
	infer__begin_map(inf, PROG);
	for (size_t i = 0; i < sizeof(rmap) / sizeof(rmap[0]); i++)
		infer__add_node(inf, &rmap[i]);
	infer__end_map(inf);
	for (size_t i = 0; i < sizeof(rcalls) / sizeof(rcalls[0]); i++)
		infer__add_call(inf, PROG, rcalls[i][0], rcalls[i][1], rcalls[i][2]);
	return inf;
}

static void proven_calls(void)
{
	struct cct *t = cct__new();
	/* whole chains: the search itself, not how a report cuts them */
	struct infer *inf = infer__new(t, &(struct infer_limits){
		.max_states = 512, .confidence = -1, .search_only = true });
	const struct infer_stats *st;
	enum cct_how how;
	uint32_t exact;
	uint64_t states;
	size_t nrec;
	double w1, w2;

	for (int f = 1; f < NFUNCS; f++)
		cct__define(t, f, names[f], 1, 0x1000 * (unsigned)f);
	infer__begin_map(inf, PROG);
	for (size_t i = 0; i < sizeof(rmap) / sizeof(rmap[0]); i++)
		infer__add_node(inf, &rmap[i]);
	is_int(infer__add_call(inf, PROG, MAIN, P, 32), -22,
	       "a call before the map is built: -EINVAL");
	infer__end_map(inf);
	is_int(infer__add_call(inf, PROG, MAIN, P, 0), -22,
	       "a call that adds no height: -EINVAL");
	is_int(infer__add_call(inf, PROG + 1, MAIN, P, 8), -22,
	       "a call in a program without a map: -EINVAL");
	for (size_t i = 0; i < sizeof(rcalls) / sizeof(rcalls[0]); i++)
		infer__add_call(inf, PROG, rcalls[i][0], rcalls[i][1], rcalls[i][2]);
	st = infer__stats(inf);
	is_int(st->calls, 15, "15 calls added");

	/* (l, 112): only main;p;q;l adds up (16 + 32 + 48 + 16) */
	is_int(infer__cid(inf, PROG, L, 112, 10), 0, "a CID only proven calls explain");
	w1 = record(t, "main;p;q;l", &exact, &how);
	ok(w1 == 10 && exact == 4 && how == CCT_PRECISE,
	   "one chain of proven calls: precise, all 4 frames certain");
	is_int(infer__cid(inf, PROG, L, 120, 1), 0, "8 bytes off");
	ok(record(t, "[unknown callers of l at height 120];l", &exact, &how) == 1 &&
	   how == CCT_UNKNOWN, "no chain adds up: unknown");

	/* (m, 88): main;r1;m (r1 at 48 is known; r1 -> m learned) and
	 * main;r2;m (r2 -> m only proven) */
	is_int(infer__cid(inf, PROG, M, 88, 8), 0, "a CID two chains explain");
	w1 = record(t, "main;r1;m", &exact, &how);
	ok(how == CCT_AMBIGUOUS && exact == 1, "two chains: ambiguous, the leaf certain");
	w2 = record(t, "main;r2;m", &exact, &how);
	ok(w1 > 0 && w2 > 0 && fabs(w1 + w2 - 8) < 1e-9,
	   "both chains get weight, 8 in all");
	ok(w1 > 2 * w2, "the learned chain outweighs the proven-only one "
	   "(%.3f vs %.3f)", w1, w2);

	/* r calls itself: (r, 48 + 16 * 5) is main;r then 5 more r */
	is_int(infer__cid(inf, PROG, R, 128, 1), 0, "a recursive CID");
	ok(record(t, "main;r;r;r;r;r;r", &exact, &how) == 1 &&
	   how == CCT_PRECISE && exact == 7, "recursion: one chain, 7 frames");
	states = st->search_states;
	is_int(infer__cid(inf, PROG, R, 48 + 16 * 1000, 1), 0,
	       "recursion deeper than the chain bound");
	ok(record(t, "[unknown callers of r at height 16048];r", &exact, &how) == 1 &&
	   how == CCT_UNKNOWN, "beyond the bound: unknown, not a guess");
	ok(st->search_states - states <= 2 * 512 + 2,
	   "the search stayed within its bound (%llu states)",
	   (unsigned long long)(st->search_states - states));

	/* g and h call each other: 2^21 chains reach (g, 48 + 16 * 20),
	 * counted within 512 states only because states are memoised */
	states = st->search_states;
	is_int(infer__cid(inf, PROG, G, 48 + 16 * 20, 1), 0,
	       "a CID with 2^21 chains");
	{
		const struct cct_record *r = cct__records(t, &nrec);
		size_t listed = 0;
		double sum = 0;

		for (size_t i = 0; i < nrec; i++)
			if (r[i].how == CCT_SEARCHED) {
				listed++;
				sum += r[i].weight;
				how = r[i].how;
				exact = r[i].exact;
			}
		/* each chain is a dive of 20 states from the most probable
		 * open frame, so the state bound, not max_solutions (64),
		 * ends the list */
		ok(listed >= 16 && listed <= 64 && fabs(sum - 1) < 1e-9,
		   "chains listed until the state bound, the sample's weight "
		   "shared among them (%zu, %.3f)", listed, sum);
	}
	ok(how == CCT_SEARCHED && exact == 1,
	   "more chains than are listed: searched, only the leaf certain");
	ok(st->search_states - states <= 2 * 512,
	   "counted and listed within the bounds (%llu states)",
	   (unsigned long long)(st->search_states - states));

	/* a new call rebuilds the graph: (l, 112) gains a second chain */
	infer__add_call(inf, PROG, R1, L, 64);
	is_int(infer__cid(inf, PROG, L, 112, 2), 0, "the same CID after a new call");
	ok(record(t, "main;r1;l", &exact, &how) > 0 && how == CCT_SEARCHED,
	   "the new call's chain takes one guess, the old one three: the "
	   "guess bound leaves that out, so the count is not whole: "
	   "searched");
	infer__delete(inf);
	cct__delete(t);
}

/*
 * How chains that disagree are shown (the default confidence, 3/4).
 * (m, 88): the learned main;r1;m holds more than 3/4 of the weight and
 * is shown whole; main;r2;m only as far as both agree, the leaf.  The
 * 2^21 chains of (g, 368) disagree right above the leaf (g or h): all
 * the weight goes to the leaf under its unknown callers.
 */
static void cut_chains(void)
{
	struct cct *t = cct__new();
	struct infer *inf = learned_and_proven(t, &(struct infer_limits){
		.search_only = true });
	enum cct_how how;
	uint32_t exact;
	size_t nrec;
	double w1, w2;

	is_int(infer__cid(inf, PROG, M, 88, 8), 0, "a CID two chains explain");
	w1 = record(t, "main;r1;m", &exact, &how);
	w2 = record(t, "[unknown callers of m at height 88];m", &exact, &how);
	ok(w1 > 6 && w2 > 0 && fabs(w1 + w2 - 8) < 1e-9 &&
	   how == CCT_AMBIGUOUS && exact == 1,
	   "the likely chain whole (%.3f), the other cut above the leaf "
	   "(%.3f)", w1, w2);
	ok(record(t, "main;r2;m", &exact, &how) < 0,
	   "the unlikely caller is not shown");
	is_int(infer__cid(inf, PROG, G, 48 + 16 * 20, 1), 0,
	       "a CID with 2^21 chains");
	w1 = record(t, "[unknown callers of g at height 368];g", &exact, &how);
	ok(fabs(w1 - 1) < 1e-9 && how == CCT_SEARCHED,
	   "chains that disagree above the leaf: all weight on the leaf "
	   "under its unknown callers, searched (%.3f)", w1);
	cct__records(t, &nrec);
	is_int(nrec, 3, "three records in all: the chains merged");
	infer__delete(inf);
	cct__delete(t);
}

/* An engine over CCT @t with @lim (NULL: the defaults), every test
 * function defined and the map of PROG made of @nodes[0, n). */
static struct infer *engine(struct cct *t, const struct infer_limits *lim,
			    const struct infer_node *nodes, size_t n)
{
	struct infer *inf = infer__new(t, lim);

	for (int f = 1; f < NFUNCS; f++)
		cct__define(t, f, names[f], 1, 0x1000 * (unsigned)f);
	infer__begin_map(inf, PROG);
	for (size_t i = 0; i < n; i++)
		infer__add_node(inf, &nodes[i]);
	infer__end_map(inf);
	return inf;
}

/*
 * Three chains reach (z, 64): main;p;z, main;q;z (proven calls only)
 * and main;l;z, whose l -> z a learned path took.  With room for one
 * chain, the list holds the most probable, not the first found.
 */
static void most_probable_first(void)
{
	static const struct infer_node learned[] = {
		{ -1, MAIN, 16, 0, 0, 1, 0 },
		{ 0, C, 40, 0x11, 0, 1, 0 },
		{ 1, L, 72, 0x12, 0, 1, 0 },
		{ 2, Z, 88, 0x13, 1, 1, 0 },
	};
	static const int64_t calls[][3] = {
		{ MAIN, P, 32 }, { MAIN, Q, 32 }, { MAIN, L, 32 },
		{ P, Z, 16 }, { Q, Z, 16 }, { L, Z, 16 },
	};
	struct cct *t = cct__new();
	struct infer *inf = engine(t, &(struct infer_limits){
		.max_solutions = 1 }, learned,
		sizeof(learned) / sizeof(learned[0]));
	enum cct_how how;
	uint32_t exact;

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		infer__add_call(inf, PROG, calls[i][0], calls[i][1], calls[i][2]);
	is_int(infer__cid(inf, PROG, Z, 64, 1), 0, "a CID three chains explain");
	ok(record(t, "main;l;z", &exact, &how) == 1 && how == CCT_SEARCHED,
	   "one listed: the chain a learned path took, searched");
	ok(record(t, "main;p;z", &exact, &how) < 0 &&
	   record(t, "main;q;z", &exact, &how) < 0,
	   "the chains of proven calls alone are not listed");
	infer__delete(inf);
	cct__delete(t);
}

/*
 * Tail calls: p ends in a jump to v, v in one to u.  On a stack v and u
 * stand where p would, under main (p at 48, main;p learned), so (v, 48)
 * and (u, 48) are main;v and main;u, though no call of v or u is
 * listed.  A function's jump to itself is no tail call.
 */
static void tail_calls(void)
{
	static const struct infer_node learned[] = {
		{ -1, MAIN, 16, 0, 0, 2, 0 },
		{ 0, P, 48, 0x11, 2, 2, 0 },
	};
	struct cct *t = cct__new();
	struct infer *inf = engine(t, NULL, learned,
				   sizeof(learned) / sizeof(learned[0]));
	enum cct_how how;
	uint32_t exact;

	is_int(infer__add_tail(inf, PROG, P, P), -22,
	       "a jump to the function's own start: -EINVAL");
	is_int(infer__add_tail(inf, PROG + 1, P, V), -22,
	       "a tail call in a program without a map: -EINVAL");
	is_int(infer__add_tail(inf, PROG, P, V), 0, "p ends in a jump to v");
	is_int(infer__add_tail(inf, PROG, V, U), 0, "v ends in a jump to u");
	is_int(infer__cid(inf, PROG, V, 48, 3), 0, "a CID only a tail call explains");
	ok(record(t, "main;v", &exact, &how) == 3 && how == CCT_SEARCHED &&
	   exact == 1, "v under p's caller: main;v, the one call into v "
	   "from a known CID (searched: only the leaf certain)");
	is_int(infer__cid(inf, PROG, U, 48, 1), 0, "a tail call's tail call");
	ok(record(t, "main;u", &exact, &how) == 1 && how == CCT_SEARCHED,
	   "u under p's caller too: main;u");
	ok(record(t, "main;p;v", &exact, &how) < 0,
	   "p, whose frame v took, is on no chain");
	infer__delete(inf);
	cct__delete(t);
}

/* Candidates no learned count weighs (a map with no samples, as a
 * crafted or pulled one may be) are cut where they disagree; an outcome
 * kept from an earlier inference attributes as infer__cid() does. */
static void unweighed(void)
{
	static const struct infer_node zero[] = {
		{ -1, MAIN, 16, 0, 0, 0, 0 },
		{ 0, A, 48, 0x11, 0, 0, 0 },
		{ 1, T, 96, 0x21, 0, 0, 0 },
		{ 0, B, 48, 0x12, 0, 0, 0 },
		{ 3, T, 96, 0x31, 0, 0, 0 },
	};
	struct cct *t = cct__new();
	struct infer *inf = engine(t, NULL, zero,
				   sizeof(zero) / sizeof(zero[0]));
	struct infer_outcome o;
	enum cct_how how;
	uint32_t exact;

	is_int(infer__cid(inf, PROG, T, 96, 4), 0, "an unweighed CID");
	ok(record(t, "main;a;t", &exact, &how) < 0 &&
	   record(t, "[unknown callers of t at height 96];t", &exact, &how) == 4,
	   "candidates no count weighs: cut above t, all 4 samples there");
	is_int(infer__unknown(inf, U, 9999, &o), 0, "an outcome left unknown");
	is_int(infer__add_outcome(inf, CCT_ROOT, 0, &o, 2), 0,
	       "attributed as kept");
	ok(record(t, "[unknown callers of u at height 9999];u", &exact, &how) == 2 &&
	   how == CCT_UNKNOWN, "infer__add_outcome: its weight where the outcome says");
	is_int((int)infer__stats(inf)->cids, 2, "both counted as attributed CIDs");
	infer__delete(inf);
	cct__delete(t);
}

/* A CID the map splits 9 to 1 between main;a;t and main;b;t, and the
 * run's own learning 1 to 9. */
static const struct infer_node own_nodes[] = {
	{ -1, MAIN, 16, 0, 0, 10, 0, 0 },
	{ 0, A, 48, 0x11, 0, 9, 0, 0 },
	{ 1, T, 96, 0x21, 9, 9, 0, 1 },
	{ 0, B, 48, 0x12, 0, 1, 0, 0 },
	{ 3, T, 96, 0x31, 1, 1, 0, 9 },
};
#define OWN_NODES (sizeof(own_nodes) / sizeof(own_nodes[0]))

/* The run's own learned samples split a CID (own_nodes): the map counts
 * as eight samples against the run's ten.  Without own samples the map
 * rules. */
static void own_split(void)
{
	struct infer_node none[OWN_NODES];

	for (size_t i = 0; i < OWN_NODES; i++) {
		none[i] = own_nodes[i];
		none[i].own = 0;
	}
	for (int own = 1; own >= 0; own--) {
		struct cct *t = cct__new();
		struct infer *inf = engine(t, NULL, own ? own_nodes : none,
					   OWN_NODES);
		enum cct_how how;
		uint32_t exact;
		double a, b;

		infer__cid(inf, PROG, T, 96, 120);
		a = record(t, "main;a;t", &exact, &how);
		b = record(t, "main;b;t", &exact, &how);
		if (own)
			ok(fabs(a - 120 * (1 + 8 * 0.9) / 18) < 1e-9 &&
			   fabs(b - 120 * (9 + 8 * 0.1) / 18) < 1e-9 &&
			   how == CCT_AMBIGUOUS,
			   "own samples 1:9 against the map's 9:1 (as 8 "
			   "samples): a %.1f, b %.1f of 120", a, b);
		else
			ok(fabs(a - 108) < 1e-9 && fabs(b - 12) < 1e-9,
			   "no own samples: the map's 9:1 (a %.1f, b %.1f)",
			   a, b);
		infer__delete(inf);
		cct__delete(t);
	}
}

/* The weight of @path's records of kind @how, and their exact frames
 * (the last seen). */
static double weight_as(const struct cct *t, const char *path,
			enum cct_how how, uint32_t *exact)
{
	const struct cct_record *r;
	double w = 0;
	size_t n;
	char buf[256];

	r = cct__records(t, &n);
	for (size_t i = 0; i < n; i++) {
		path_of(t, r[i].node, buf, sizeof(buf));
		if (!strcmp(buf, path) && r[i].how == how) {
			w += r[i].weight;
			*exact = r[i].exact;
		}
	}
	return w;
}

/* Own samples that are samples of the run (the learner took the main
 * event's turn): of (t, 96)'s 20 samples, 1 was unwound to main;a;t and
 * 9 to main;b;t.  Those count as they are, precise with all three
 * frames certain; the other 10 are apportioned as own_split() weighs
 * (a (1 + 8 * 0.9) / 18), ambiguous, t alone certain. */
static void own_counted(void)
{
	struct cct *t = cct__new();
	struct infer *inf = engine(t, NULL, own_nodes, OWN_NODES);
	struct infer_outcome o;
	double share_a = (1 + 8 * 0.9) / 18, pa, pb, aa, ab;
	uint32_t xa = 0, xb = 0, x = 0;

	is_int(infer__explain_counted(inf, PROG, T, 96, 20, &o), 0,
	       "explained, own samples counted");
	is_int(infer__add_outcome(inf, CCT_ROOT, 0, &o, 20), 0, "added");
	pa = weight_as(t, "main;a;t", CCT_PRECISE, &xa);
	pb = weight_as(t, "main;b;t", CCT_PRECISE, &xb);
	ok(fabs(pa - 1) < 1e-9 && fabs(pb - 9) < 1e-9 && xa == 3 && xb == 3,
	   "the own samples in their own contexts, every frame certain "
	   "(a %.2f, b %.2f, exact %u, %u)", pa, pb, xa, xb);
	aa = weight_as(t, "main;a;t", CCT_AMBIGUOUS, &x);
	ab = weight_as(t, "main;b;t", CCT_AMBIGUOUS, &x);
	ok(fabs(aa - 10 * share_a) < 1e-9 &&
	   fabs(ab - 10 * (1 - share_a)) < 1e-9 && x == 1,
	   "the other ten apportioned (a %.3f, b %.3f)", aa, ab);
	ok(fabs(infer__stats(inf)->by_how[CCT_PRECISE] - 10) < 1e-9 &&
	   fabs(infer__stats(inf)->by_how[CCT_AMBIGUOUS] - 10) < 1e-9,
	   "by how: 10 precise, 10 ambiguous");
	/* more own samples than the CID has (a window inferred in parts):
	 * all of them exact, in the own samples' proportion */
	is_int(infer__explain_counted(inf, PROG, T, 96, 4, &o), 0,
	       "explained with fewer samples than own ones");
	ok(o.n == 2 && fabs(o.sols[0].share - o.sols[0].own) < 1e-9 &&
	   fabs(o.sols[0].own + o.sols[1].own - 1) < 1e-9,
	   "the own samples' split, all exact (%.2f, %.2f)",
	   o.sols[0].own, o.sols[1].own);
	infer__delete(inf);
	cct__delete(t);
}

/* Fragments: (u, 120) only a fragment explains (t at 96, then u), and
 * (t, 96) a whole path does: u's samples go to main;a;t;u.  (w, 200)
 * has a fragment whose top nothing explains: under unknown callers.
 * (a, 48) has a whole path and a fragment: the whole path alone. */
static void fragments(void)
{
	static const struct infer_node nodes[] = {
		{ -1, MAIN, 16, 0, 0, 3, 0, 0, false },
		{ 0, A, 48, 0x11, 1, 3, 0, 0, false },
		{ 1, T, 96, 0x21, 2, 2, 0, 0, false },
		{ -1, T, 96, 0, 0, 4, 0, 0, true },
		{ 3, U, 120, 0x31, 4, 4, 0, 0, true },
		{ -1, X, 150, 0, 0, 2, 0, 0, true },
		{ 5, W, 200, 0x41, 2, 2, 0, 0, true },
		{ -1, B, 20, 0, 0, 1, 0, 0, true },
		{ 7, A, 48, 0x51, 1, 1, 0, 0, true },
	};
	struct cct *t = cct__new();
	struct infer *inf = engine(t, NULL, nodes,
				   sizeof(nodes) / sizeof(nodes[0]));
	enum cct_how how;
	uint32_t exact;

	is_int(infer__cid(inf, PROG, U, 120, 4), 0, "a CID only a fragment explains");
	ok(record(t, "main;a;t;u", &exact, &how) == 4 && how == CCT_PRECISE &&
	   exact == 4, "its frames below the whole path of the fragment's top "
	   "(main;a;t;u, precise, all certain)");
	is_int(infer__cid(inf, PROG, W, 200, 2), 0, "a fragment whose top nothing explains");
	ok(record(t, "[unknown callers of x at height 150];x;w", &exact, &how) == 2,
	   "its frames under unknown callers");
	is_int(infer__cid(inf, PROG, A, 48, 1), 0, "a CID a whole path explains too");
	ok(record(t, "main;a", &exact, &how) == 1 &&
	   record(t, "[unknown callers of b at height 20];b;a", &exact, &how) < 0,
	   "the whole path alone");
	infer__delete(inf);
	cct__delete(t);
}

/* Frames with no height (goroutines, coroutines): a CID is a function,
 * whole paths and fragments are its candidates side by side, and there
 * is nothing to search by. */
static void no_height(void)
{
	enum { N = ICPPD_HEIGHT_NONE };
	static const struct infer_node nodes[] = {
		{ -1, MAIN, N, 0, 0, 6, 0, 0, false },
		{ 0, A, N, 0x11, 0, 6, 0, 0, false },
		{ 1, T, N, 0x21, 2, 2, 0, 0, false },
		{ 1, U, N, 0x41, 4, 4, 0, 0, false },
		{ -1, B, N, 0, 0, 2, 0, 0, true },
		{ 4, T, N, 0x31, 2, 2, 0, 0, true },
		{ -1, A, N, 0, 0, 1, 0, 0, true },
		{ 6, V, N, 0x51, 1, 1, 0, 0, true },
	};
	struct cct *t = cct__new();
	struct infer *inf = engine(t, NULL, nodes,
				   sizeof(nodes) / sizeof(nodes[0]));
	enum cct_how how;
	uint32_t exact;

	is_int(infer__cid(inf, PROG, T, N, 8), 0, "no height: a whole path and a fragment");
	ok(record(t, "main;a;t", &exact, &how) == 4 && how == CCT_AMBIGUOUS,
	   "the whole path keeps its half");
	ok(record(t, "[unknown callers of b];b;t", &exact, &how) == 4,
	   "the fragment whose top nothing explains, its half, under unknown callers");
	is_int(infer__cid(inf, PROG, V, N, 2), 0, "no height: a fragment only");
	ok(record(t, "main;a;v", &exact, &how) == 2,
	   "below the whole paths of its top (main;a;v)");
	is_int(infer__cid(inf, PROG, W, N, 3), 0, "no height: a CID the map lacks");
	ok(record(t, "[unknown callers of w];w", &exact, &how) == 3 &&
	   how == CCT_UNKNOWN, "unknown callers, with no search by heights");
	infer__delete(inf);
	cct__delete(t);
}

/*
 * Indirect calls: a (known at 48) calls through a pointer 40 bytes
 * down; u is taken, and so is w, which ends in a jump to x.  A CID of a
 * taken function at 88 ends its chain there (an anchor); one that is
 * not taken, or at a height no known CID's indirect call reaches, stays
 * unknown; and one that direct calls explain takes no indirect call.
 */
static void indirect_calls(void)
{
	static const struct infer_node learned[] = {
		{ -1, MAIN, 16, 0, 0, 2, 0 },
		{ 0, A, 48, 0x11, 2, 2, 0 },
	};
	struct cct *t = cct__new();
	struct infer *inf = engine(t, NULL, learned,
				   sizeof(learned) / sizeof(learned[0]));
	enum cct_how how;
	uint32_t exact;

	is_int(infer__add_indirect(inf, PROG, A, 0), -22,
	       "an indirect call adding no height: -EINVAL");
	is_int(infer__add_indirect(inf, PROG + 1, A, 40), -22,
	       "an indirect call in a program without a map: -EINVAL");
	is_int(infer__add_taken(inf, PROG + 1, U), -22,
	       "a taken function in a program without a map: -EINVAL");
	is_int(infer__add_indirect(inf, PROG, A, 40), 0,
	       "a calls through a pointer, 40 bytes down");
	is_int(infer__add_indirect(inf, PROG, A, 40), 0, "again: merged");
	is_int(infer__add_taken(inf, PROG, U), 0, "u's address is taken");
	is_int(infer__add_taken(inf, PROG, W), 0, "w's too");
	is_int(infer__add_tail(inf, PROG, W, X), 0, "w ends in a jump to x");
	is_int(infer__add_taken(inf, PROG, Z), 0, "z's too");
	is_int(infer__add_call(inf, PROG, MAIN, Z, 72), 0,
	       "and main calls z directly, 72 bytes down");
	is_int(infer__cid(inf, PROG, U, 88, 2), 0, "a taken function at 88");
	ok(record(t, "main;a;u", &exact, &how) == 2 && how == CCT_PRECISE,
	   "under the anchor: main;a;u, precise");
	is_int(infer__cid(inf, PROG, X, 88, 1), 0,
	       "a function a taken one's jump reaches, at 88");
	ok(record(t, "main;a;x", &exact, &how) == 1,
	   "taken through the tail call: main;a;x");
	is_int(infer__cid(inf, PROG, Y, 88, 1), 0, "a function not taken");
	ok(record(t, "[unknown callers of y at height 88];y", &exact, &how) == 1,
	   "no indirect call reaches it: unknown callers");
	is_int(infer__cid(inf, PROG, U, 96, 1), 0, "u where no anchor is");
	ok(record(t, "[unknown callers of u at height 96];u", &exact, &how) == 1,
	   "unknown callers");
	is_int(infer__cid(inf, PROG, Z, 88, 1), 0,
	       "z at 88, which main's direct call explains too");
	ok(record(t, "main;z", &exact, &how) == 1 &&
	   record(t, "main;a;z", &exact, &how) < 0,
	   "the direct call's chain, not the indirect one");
	infer__delete(inf);
	cct__delete(t);
}

/*
 * The runs' own CIDs weigh chains: main -> p and main -> q (32), both
 * calling l (16), so (l, 64) has two chains no learned path weighs,
 * cut above l.  Once (q, 48) is a CID the runs sampled, main;q;l holds
 * 8 in 9 of the weight, past the confidence share.
 */
static void observed(void)
{
	static const struct infer_node learned[] = {
		{ -1, MAIN, 16, 0, 1, 1, 0 },
	};
	static const int64_t calls[][3] = {
		{ MAIN, P, 32 }, { MAIN, Q, 32 }, { P, L, 16 }, { Q, L, 16 },
	};
	enum cct_how how;
	uint32_t exact;

	for (int seen = 0; seen < 2; seen++) {
		struct cct *t = cct__new();
		struct infer *inf = engine(t, NULL, learned, 1);

		for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
			infer__add_call(inf, PROG, calls[i][0], calls[i][1],
					calls[i][2]);
		if (seen)
			is_int(infer__observe(inf, PROG, Q, 48), 0,
			       "(q, 48) sampled in the runs");
		is_int(infer__observe(inf, PROG + 1, Q, 48), -22,
		       "a program without a map: -EINVAL");
		is_int(infer__cid(inf, PROG, L, 64, 9), 0, "(l, 64)");
		if (!seen)
			ok(record(t, "[unknown callers of l at height 64];l",
				  &exact, &how) == 9,
			   "two equal chains: cut above l");
		else
			ok(fabs(record(t, "main;q;l", &exact, &how) - 8) <
			   1e-9 && fabs(record(t,
				"[unknown callers of l at height 64];l",
				&exact, &how) - 1) < 1e-9,
			   "through the sampled CID: 8 of 9 on main;q;l, the "
			   "rest cut");
		infer__delete(inf);
		cct__delete(t);
	}
}

/*
 * A CID no path explains, from the calls into its function, then from
 * its function's shapes.  f was learned at 96 under r at 64 and r at 48
 * (recursion, 3 samples), at 72 under x at 56 and g at 40 (1 sample),
 * and at 200 under z at 180 under w at 150 (5 samples); the binary
 * shows a call from y into f, 48 bytes down, that no path took.
 * - (f, 112): the learned call x -> f (16 bytes) puts x at 96, the
 *   known CID of main;y;x, and the proven y -> f puts y at 64, main;y's.
 *   Weighed 1 to 0.25, main;y;x;f holds 0.8 of the weight, over the
 *   confidence share, and the guessed split's rest is cut: 6.4 of 8 on
 *   main;y;x;f, 1.6 under unknown callers (r -> f puts r at 80, a
 *   fragment's CID: no whole path to end at).
 * - (f, 76): no call into f comes from a known CID.  Moved down 20, the
 *   recursion's shape reaches main;r at 28 through r at 44, a frame the
 *   map never saw (one guess); w;z;f, moved down 124, needs more
 *   guesses, g;x;f too: main;r;r;f, every caller uncertain.
 * - A fragment's top (r, 80), which no whole path explains, is explained
 *   as such a CID: the call r -> r from main;r;r at 64, the fragment's v
 *   below it.
 * - (f, 113) fits nothing, and the search finds nothing: unknown callers.
 */
static void shapes(void)
{
	static const struct infer_node nodes[] = {
		{ -1, MAIN, 16, 0, 0, 13, 0, 0, false },
		{ 0, R, 48, 0x11, 0, 3, 0, 0, false },
		{ 1, R, 64, 0x21, 0, 3, 0, 0, false },
		{ 2, F_, 96, 0x22, 3, 3, 0, 0, false },
		{ 0, G, 40, 0x12, 0, 1, 0, 0, false },
		{ 4, X, 56, 0x31, 0, 1, 0, 0, false },
		{ 5, F_, 72, 0x32, 1, 1, 0, 0, false },
		{ 0, Y, 64, 0x13, 0, 1, 0, 0, false },
		{ 7, X, 96, 0x41, 1, 1, 0, 0, false },
		{ -1, R, 80, 0, 0, 2, 0, 0, true },
		{ 9, V, 120, 0x51, 2, 2, 0, 0, true },
		{ 0, W, 150, 0x61, 0, 5, 0, 0, false },
		{ 11, Z, 180, 0x62, 0, 5, 0, 0, false },
		{ 12, F_, 200, 0x63, 5, 5, 0, 0, false },
		{ 0, R, 28, 0x64, 1, 1, 0, 0, false },
	};
	struct cct *t = cct__new();
	struct infer *inf = engine(t, NULL, nodes,
				   sizeof(nodes) / sizeof(nodes[0]));
	enum cct_how how;
	uint32_t exact;
	double w;

	is_int(infer__add_call(inf, PROG, Y, F_, 48), 0, "y calls f");
	is_int(infer__index_calls(inf), 0, "the call graph built first");
	is_int(infer__cid(inf, PROG, F_, 112, 8), 0,
	       "a CID called from known ones");
	w = record(t, "main;y;x;f", &exact, &how);
	ok(fabs(w - 6.4) < 1e-9 && how == CCT_SEARCHED && exact == 1,
	   "the learned call from main;y;x at 96: main;y;x;f (%.3f of 8, "
	   "searched, the leaf certain)", w);
	w = record(t, "[unknown callers of f at height 112];f", &exact, &how);
	ok(fabs(w - 1.6) < 1e-9,
	   "the proven call's share, under the confidence: cut (%.3f)", w);
	ok(record(t, "main;y;f", &exact, &how) < 0 &&
	   record(t, "main;r;r;r;f", &exact, &how) < 0,
	   "not main;y;f, nor through the fragment's r at 80");
	is_int(infer__cid(inf, PROG, F_, 76, 4), 0,
	       "a CID no call into it explains");
	w = record(t, "main;r;r;f", &exact, &how);
	ok(w == 4 && how == CCT_SEARCHED && exact == 1,
	   "the recursion's shape with one guessed frame, moved down to "
	   "main;r at 28: main;r;r;f (%.3f of 4, searched)", w);
	ok(record(t, "main;w;z;f", &exact, &how) < 0 &&
	   record(t, "main;g;x;f", &exact, &how) < 0,
	   "not the shapes with more guesses, the most learned one either");
	is_int(infer__cid(inf, PROG, V, 120, 2), 0,
	       "a fragment whose top no whole path explains");
	ok(record(t, "main;r;r;r;v", &exact, &how) == 2,
	   "its top from the call r -> r at main;r;r: main;r;r;r;v");
	is_int(infer__cid(inf, PROG, F_, 113, 1), 0, "a CID nothing fits");
	ok(record(t, "[unknown callers of f at height 113];f", &exact,
		  &how) == 1 && how == CCT_UNKNOWN, "unknown callers");
	is_int(infer__cid(inf, PROG, F_, ICPPD_HEIGHT_NONE, 1), 0,
	       "f with no height");
	ok(record(t, "[unknown callers of f];f", &exact, &how) == 1,
	   "no height to move a shape by: unknown callers");
	infer__delete(inf);
	cct__delete(t);
}

int main(void)
{
	struct cct *t = cct__new();
	/* the search's chains; shapes() has the shapes' */
	struct infer *inf = infer__new(t, &(struct infer_limits){
		.search_only = true });
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
	/* training counts weigh the candidates: apportioned, not cut */
	w = record(t, "main;b;t", &exact, &how);
	ok(w == 2 && exact == 1 && how == CCT_AMBIGUOUS,
	   "ambiguous: main;b;t gets its quarter, shown whole, only t certain");
	ok(record(t, "[unknown callers of t at height 96];t", &exact, &how) < 0,
	   "ambiguous: nothing under the unknown callers of t");

	/* (u, 80): no candidate; edge a->u (32) reaches the known (a, 48),
	 * and nothing else: one chain */
	is_int(infer__cid(inf, PROG, U, 80, 4), 0, "missing CID, one edge");
	w = record(t, "main;a;u", &exact, &how);
	ok(w == 4 && exact == 3 && how == CCT_PRECISE,
	   "one chain: main;a;u, precise, every frame certain");

	/* (z, 136): y at 104 unknown, then x->y reaches the known (x, 72) */
	is_int(infer__cid(inf, PROG, Z, 136, 2), 0, "missing CID, two edges");
	w = record(t, "main;w;x;y;z", &exact, &how);
	ok(w == 2 && exact == 5 && how == CCT_PRECISE,
	   "one chain of two edges: main;w;x;y;z, precise");

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

	/* explain: what infer__cid() does, without weight */
	{
		struct infer_outcome o;
		char path[128];

		is_int(infer__explain(inf, PROG, T, 96, &o), 0, "explain (t, 96)");
		ok(o.how == CCT_AMBIGUOUS && o.n == 2 && o.exact == 1 &&
		   fabs(o.sols[0].share + o.sols[1].share - 1) < 1e-9,
		   "explain: ambiguous, two solutions whose shares add up to 1");
		path_of(t, o.sols[o.sols[0].share > o.sols[1].share ? 0 : 1].node,
			path, sizeof(path));
		is_str(path, "main;a;t", "explain: the bigger share is main;a;t's");
		path_of(t, o.sols[o.sols[0].share > o.sols[1].share ? 1 : 0].node,
			path, sizeof(path));
		is_str(path, "main;b;t",
		       "explain: the smaller one is main;b;t, whole");
		is_int(infer__explain(inf, PROG, Z, 136, &o), 0, "explain (z, 136)");
		path_of(t, o.sols[0].node, path, sizeof(path));
		ok(o.how == CCT_PRECISE && o.n == 1 && o.sols[0].share == 1 &&
		   !strcmp(path, "main;w;x;y;z"),
		   "explain: a searched CID's one chain (%s)", path);
		is_int(infer__explain(inf, PROG + 1, S, 40, &o), 0, "explain without a map");
		ok(o.how == CCT_UNKNOWN && o.n == 1, "explain: unknown callers");
	}
	ok(fabs(infer__stats(inf)->samples - 30) < 1e-9, "30 samples attributed");
	ok(fabs(cct__total(t) - 30) < 1e-9, "the CCT holds all 30");
	ok(fabs(infer__stats(inf)->by_how[CCT_PRECISE] - 11) < 1e-9 &&
	   fabs(infer__stats(inf)->by_how[CCT_AMBIGUOUS] - 8) < 1e-9 &&
	   fabs(infer__stats(inf)->by_how[CCT_SEARCHED]) < 1e-9 &&
	   fabs(infer__stats(inf)->by_how[CCT_UNKNOWN] - 11) < 1e-9,
	   "by how: 11 precise, 8 ambiguous, 0 searched, 11 unknown");
	is_int(infer__begin_map(inf, PROG), -22, "a second map for one program refused");
	infer__delete(inf);
	cct__delete(t);
	proven_calls();
	most_probable_first();
	tail_calls();
	indirect_calls();
	observed();
	shapes();
	cut_chains();
	unweighed();
	own_split();
	own_counted();
	fragments();
	no_height();
	infer__delete(NULL);
	return tap_done();
}
