/*
 * test_pathmap.c - the path map in memory (nodes, counts, bounds) and in
 * the database: merging training runs, and scoring a validation run's
 * true paths into the four outcomes.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/module.h"
#include "collector/aggregate.h"
#include "common/path.h"
#include "inference/known.h"
#include "inference/pathmap.h"
#include "schema/store.h"
#include "schema/validation.h"
#include "tests/tap.h"
#include "tests/unit/dbquery.h"

/* Frames of one path, outermost first: (function, pc, height). */
#define F(fn, pc, h) { mod, fn, NULL, pc, h }

static const struct module *mod;

static void test_memory(void)
{
	struct pathmap *pm = pathmap__new(7);
	struct path_frame ab[] = { F(0x10, 0x15, 16), F(0x20, 0x25, 48) };
	struct path_frame ac[] = { F(0x10, 0x17, 16), F(0x20, 0x25, 48) };
	struct path_frame abd[] = { F(0x10, 0x15, 16), F(0x20, 0x29, 48),
				    F(0x30, 0x31, 96) };
	uint32_t leaf1, leaf2;

	is_int(pathmap__add(pm, mod, ab, 2, &leaf1), 0, "first path added");
	is_int(pathmap__size(pm), 3, "root + two frames");
	is_int(pathmap__add(pm, mod, ab, 2, &leaf2), 0, "same path again");
	is_int(leaf2, leaf1, "same path, same leaf node");
	is_int(pathmap__node(pm, leaf1)->self, 2, "leaf self counts both");
	is_int(pathmap__add(pm, mod, ac, 2, &leaf2), 0, "other call site");
	ok(leaf2 != leaf1, "another call site in the caller is another context");
	is_int(pathmap__node(pm, leaf2)->call_site, 0x17, "call site is the caller's pc");
	is_int(pathmap__add(pm, mod, abd, 3, &leaf2), 0, "a longer path");
	is_int(pathmap__node(pm, leaf2)->depth, 3, "depth 3");
	is_int(pathmap__node(pm, 1)->total, 4, "outermost frame: total of all paths");
	is_int(pathmap__node(pm, 1)->self, 0, "outermost frame: never the leaf");
	is_int(pathmap__node(pm, leaf2)->parent, leaf1,
	       "a path through another's leaf shares that node");
	is_int(pathmap__node(pm, leaf1)->total, 3, "the shared node: total 3, self 2");
	is_int(pathmap__add(pm, mod, ab, 0, NULL), -EINVAL, "empty path refused");
	{
		struct path_frame deep[] = { F(0x10, 0x15, 16), F(0x40, 0x41, 32),
					     F(0x41, 0x42, 64), F(0x42, 0x43, 80) };
		size_t before = pathmap__node(pm, 1)->total;

		is_int(pathmap__add(pm, mod, deep, 4, NULL), -ENOSPC,
		       "map at max_nodes: -ENOSPC");
		is_int(pathmap__node(pm, 1)->total, before, "a refused path counts nowhere");
	}
	pathmap__clear_counts(pm);
	is_int(pathmap__node(pm, leaf1)->self, 0, "counts cleared");
	pathmap__delete(pm);
	pathmap__delete(NULL);
}

/* The nodes a flush visits: those counted since the last clear, in
 * creation order, across the bitmap's words; none after a clear, and a
 * node counted again is back. */
static void test_counted(void)
{
	struct pathmap *pm = pathmap__new(1000);
	struct path_frame f[2] = { F(0x10, 0x15, 16), F(0x20, 0, 48) };
	uint32_t leaf[200], got[400], n = 0;
	bool in_order = true;

	for (int i = 0; i < 200; i++) {	/* root, 0x10, then a leaf each */
		f[1].height = 48 + 16 * i;
		pathmap__add(pm, mod, f, 2, &leaf[i]);
	}
	for (uint32_t i = pathmap__next_counted(pm, 0); i != PM_NONE && n < 400;
	     i = pathmap__next_counted(pm, i + 1))
		got[n++] = i;
	is_int(n, pathmap__size(pm), "every node made by a sample is counted");
	for (uint32_t i = 0; i < n; i++)
		in_order = in_order && got[i] == i;
	ok(in_order, "... in creation order");
	pathmap__clear_counts(pm);
	is_int(pathmap__next_counted(pm, 0), PM_NONE, "none after a clear");
	f[1].height = 48 + 16 * 130;	/* a leaf in the third word */
	pathmap__add(pm, mod, f, 2, NULL);
	n = 0;
	for (uint32_t i = pathmap__next_counted(pm, 0); i != PM_NONE && n < 400;
	     i = pathmap__next_counted(pm, i + 1))
		got[n++] = i;
	ok(n == 3 && got[0] == 0 && got[1] == 1 && got[2] == leaf[130],
	   "a path counted again: its root, outer frame and leaf alone (%u nodes)",
	   n);
	is_int(pathmap__node(pm, leaf[130])->total, 1, "... its count since the clear");
	is_int(pathmap__next_counted(pm, (uint32_t)pathmap__size(pm)), PM_NONE,
	       "past the last node: none");
	pathmap__delete(pm);
}

/* With no height, a CID is explained by the map only while one path
 * reaches it (see record's known_cid). */
/*
 * Paths that share outer frames, each added after the others in many
 * orders, and as fragments between them: a path ends at the node it got
 * when first added, whatever was added just before it (add() checks the
 * last path's nodes before searching the index).
 */
