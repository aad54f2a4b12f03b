/*
 * test_profile.c - profile__load(), the one way a profile is built, on
 * a small store written with SQL (profile_store.h).  The latest run is
 * chosen, an explicit one is kept, a run that is not there is "none", a
 * CID no map explains is left unknown and counted when the budget is
 * spent, a baseline run is built as the profile is, and the functions
 * inlined at a call site come from the store's inlined table when the
 * binary is not there to read.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inference/kccf.h"
#include "profile/folded_keys.h"
#include "profile/profile.h"
#include "schema/store.h"
#include "tests/tap.h"
#include "tests/unit/profile_store.h"

static char dir[] = "/tmp/icppd-profile-XXXXXX";
static char db[PATH_MAX];

/* What folded__keys() gives, summed per key, for one key. */
struct key_weight {
	const char *key;
	double w, total;
	bool unknown;		/* a key with an unknown-callers frame */
};

static int sum_key(void *arg, const char *key, struct folded_group group,
		   double w)
{
	struct key_weight *k = arg;

	(void)group;
	k->total += w;
	if (!strcmp(key, k->key))
		k->w += w;
	if (strstr(key, "unknown"))
		k->unknown = true;
	return 0;
}

static struct key_weight weigh(struct profile *pr, const char *key)
{
	struct key_weight k = { .key = key };

	folded__keys(pr->p.cct, KCCF_INF, sum_key, &k);
	return k;
}

static void test_selection(struct store *st)
{
	struct profile_request r = { .db = db, .budget_s = 10, .check = true,
				     .k = 3 };
	struct profile pr;
	struct key_weight k;

	is_int(profile__load(st, &r, &pr), 0, "latest run: built");
	is_int(pr.p.run.id, 2, "... the latest measurement run is chosen");
	k = weigh(&pr, "main;b;leaf");
	ok(fabs(k.w - 15) < 1e-9, "... main;b;leaf has its 15 samples (%g)",
	   k.w);
	ok(fabs(k.total - 24) < 1e-9, "... every sample is in it (%g)",
	   k.total);
	ok(k.unknown, "... the CID no path takes is under unknown callers");
	profile__exit(&pr);
	ok(pr.p.cct == NULL && pr.lines == NULL, "profile__exit zeroes it");
	profile__exit(&pr);	/* twice is harmless */

	r.sel.run_id = 1;
	is_int(profile__load(st, &r, &pr), 0, "run 1: built");
	k = weigh(&pr, "main;a;leaf");
	ok(pr.p.run.id == 1 && fabs(k.w - 30) < 1e-9,
	   "... main;a;leaf has run 1's 30 samples (%g)", k.w);
	ok(!k.unknown, "... every CID of run 1 is explained");
	profile__exit(&pr);

	r.sel.run_id = 9;
	is_int(profile__load(st, &r, &pr), RUN_PROFILE_NONE,
	       "run 9, not in the store: RUN_PROFILE_NONE");
	profile__exit(&pr);

	r.sel.run_id = 2;
	r.source = PROFILE_TRUTH;
	is_int(profile__load(st, &r, &pr), RUN_PROFILE_NONE,
	       "the truth of a record run (none kept): RUN_PROFILE_NONE");
	profile__exit(&pr);
}

static void test_budget(struct store *st)
{
	struct profile_request r = { .db = db, .sel.run_id = 2,
				     .budget_s = 0 };
	struct profile pr;

	is_int(profile__load(st, &r, &pr), 0, "budget 0: built");
	is_int(pr.p.over_budget_cids, 1,
	       "... the one CID that needs a search is left over the budget");
	ok(fabs(pr.p.over_budget_samples - 4) < 1e-9,
	   "... with its 4 samples (%g)", pr.p.over_budget_samples);
	is_int(pr.p.searches, 0, "... and nothing was searched");
	profile__exit(&pr);

	/* none said: no cap, every CID searched within its own bound */
	r.budget_s = -1;
	is_int(profile__load(st, &r, &pr), 0, "the default budget: built");
	ok(isinf(pr.p.budget_s), "... it is none (%g)", pr.p.budget_s);
	is_int(pr.p.over_budget_cids, 0, "... nothing left over the budget");
	is_int(pr.p.searches, 1, "... the CID was searched");
	profile__exit(&pr);

	r.budget_s = 10;
	is_int(profile__load(st, &r, &pr), 0, "budget 10 s: built");
	is_int(pr.p.over_budget_cids, 0, "... nothing left over the budget");
	is_int(pr.p.searches, 1, "... the CID was searched");
	profile__exit(&pr);
}