static void test_after_another(void)
{
	/* a height, a call site or a function apart at the second frame
	 * or below, and one frame longer */
	const struct path_frame paths[][4] = {
		{ F(0x10, 0x15, 16), F(0x20, 0x25, 48), F(0x30, 0x35, 96),
		  F(0x40, 0x45, 128) },
		{ F(0x10, 0x15, 16), F(0x20, 0x25, 48), F(0x30, 0x35, 112),
		  F(0x40, 0x45, 144) },
		{ F(0x10, 0x15, 16), F(0x20, 0x27, 48), F(0x30, 0x35, 96),
		  F(0x40, 0x45, 128) },
		{ F(0x10, 0x15, 16), F(0x21, 0x25, 48), F(0x30, 0x35, 96),
		  F(0x40, 0x45, 128) },
	};
	static const size_t len[] = { 4, 4, 3, 4 };
	struct pathmap *pm = pathmap__new(1000);
	uint32_t want[4], fwant[4], got;
	size_t wrong = 0, tries = 0, size;

	for (int i = 0; i < 4; i++) {
		pathmap__add(pm, mod, paths[i], len[i], &want[i]);
		pathmap__add_fragment(pm, mod, paths[i], len[i], &fwant[i]);
	}
	size = pathmap__size(pm);
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 4; j++) {
				int k = (i + j * (round + 1)) % 4;

				pathmap__add(pm, mod, paths[k], len[k], &got);
				wrong += got != want[k];
				if (round == 1) {
					pathmap__add_fragment(pm, mod, paths[j],
							      len[j], &got);
					wrong += got != fwant[j];
					tries++;
				}
				tries++;
			}
	is_int(wrong, 0, "each of %zu paths, added after others, ends at its "
	       "own leaf", tries);
	is_int(pathmap__size(pm), size, "... and makes no node the map lacks");
	is_int(size, 2 * (1 + 4 + 2 + 1 + 3), "the map: twice (paths and "
	       "fragments) a root, the first path, the second's last two "
	       "frames, the third's last, the fourth's last three");
	pathmap__delete(pm);
}

/* pathmap__cid_paths()'s two answers, one at a time. */
static bool one_path(struct pathmap *pm, uint64_t func, int64_t height)
{
	bool s;

	return pathmap__cid_paths(pm, mod, func, height, &s) == 1;
}

static bool settled(struct pathmap *pm, uint64_t func, int64_t height)
{
	bool s;

	pathmap__cid_paths(pm, mod, func, height, &s);
	return s;
}

static void test_one_path(void)
{
	struct pathmap *pm = pathmap__new(100);
	struct path_frame a[] = { F(0x10, 0x15, ICPPD_HEIGHT_NONE),
				  F(0x50, 0x55, ICPPD_HEIGHT_NONE) };
	struct path_frame b[] = { F(0x20, 0x25, ICPPD_HEIGHT_NONE),
				  F(0x50, 0x55, ICPPD_HEIGHT_NONE) };

	ok(!one_path(pm, 0x50, ICPPD_HEIGHT_NONE), "no path: not one");
	pathmap__add(pm, mod, a, 2, NULL);
	pathmap__add(pm, mod, a, 2, NULL);
	ok(one_path(pm, 0x50, ICPPD_HEIGHT_NONE),
	   "one path, seen twice: one");
	pathmap__add(pm, mod, b, 2, NULL);
	ok(!one_path(pm, 0x50, ICPPD_HEIGHT_NONE),
	   "a second caller: not one");
	ok(pathmap__has_cid(pm, mod, 0x50, ICPPD_HEIGHT_NONE), "though the CID is there");
	ok(one_path(pm, 0x10, ICPPD_HEIGHT_NONE), "the callers: one each");
	pathmap__delete(pm);
}

/*
 * What settles a CID: main(16) -> a(48) learned by one sample leaves
 * a's CID (and main's) seen once, not settled; a second sample through
 * them, a clear of the counts between (a flush), settles both; a CID
 * two paths reach is settled however few samples each had (its
 * samples are split by their counts); a CID no whole path reaches
 * (none, or a fragment's frame) has nothing to settle.
 */
static void test_settled(void)
{
	struct pathmap *pm = pathmap__new(100);
	struct path_frame a[] = { F(0x10, 0x15, 16), F(0x30, 0x35, 48) };
	struct path_frame b[] = { F(0x20, 0x25, 16), F(0x30, 0x35, 48) };
	struct path_frame frag[] = { F(0x40, 0x45, 64), F(0x60, 0x65, 80) };

	ok(settled(pm, 0x30, 48), "no path: nothing to settle");
	pathmap__add(pm, mod, a, 2, NULL);
	ok(!settled(pm, 0x30, 48), "one sample: a not settled");
	ok(!settled(pm, 0x10, 16), "nor its caller");
	pathmap__clear_counts(pm);
	pathmap__add(pm, mod, a, 2, NULL);
	ok(settled(pm, 0x30, 48),
	   "a second sample after a clear: settled");
	ok(settled(pm, 0x10, 16), "its caller too");
	pathmap__add(pm, mod, b, 2, NULL);
	ok(!settled(pm, 0x20, 16), "b's caller, seen once");
	ok(settled(pm, 0x30, 48),
	   "a CID two paths reach, one of them seen once: settled");
	pathmap__add_fragment(pm, mod, frag, 2, NULL);
	ok(settled(pm, 0x60, 80),
	   "a fragment's frame: nothing to settle");
	pathmap__delete(pm);
}

/*
 * A fragment through a frame one whole path reaches, its frames above it
 * the path's: that path with the fragment's frames below the frame.
 * main(16) -> a(48) -> b(96) is learned whole; fragments start at a or
 * b.  The innermost such frame is taken; call sites count; a CID two
 * paths reach, or another program's path, is no ground; the nodes made
 * so are composed, and explain their CIDs once a whole path reaches them.
 */
static void test_through(void)
{
	struct pathmap *pm = pathmap__new(100);
	struct module *other = module__open("/proc/self/exe");
	struct path_frame whole[] = { F(0x10, 0x15, 16), F(0x20, 0x25, 48),
				      F(0x30, 0x35, 96) };
	/* b's frame and two below it, c and d */
	struct path_frame under_b[] = { F(0x30, 0x37, 96), F(0x40, 0x45, 128),
					F(0x50, 0x51, 160) };
	/* main -> a -> b -> c -> d, all whole */
	struct path_frame to_d[] = { F(0x10, 0x15, 16), F(0x20, 0x25, 48),
				     F(0x30, 0x37, 96), F(0x40, 0x45, 128),
				     F(0x50, 0x51, 160) };
	/* a -> b -> e: both a and b agree, b the innermost */
	struct path_frame a_b_e[] = { F(0x20, 0x25, 48), F(0x30, 0x38, 96),
				      F(0x60, 0x61, 112) };
	/* a calling b from another site: b's path disagrees, and a's own
	 * frame does not (a fragment's top has no call site) */
	struct path_frame a_b2[] = { F(0x20, 0x26, 48), F(0x30, 0x39, 96),
				     F(0x70, 0x71, 144) };
	struct path_frame lone[] = { F(0x80, 0x81, 200), F(0x90, 0x91, 232) };
	struct path_frame second[] = { F(0x11, 0x19, 16), F(0x20, 0x25, 48),
				       F(0x30, 0x35, 96) };
	struct path_frame from_b[] = { F(0x30, 0x3a, 96), F(0xa0, 0xa1, 150) };
	size_t before;
	uint32_t leaf, d;

	pathmap__add(pm, mod, whole, 3, NULL);
	before = pathmap__size(pm);
	is_int(pathmap__add_through(pm, mod, under_b, 3, &d), 0,
	       "a fragment from b's frame joins main -> a -> b");
	is_int(pathmap__size(pm), before + 2, "its two frames below b are new nodes");
	is_int(pathmap__node(pm, d)->depth, 5, "the leaf five frames down");
	ok(!pathmap__node(pm, d)->fragment && pathmap__node(pm, d)->composed,
	   "a composed node, not a fragment's");
	ok(!pathmap__has_cid(pm, mod, 0x50, 160), "which explains no CID");
	is_int(pathmap__node(pm, d)->call_site, 0x45, "its call site, the copy's");
	is_int(pathmap__node(pm, pathmap__node(pm, d)->parent)->call_site, 0x37,
	       "b's pc in the copy, the call site below it");
	is_int(pathmap__node(pm, 1)->total, 2, "main's total counts it");
	is_int(pathmap__node(pm, d)->self, 1, "the leaf's self");

	before = pathmap__size(pm);
	is_int(pathmap__add_through(pm, mod, a_b_e, 3, &leaf), 0,
	       "a -> b -> e joins at b, the innermost agreeing frame");
	is_int(pathmap__size(pm), before + 1, "e alone is new");
	is_int(pathmap__node(pm, leaf)->depth, 4, "under b, four down");
	before = pathmap__size(pm);
	is_int(pathmap__add_through(pm, mod, under_b, 3, &leaf), 0,
	       "b -> c -> d again: joins at b (c and d are composed)");
	ok(pathmap__size(pm) == before && leaf == d && pathmap__node(pm, d)->self == 2,
	   "no node new, d's self 2");
	pathmap__add(pm, mod, to_d, 5, NULL);
	ok(!pathmap__node(pm, d)->composed && pathmap__has_cid(pm, mod, 0x50, 160) &&
	   pathmap__has_cid(pm, mod, 0x40, 128),
	   "a whole path through c and d: they explain their CIDs");

	before = pathmap__size(pm);
	is_int(pathmap__add_through(pm, mod, a_b2, 3, NULL), 0,
	       "another call site of a: joined at a (the top agrees)");
	is_int(pathmap__size(pm), before + 2, "b at that site and its callee new");
	is_int(pathmap__add_through(pm, mod, lone, 2, NULL), -ENOENT,
	       "no frame any path reaches: not added");
	is_int(pathmap__add_through(pm, other, under_b, 3, NULL), -ENOENT,
	       "another program's path is no ground");
	/* b reached at the same height from a second main: ambiguous */
	pathmap__add(pm, mod, second, 3, NULL);
	is_int(pathmap__add_through(pm, mod, from_b, 2, NULL), -ENOENT,
	       "b's CID, two whole paths: no ground");
	before = pathmap__size(pm);
	is_int(pathmap__add_through(pm, mod, under_b, 3, &leaf), 0,
	       "b -> c -> d: joins at d, one whole path's, though b has two");
	ok(pathmap__size(pm) == before && leaf == d, "at d itself");
	module__delete(other);
	pathmap__delete(pm);
}

/*
 * Training learns via_a->target and via_b->target at the same height
 * (ambiguous), main->solo (precise).  The truth has those, plus
 * via_c->target at the same height (incorrect) and main->fresh
 * (missing).
 */