static void test_base(struct store *st)
{
	struct profile_request r = { .db = db, .sel.run_id = 2, .budget_s = 10,
				     .check = true, .k = 3, .base = "1",
				     .base_k = KCCF_INF };
	char folded[PATH_MAX];
	struct profile pr;
	double w = 0;
	FILE *f;

	is_int(profile__load(st, &r, &pr), 0, "--base 1: built");
	ok(pr.base && fabs(profile_base__total(pr.base) - 40) < 1e-9,
	   "... the base holds run 1's 40 samples");
	ok(pr.base && profile_base__weight(pr.base, "main;a;leaf", &w) &&
	   fabs(w - 30) < 1e-9, "... main;a;leaf weighs 30 there (%g)", w);
	profile__exit(&pr);

	snprintf(folded, sizeof(folded), "%s/base.folded", dir);
	f = fopen(folded, "w");
	fputs("x;main;a;leaf 7\nmain;b;leaf 2\n", f);
	fclose(f);
	r.base = folded;
	r.base_k = 2;
	is_int(profile__load(st, &r, &pr), 0, "--base FILE: built");
	ok(pr.base && profile_base__weight(pr.base, "main;a;leaf", &w) &&
	   fabs(w - 7) < 1e-9, "... its stacks cut to k = 2 (%g)", w);
	profile__exit(&pr);

	r.base = dir;
	is_int(profile__load(st, &r, &pr), -1, "--base a folder: refused");
	profile__exit(&pr);
}

static void test_inlined(struct store *st)
{
	struct profile_request r = { .db = db, .sel.run_id = 1, .budget_s = 10,
				     .inlined = true, .draw_inlined = true };
	struct profile pr;
	struct key_weight k;

	is_int(profile__load(st, &r, &pr), 0, "inlined frames: built");
	ok(pr.dwarf != NULL && pr.lines != NULL,
	   "... with a line reader and DWARF answers");
	k = weigh(&pr, "main;a;helper (inlined);leaf");
	ok(fabs(k.w - 30) < 1e-9,
	   "... helper, inlined in a at the call of leaf, is a frame of its "
	   "own, from the store's inlined table (%g)", k.w);
	k = weigh(&pr, "main;b;leaf");
	ok(fabs(k.w - 10) < 1e-9, "... nothing inlined at b's call (%g)", k.w);
	profile__exit(&pr);

	r.draw_inlined = false;
	is_int(profile__load(st, &r, &pr), 0, "inlined but not drawn (pprof)");
	k = weigh(&pr, "main;a;leaf");
	ok(pr.dwarf != NULL && fabs(k.w - 30) < 1e-9,
	   "... the CCT keeps its frames, the answers are there (%g)", k.w);
	profile__exit(&pr);
}

int main(void)
{
	struct store *st;

	if (!mkdtemp(dir))
		return 1;
	snprintf(db, sizeof(db), "%s/p.db", dir);
	ok(!profile_store__create(db), "the store is written");
	st = profile__open(db);
	ok(st != NULL, "profile__open opens it");
	if (st) {
		test_selection(st);
		test_budget(st);
		test_base(st);
		test_inlined(st);
	}
	store__close(st);
	ok(profile__open("/nonexistent/icppd.db") == NULL,
	   "profile__open of no file: NULL");
	unlink(db);
	{
		char path[PATH_MAX + 16];

		snprintf(path, sizeof(path), "%s/base.folded", dir);
		unlink(path);
	}
	rmdir(dir);
	return tap_done();
}