static void test_store(void)
{
	char db[] = "/tmp/icppd-pathmap-XXXXXX", err[512];
	int fd = mkstemp(db);
	struct store *st;
	struct pathmap *train = pathmap__new(1000), *truth = pathmap__new(1000);
	struct path_frame a[] = { F(0x100, 0x1, 8), F(0x200, 0x105, 64), F(0x500, 0x201, 128) };
	struct path_frame b[] = { F(0x100, 0x2, 8), F(0x300, 0x105, 64), F(0x500, 0x301, 128) };
	struct path_frame c[] = { F(0x100, 0x3, 8), F(0x400, 0x105, 64), F(0x500, 0x401, 128) };
	struct path_frame solo[] = { F(0x100, 0x4, 8), F(0x600, 0x601, 40) };
	struct path_frame fresh[] = { F(0x100, 0x5, 8), F(0x700, 0x701, 40) };
	struct store_batch batch = { 0 };
	struct run_info ri = { "train", "t", 0, "cpu-clock", "cpu-clock", 0, 0, 1000 };
	int64_t run;
	char other[64];

	close(fd);
	unlink(db);
	st = store__open(db, err, sizeof(err));
	ok(st != NULL, "store opens");
	is_int(store__training(st, module__path(mod), module__build_id(mod),
			       other, sizeof(other)), STORE_UNTRAINED,
	       "nothing trained yet");
	store__begin_run(st, &ri, &run);
	for (int i = 0; i < 3; i++)
		pathmap__add(train, mod, a, 3, NULL);
	pathmap__add(train, mod, b, 3, NULL);
	pathmap__add(train, mod, solo, 2, NULL);
	batch.paths = train;
	is_int(store__flush(st, run, &batch), 0, "training flush");
	is_int(pathmap__node(train, 1)->total, 0, "flushed counts cleared");
	pathmap__add(train, mod, a, 3, NULL);
	is_int(store__flush(st, run, &batch), 0, "second flush");
	is_int(query(db, "SELECT count(*) FROM path_nodes"), 6, "6 nodes: no duplicates across flushes");
	is_int(query(db, "SELECT sum(self) FROM path_nodes"), 6, "6 training samples");
	{
		/* Another map through the same store (perhaps at the freed
		 * one's address): the store's ids are per map, never reused. */
		struct pathmap *again = pathmap__new(1000);
		struct store_batch b2 = { .paths = again };

		ok(pathmap__serial(again) != pathmap__serial(train),
		   "every map has its own serial");
		pathmap__add(again, mod, b, 3, NULL);
		is_int(store__flush(st, run, &b2), 0, "flush of another map");
		is_int(query(db, "SELECT count(*) FROM path_nodes"), 6,
		       "its nodes merge into the same rows");
		is_int(query(db, "SELECT sum(self) FROM path_nodes"), 7,
		       "and add its sample");
		b2.paths = pathmap__new(1000);
		is_int(store__flush(st, run, &b2), 0, "an empty map flushes");
		pathmap__delete(b2.paths);
		pathmap__delete(again);
	}
	is_int(query(db, "SELECT ambiguous_cids FROM v_path_maps"), 1, "one ambiguous CID");
	is_int(query(db, "SELECT paths FROM v_path_cids WHERE height = 128"), 2,
	       "target at 128: two candidate paths");
	is_int(store__training(st, module__path(mod), module__build_id(mod),
			       other, sizeof(other)), STORE_TRAINED, "trained now");
	is_int(store__training(st, module__path(mod), "0123", other,
			       sizeof(other)), STORE_OTHER_BUILD,
	       "another build at the same path");
	is_str(other, module__build_id(mod), "names the trained build-id");

	/* A second store on the same file merges into the same map. */
	store__close(st);
	st = store__open(db, err, sizeof(err));
	pathmap__add(train, mod, b, 3, NULL);
	is_int(store__flush(st, run, &batch), 0, "flush after reopening");
	is_int(query(db, "SELECT count(*) FROM path_maps"), 1, "still one map");
	is_int(query(db, "SELECT count(*) FROM path_nodes"), 6, "still 6 nodes");

	ri.kind = "validate";
	store__begin_run(st, &ri, &run);
	for (int i = 0; i < 4; i++)
		pathmap__add(truth, mod, a, 3, NULL);
	pathmap__add(truth, mod, c, 3, NULL);
	pathmap__add(truth, mod, c, 3, NULL);
	for (int i = 0; i < 3; i++)
		pathmap__add(truth, mod, solo, 2, NULL);
	pathmap__add(truth, mod, fresh, 2, NULL);
	batch = (struct store_batch){ .paths = truth, .truth = true };
	is_int(store__flush(st, run, &batch), 0, "truth flush");
	is_int(store__score(st, run), 0, "scoring");
	is_int(query(db, "SELECT samples FROM v_validation WHERE outcome = 'ambiguous'"), 4,
	       "trained path among two candidates: ambiguous");
	is_int(query(db, "SELECT candidates FROM v_validation WHERE outcome = 'ambiguous'"), 2,
	       "degree of ambiguity 2");
	is_int(query(db, "SELECT samples FROM v_validation WHERE outcome = 'incorrect'"), 2,
	       "untrained path at a trained CID: incorrect");
	is_int(query(db, "SELECT samples FROM v_validation WHERE outcome = 'precise'"), 3,
	       "one candidate, the truth: precise");
	is_int(query(db, "SELECT samples FROM v_validation WHERE outcome = 'missing'"), 1,
	       "no candidate: missing");
	is_int(query(db, "SELECT candidates FROM v_validation WHERE outcome = 'missing'"), 0,
	       "missing has 0 candidates");
	is_int(query(db, "SELECT round(precise * 10) FROM v_validation_summary"), 3,
	       "summary: 3 of 10 precise");
	is_int(store__score(st, run), 0, "scoring again");
	is_int(query(db, "SELECT sum(samples) FROM v_validation"), 10, "scoring twice does not double");
	store__close(st);
	pathmap__delete(train);
	pathmap__delete(truth);
	unlink(db);
}

/* The checks every written map passes: each row's parent is there and
 * written before it, each row's context is its own function under its
 * parent's context, and no two contexts are one. */
static void check_rows(const char *db, const char *what)
{
	is_int(query(db, "SELECT count(*) FROM path_nodes n LEFT JOIN"
		     " path_nodes p ON p.id = n.parent_id WHERE n.parent_id"
		     " != 0 AND (p.id IS NULL OR p.id >= n.id OR"
		     " p.depth != n.depth - 1 OR p.map_id != n.map_id)"), 0,
	       "%s: every row's parent is there, written before it", what);
	is_int(query(db, "SELECT count(*) FROM path_nodes n JOIN contexts c"
		     " ON c.id = n.context_id LEFT JOIN path_nodes p ON"
		     " p.id = n.parent_id WHERE c.function_id != n.function_id"
		     " OR c.parent_id != COALESCE(p.context_id, 0)"), 0,
	       "%s: every row's context is its function under its parent's",
	       what);
	is_int(query(db, "SELECT count(*) FROM path_nodes n LEFT JOIN"
		     " contexts c ON c.id = n.context_id WHERE c.id IS NULL"),
	       0, "%s: no row without its context", what);
	is_int(query(db, "SELECT count(*) FROM (SELECT 1 FROM contexts"
		     " GROUP BY parent_id, function_id HAVING count(*) > 1)"),
	       0, "%s: no context twice", what);
}

/* Paths @from to @from + @n of a wide tree: 0x100 calls 0x50, which
 * calls one function from each of its call sites (0x2000 from the
 * first two), which calls 0x900. */
static void add_wide(struct pathmap *pm, const struct module *prog, int n,
		     int from)
{
	for (int i = from; i < from + n; i++) {
		uint64_t fn = i < 2 ? 0x2000 : 0x2000 + 16 * (uint64_t)i;
		struct path_frame p[] = { F(0x100, 0x1, 8),
					  F(0x50, 0x101 + (uint64_t)i, 16),
					  F(fn, fn + 5, 64),
					  F(0x900, 0x905, 128) };

		pathmap__add(pm, prog, p, 4, NULL);
	}
}

/*
 * The nodes of a flush go in by depth, many rows an INSERT: a depth
 * wider than a batch, a chain deeper than one, a second run meeting the
 * rows the first wrote (their counts added, no row twice), another
 * program sharing the contexts, and tables whose ids are used up.
 */
static void test_batches(void)
{
	char db[] = "/tmp/icppd-batch-XXXXXX", err[512];
	int fd = mkstemp(db);
	struct module *other = module__open("/bin/sh");
	struct pathmap *pm = pathmap__new(100000);
	struct path_frame chain[300];
	struct path_frame site[] = { F(0x100, 0x1, 8), F(0x50, 0x777, 16),
				     F(0x2000, 0x2005, 64),
				     F(0x900, 0x905, 128) };
	struct store_batch batch = { .paths = pm };
	struct run_info ri = { "train", "t", 0, "cpu-clock", "cpu-clock", 0, 0,
			       1000 };
	struct store *st;
	int64_t run;

	close(fd);
	unlink(db);
	st = store__open(db, err, sizeof(err));
	store__begin_run(st, &ri, &run);
	add_wide(pm, mod, 100, 0);
	for (int i = 0; i < 300; i++)
		chain[i] = (struct path_frame)F(0x3000 + 16 * (uint64_t)i,
						0x3005 + 16 * (uint64_t)i,
						8 * (i + 1));
	pathmap__add(pm, mod, chain, 300, NULL);
	is_int(store__flush(st, run, &batch), 0, "a wide and deep map flushes");
	/* wide: 1 + 1 + 100 + 100, chain 300 */
	is_int(query(db, "SELECT count(*) FROM path_nodes"), 502,
	       "502 rows");
	is_int(query(db, "SELECT count(*) FROM contexts"), 500,
	       "500 contexts: one function at two call sites is one");
	is_int(query(db, "SELECT sum(self) FROM path_nodes"), 101,
	       "101 samples");
	is_int(query(db, "SELECT max(depth) FROM path_nodes"), 300,
	       "the chain 300 deep");
	check_rows(db, "first flush");

	/* the next flush: the chain again, new and old siblings, and a
	 * new call site of a function whose contexts the last flush wrote */
	pathmap__add(pm, mod, chain, 300, NULL);
	add_wide(pm, mod, 40, 90);
	pathmap__add(pm, mod, site, 4, NULL);
	is_int(store__flush(st, run, &batch), 0, "the next flush");
	is_int(query(db, "SELECT count(*) FROM path_nodes"), 564,
	       "31 paths of 2 new rows");
	is_int(query(db, "SELECT count(*) FROM contexts"), 560,
	       "the new call site's contexts were there");
	is_int(query(db, "SELECT sum(self) FROM path_nodes"), 143,
	       "42 samples more");
	check_rows(db, "next flush");

	/* another run: a new map in memory, whose rows are mostly there */
	store__close(st);
	pathmap__delete(pm);
	pm = pathmap__new(100000);
	batch.paths = pm;
	st = store__open(db, err, sizeof(err));
	store__begin_run(st, &ri, &run);
	add_wide(pm, mod, 200, 0);
	pathmap__add(pm, mod, chain, 250, NULL);
	is_int(store__flush(st, run, &batch), 0, "a second run flushes");
	is_int(query(db, "SELECT count(*) FROM path_nodes"), 704,
	       "70 paths of 2 new rows");
	is_int(query(db, "SELECT sum(self) FROM path_nodes"), 344,
	       "201 samples more");
	is_int(query(db, "SELECT total FROM path_nodes WHERE depth = 1 AND"
		     " function_id = (SELECT id FROM functions WHERE address ="
		     " 256)"), 341, "the shared outermost frame counts all");
	check_rows(db, "second run");

	/* another program: its own map, the same contexts */
	ok(other != NULL, "/bin/sh as another program");
	add_wide(pm, other, 5, 0);
	is_int(store__flush(st, run, &batch), 0, "another program flushes");
	is_int(query(db, "SELECT count(*) FROM path_maps"), 2, "two maps");
	is_int(query(db, "SELECT count(*) FROM contexts"), 700,
	       "its contexts were there");
	is_int(query(db, "SELECT count(*) FROM path_nodes n JOIN path_maps"
		     " pm ON pm.id = n.map_id JOIN modules m ON m.id ="
		     " pm.program_id WHERE m.path = '/bin/sh'"), 12,
	       "its 12 rows");
	check_rows(db, "another program");
	store__close(st);

	/* a batch whose new row follows one that was there: SQLite gives
	 * the new one the id the old one was to have, and its count goes
	 * in once */
	pathmap__delete(pm);
	pm = pathmap__new(100000);
	batch.paths = pm;
	st = store__open(db, err, sizeof(err));
	store__begin_run(st, &ri, &run);
	pathmap__add(pm, mod, site, 1, NULL);
	pathmap__add(pm, mod, &(struct path_frame)F(0x7000, 0x7001, 8), 1,
		     NULL);
	is_int(store__flush(st, run, &batch), 0, "a third run flushes");
	is_int(query(db, "SELECT total FROM path_nodes WHERE function_id ="
		     " (SELECT id FROM functions WHERE address = 28672)"), 1,
	       "a new row after one that was there: its sample once");
	is_int(query(db, "SELECT total FROM path_nodes WHERE depth = 1 AND"
		     " function_id = (SELECT id FROM functions WHERE address ="
		     " 256)"), 342, "... and the old one's added");
	check_rows(db, "third run");
	store__close(st);

	/* ids used up: SQLite picks them, one row at a time */
	query(db, "INSERT INTO contexts VALUES (9223372036854775800, -5, 1)");
	query(db, "INSERT INTO path_nodes VALUES (9223372036854775800,"
	      " 1, -5, 1, 9223372036854775800, 0, 0, 1, 0, 0)");
	pathmap__delete(pm);
	pm = pathmap__new(100000);
	batch.paths = pm;
	st = store__open(db, err, sizeof(err));
	store__begin_run(st, &ri, &run);
	add_wide(pm, mod, 30, 300);
	is_int(store__flush(st, run, &batch), 0,
	       "ids near 2^63: the flush goes on");
	is_int(query(db, "SELECT count(*) FROM path_nodes WHERE parent_id"
		     " != -5"), 777, "30 paths of 2 new rows");
	is_int(query(db, "SELECT count(*) FROM path_nodes n LEFT JOIN"
		     " path_nodes p ON p.id = n.parent_id WHERE n.parent_id"
		     " > 0 AND p.id IS NULL"), 0, "every row's parent there");
	is_int(query(db, "SELECT count(*) FROM path_nodes n JOIN contexts c"
		     " ON c.id = n.context_id WHERE c.function_id !="
		     " n.function_id"), 0, "each row's context its function");
	store__close(st);
	pathmap__delete(pm);
	module__delete(other);
	unlink(db);
}

/* Temporary files SQLite opened (statement journals spilled past 64 KiB,
 * temporary tables, sorters), through countingvfs. */
static int temp_opens;
static sqlite3_vfs *real_vfs;

static int counting_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f,
			 int flags, int *out)
{
	(void)vfs;
	if (flags & (SQLITE_OPEN_SUBJOURNAL | SQLITE_OPEN_TEMP_JOURNAL |
		     SQLITE_OPEN_TEMP_DB | SQLITE_OPEN_TRANSIENT_DB))
		temp_opens++;
	return real_vfs->xOpen(real_vfs, name, f, flags, out);
}

/* Makes the default VFS one that counts temporary files, in front of
 * the one that was. */
static void count_temp_files(void)
{
	static sqlite3_vfs counting;

	real_vfs = sqlite3_vfs_find(NULL);
	counting = *real_vfs;
	counting.zName = "countingvfs";
	counting.xOpen = counting_open;
	sqlite3_vfs_register(&counting, 1);
}

/* A new database at @db (a mkstemp() template, filled in) with one run
 * of @kind, its id in *@run. */
static struct store *new_run(char *db, const char *kind, int64_t *run)
{
	struct run_info ri = { kind, "t", 0, "cpu-clock", "cpu-clock", 0, 0,
			       1000 };
	char err[512];
	int fd = mkstemp(db);
	struct store *st;

	close(fd);
	unlink(db);
	st = store__open(db, err, sizeof(err));
	store__begin_run(st, &ri, run);
	return st;
}

/*
 * A flush of 30,000 new nodes writes every row (a hundred of the 32-row
 * statements at each depth), and a second one the counts of nodes whose
 * rows lie pages apart, without a statement journal: a multi-row
 * statement that could abort half-way (NOT NULL, an upsert's DO UPDATE)
 * keeps one, which spilled 42 MB to /var/tmp over a clang++ record.
 */
static void test_wide(void)
{
	char db[] = "/tmp/icppd-wide-XXXXXX";
	struct pathmap *pm = pathmap__new(100000);
	struct store_batch batch = { .paths = pm };
	int64_t run;
	struct store *st = new_run(db, "train", &run);

	add_wide(pm, mod, 15000, 0);
	temp_opens = 0;
	is_int(store__flush(st, run, &batch), 0, "30,000 nodes flush");
	is_int(query(db, "SELECT count(*) FROM path_nodes"), 30002,
	       "... all of them");
	check_rows(db, "a wide flush");
	for (int i = 0; i < 15000; i += 300)	/* rows pages apart */
		add_wide(pm, mod, 1, i);
	add_wide(pm, mod, 15000, 15000);
	is_int(store__flush(st, run, &batch), 0,
	       "a second flush: 50 paths' counts again, 15,000 new paths");
	is_int(query(db, "SELECT count(*) FROM path_nodes"), 60002,
	       "... all of them");
	is_int(query(db, "SELECT sum(self) FROM path_nodes"), 30050,
	       "... and every count");
	is_int(query(db, "SELECT count(*) FROM run_learned"), 30000,
	       "a row of samples unwound whole for each leaf");
	is_int(query(db, "SELECT sum(samples) FROM run_learned"), 30050,
	       "... those of the first flush's leaves added to");
	is_int(temp_opens, 0, "no temporary file: no statement journal");
	store__close(st);
	pathmap__delete(pm);
	unlink(db);
}

/*
 * A flush's learned samples (run_learned) where a node the flush writes
 * meets a row another node of it wrote (two modules of one build: one
 * map row), their rows drained apart, and where the next flush adds to
 * rows the first wrote: every sample once, none lost or twice.
 */
static void test_learned_rows(void)
{
	char db[] = "/tmp/icppd-learned-XXXXXX";
	struct module *twin = module__open("/proc/self/exe");
	struct pathmap *pm = pathmap__new(100000);
	struct store_batch batch = { .paths = pm };
	int64_t run;
	struct store *st = new_run(db, "record", &run);

	for (int round = 0; round < 2; round++) {
		add_wide(pm, mod, 100, 0);	/* 100 leaves: drains apart */
		add_wide(pm, twin, 100, 0);
		add_wide(pm, mod, 50, 1000 + 50 * round);
		is_int(store__flush(st, run, &batch), 0, "twins' paths flush");
		pathmap__clear_counts(pm);
	}
	is_int(query(db, "SELECT count(*) FROM path_nodes"), 2 + 2 * 200,
	       "two modules of one build: one row a node");
	is_int(query(db, "SELECT sum(self) FROM path_nodes"), 500,
	       "... every sample counted once");
	is_int(query(db, "SELECT sum(samples) FROM run_learned"), 500,
	       "... and once as learned, both flushes");
	is_int(query(db, "SELECT count(*) FROM run_learned"), 200,
	       "... a learned row a leaf");
	is_int(query(db, "SELECT count(*) FROM path_nodes n JOIN run_learned l"
		     " ON l.node_id = n.id WHERE l.samples != n.self"), 0,
	       "... each the samples of its node");
	store__close(st);
	pathmap__delete(pm);
	module__delete(twin);
	unlink(db);
}

/* Adds a sample of CID (@m, 0x1000, height 16 * (@i + 1)) at offset @i
 * to @a. */
static void add_sample(struct aggregate *a, const struct module *m, int i)
{
	struct cid_key k = { m, 0x1000, 16 * (i + 1), 7, 7, m };

	aggregate__add_cid(a, &k, "f", false);
	aggregate__add_pc(a, &k, "f", 0x1000 + (uint64_t)i);
}

/*
 * A run's samples by CID and by instruction over two flushes, the
 * second's rows among the first's, pages apart, and new ones: added up
 * without a statement journal (a batch of upserts keeps one: store.c's
 * write_samples()), and two modules of one build one row.
 */
static void test_wide_samples(void)
{
	char db[] = "/tmp/icppd-samples-XXXXXX";
	struct module *twin = module__open("/proc/self/exe");
	struct aggregate *a = aggregate__new(100000);
	struct store_batch batch = { .agg = a };
	char err[512];
	int64_t run;
	struct store *st = new_run(db, "record", &run);

	for (int i = 0; i < 20000; i++)
		add_sample(a, mod, i);
	temp_opens = 0;
	is_int(store__flush(st, run, &batch), 0,
	       "20,000 CIDs and instructions flush");
	aggregate__clear(a);
	for (int i = 0; i < 20000; i += 500)	/* rows pages apart */
		add_sample(a, mod, i);
	for (int i = 20000; i < 21000; i++)
		add_sample(a, mod, i);
	add_sample(a, twin, 0);
	is_int(store__flush(st, run, &batch), 0,
	       "a second flush: 40 of them again, 1,000 new, one twice");
	is_int(query(db, "SELECT count(*) * 100000 + sum(samples) FROM"
		     " cid_samples"), 2100000000 + 21041,
	       "21,000 CIDs, every sample counted");
	is_int(query(db, "SELECT count(*) * 100000 + sum(samples) FROM"
		     " pc_samples"), 2100000000 + 21041,
	       "21,000 instructions, every sample counted");
	is_int(query(db, "SELECT samples FROM cid_samples WHERE height = 16"),
	       3, "a CID's samples from both flushes and both modules");
	is_int(query(db, "SELECT samples FROM pc_samples WHERE offset = 0"),
	       3, "... and its instruction's");
	is_int(temp_opens, 0, "no temporary file: no statement journal");
	/* A row of the run that this store did not write: the flush that
	 * meets it as new fails, its counts kept, and the next one
	 * upserts every row. */
	query(db, "INSERT INTO cid_samples SELECT run_id, pid, tid,"
	      " program_id, function_id, 16 * 30001, 5, 0 FROM cid_samples"
	      " LIMIT 1");
	aggregate__clear(a);
	add_sample(a, mod, 30000);
	is_int(store__flush(st, run, &batch), -1,
	       "a row the store did not write: the flush fails");
	ok(strstr(store__error(st), "1 of 1 new rows of cid_samples were"
		  " there already") != NULL, "... saying so (%s)",
	   store__error(st));
	is_int(store__flush(st, run, &batch), 0, "... and the next one writes");
	is_int(query(db, "SELECT samples FROM cid_samples WHERE height ="
		     " 16 * 30001"), 6, "... its sample added to the row");
	is_int(query(db, "SELECT samples FROM pc_samples WHERE offset ="
		     " 30000"), 1, "... and its instruction's once");
	store__close(st);
	/* The run again from another store: it finds the run's rows and
	 * adds to them. */
	st = store__open(db, err, sizeof(err));
	is_int(store__flush(st, run, &batch), 0, "another store flushes the run");
	is_int(query(db, "SELECT count(*) * 100 + sum(samples) FROM cid_samples"
		     " WHERE height = 16 * 30001"), 107, "... adding to its rows");
	store__close(st);
	aggregate__delete(a);
	module__delete(twin);
	unlink(db);
}

static bool top_is(void *arg, const struct pm_node *top)
{
	return top->func == *(const uint64_t *)arg;
}

/* The keys of the CIDs a map explains, for the records after it: a
 * whole path's nodes always, a fragment's where its top is explained. */
static void test_known(void)
{
	struct pathmap *pm = pathmap__new(100);
	struct known_set *k = known__new(), *k2 = known__new();
	struct module *sh = module__open("/bin/sh");
	struct path_frame ab[] = { F(0x10, 0x15, 16), F(0x20, 0x25, 48) };
	struct path_frame frag[] = { F(0x40, 0x45, 200), F(0x50, 0x55, 240) };
	struct known_key *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t none = 0, top = 0x40;
	int full = 0;

	ok(pm && k && k2 && sh, "map, sets and a second module");
	pathmap__add(pm, mod, ab, 2, NULL);
	pathmap__add_fragment(pm, mod, frag, 2, NULL);
	is_int(known__collect(k, pm, 0, top_is, &none, &v, &n, &cap), 0,
	       "collected");
	is_int(n, 2, "an unexplained top: the whole path's two frames");
	ok(v[0].prog == mod && v[1].key == known__key(k, mod, mod, 0x20, 48),
	   "each with its program, in the map's order");
	is_int(known__collect(k, pm, 0, top_is, &top, &v, &n, &cap), 0,
	       "collected again, the top explained");
	is_int(n, 2 + 4, "and the fragment's two");
	is_int(known__sort(v, n), 4, "sorted, each key once");
	n = 0;
	is_int(known__collect(k, pm, pathmap__size(pm), top_is, &top, &v, &n,
			      &cap), 0, "from the end");
	is_int(n, 0, "nothing new");
	{	/* a frame under the fragment, collected on its own: its top
		 * found above the nodes collected before */
		struct path_frame deeper[] = { frag[0], frag[1],
					       F(0x60, 0x65, 280) };
		size_t before = pathmap__size(pm);

		pathmap__add_fragment(pm, mod, deeper, 3, NULL);
		is_int(known__collect(k, pm, before, top_is, &none, &v, &n,
				      &cap), 0, "a new frame collected");
		is_int(n, 0, "under an unexplained top: none");
		is_int(known__collect(k, pm, before, top_is, &top, &v, &n,
				      &cap), 0, "again");
		ok(n == 1 && v[0].key == known__key(k, mod, mod, 0x60, 280),
		   "under an explained one: its own key");
		n = 0;
	}
	ok(known__key(k, mod, mod, 0x20, 48) == known__key(k2, mod, mod, 0x20, 48),
	   "a key is the same in another set");
	ok(known__key(k, mod, mod, 0x20, 48) != known__key(k, mod, mod, 0x20, 56) &&
	   known__key(k, mod, mod, 0x20, 48) != known__key(k, mod, mod, 0x28, 48) &&
	   known__key(k, mod, mod, 0x20, 48) != known__key(k, sh, mod, 0x20, 48),
	   "and differs with the height, the function and the program");
	ok(!known__has(k, 5) && !known__add(k, 5) && known__has(k, 5) &&
	   known__count(k) == 1, "a key added is there");
	known__add(k, known__key(k, mod, mod, 0x20, 48));
	is_int(known__collect(k, pm, 0, top_is, &none, &v, &n, &cap), 0,
	       "collected with one key in the set");
	is_int(n, 1, "a key the set holds is not collected again");
	ok(!known__read(k, mod) && !known__mark_read(k, mod) &&
	   known__read(k, mod) && !known__read(k, sh), "a program marked read");
	known__forget_modules(k);
	ok(known__read(k, mod), "and still after its module is forgotten");
	/* keys alike in their low 32 bits, as a crafted row could hold:
	 * their slots are mixed with the set's seed, not those bits */
	for (uint64_t i = 1; i <= 65536 && !full; i++)
		full = known__add(k, i << 32);
	ok(!full && known__has(k, (uint64_t)65536 << 32) &&
	   !known__has(k, (uint64_t)65537 << 32),
	   "65,536 keys alike in their low bits added and found");
	for (uint64_t i = 1; i < KNOWN_MAX && !full; i++)
		full = known__add(k2, i);
	is_int(full, 0, "KNOWN_MAX - 1 keys fit");
	is_int(known__add(k2, KNOWN_MAX + 7), 0, "and one more");
	is_int(known__add(k2, KNOWN_MAX + 8), -ENOSPC, "not two");
	ok(known__has(k2, KNOWN_MAX + 7), "the set as it was");
	free(v);
	known__delete(k);
	known__delete(k2);
	module__delete(sh);
	pathmap__delete(pm);
}

int main(void)
{
	struct module *m = module__open("/proc/self/exe");

	mod = m;
	count_temp_files();
	ok(m && !module__error(m), "test binary opens as a module");
	test_memory();
	test_counted();
	test_after_another();
	test_one_path();
	test_settled();
	test_through();
	test_store();
	test_batches();
	test_wide();
	test_learned_rows();
	test_wide_samples();
	test_known();
	module__delete(m);
	return tap_done();
}
