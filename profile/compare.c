/*
 * compare.c - how alike two profiles are (compare.h): each side loaded
 * as its k-contexts (a run through profile__load(), a validation run's
 * true paths, or a folded file), a command's first frame dropped where
 * only one side has it, then scored by inference/metrics.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/lines.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/sys.h"
#include "inference/kccf.h"
#include "profile/compare.h"
#include "profile/folded_keys.h"
#include "profile/profile.h"
#include "schema/store.h"

/* One side's k-contexts and their weights. */
struct compare_side {
	struct flat_entry *e;
	size_t n, cap;
	uint32_t k;		/* keys are cut to k-contexts as they come */
	bool file;		/* a folded file: read whole, cut later */
};

static int add_entry(void *arg, const char *key, double weight)
{
	struct compare_side *l = arg;

	key = folded__cut(key, l->file ? KCCF_INF : l->k);
	for (size_t i = l->n; i-- > 0 && i + 64 >= l->n;)	/* recent dups */
		if (!strcmp(l->e[i].key, key)) {
			l->e[i].weight += weight;
			return 0;
		}
	if (grow(&l->e, &l->cap, l->n + 1, sizeof(*l->e), 256))
		return -ENOMEM;
	l->e[l->n].key = strdup(key);
	if (!l->e[l->n].key)
		return -ENOMEM;
	l->e[l->n++].weight = weight;
	return 0;
}

/* Cuts every key of @l to its last @k + 1 frames. */
static void cut_keys(struct compare_side *l, uint32_t k)
{
	for (size_t i = 0; i < l->n; i++) {
		const char *t = folded__cut(l->e[i].key, k);

		memmove(l->e[i].key, t, strlen(t) + 1);
	}
}

/* @key's frame @i (0: the outermost), as [*@f, *@f + return). */
static size_t frame_at(const char *key, unsigned i, const char **f)
{
	for (; i && (key = strchr(key, ';')); i--)
		key++;
	*f = key;
	return key && !i ? strcspn(key, ";") : 0;
}

/* Whether some key of @l starts with the frame [@f, @f + @len). */
static bool is_root(const struct compare_side *l, const char *f, size_t len)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strncmp(l->e[i].key, f, len) &&
		    (l->e[i].key[len] == ';' || !l->e[i].key[len]))
			return true;
	return false;
}

/*
 * stackcollapse-perf.pl starts every stack with the command's name
 * (icppd report --comm-frame too).  When under 10 % of folded file @a's
 * weight starts at an outermost frame of @b but over half of it does one
 * frame further in, @a has such a first frame and @b has not: it is
 * dropped, with a note, and the two compare frame for frame.
 */
static void strip_comm_frames(struct compare_side *a,
			      const struct compare_side *b, const char *name)
{
	double total = 0, first = 0, second = 0;
	const char *f;
	size_t len;

	if (!a->file)
		return;
	/* the heaviest keys decide; a sample of 256 keeps this linear */
	for (size_t i = 0; i < a->n; i += a->n / 256 + 1) {
		total += a->e[i].weight;
		if ((len = frame_at(a->e[i].key, 0, &f)) && is_root(b, f, len))
			first += a->e[i].weight;
		if ((len = frame_at(a->e[i].key, 1, &f)) && is_root(b, f, len))
			second += a->e[i].weight;
	}
	if (!(total > 0 && first < 0.1 * total && second > 0.5 * total))
		return;
	for (size_t i = 0; i < a->n; i++) {
		char *sc = strchr(a->e[i].key, ';');

		if (sc)
			memmove(a->e[i].key, sc + 1, strlen(sc + 1) + 1);
	}
	log_warn("compare: %s starts each stack with a command's name (as "
		 "stackcollapse-perf.pl writes it): compared without that "
		 "first frame", name);
}

/* folded__keys()'s contexts into a list. */
static int add_context(void *arg, const char *key,
		       struct folded_group group, double weight)
{
	(void)group;
	return add_entry(arg, key, weight);
}

static int read_folded(const char *path, struct compare_side *l)
{
	FILE *f = sys__fopen(path);
	char *line = NULL;
	size_t cap = 0;
	unsigned long no = 0;
	double total = 0;
	int ret = 0;

	if (!f) {
		log_error("cannot read %s: %s (expected a run id, truth:ID or "
			  "a folded file)", path, strerror(errno));
		return -1;
	}
	l->file = true;		/* whole keys: a first frame may go */
	while (!ret && getline(&line, &cap, f) >= 0) {
		double w;
		int got;

		no++;
		got = folded__line(line, &w);
		if (got == FOLDED_BLANK)
			continue;
		if (got < 0) {
			log_error("%s:%lu: expected 'frame;...;frame WEIGHT', "
				  "WEIGHT a finite number >= 0", path, no);
			ret = -1;
		} else if (!isfinite(total += w)) {
			log_error("%s:%lu: the weights add up to more than a "
				  "double holds", path, no);
			ret = -1;
		} else if (add_entry(l, line, w)) {
			log_error("out of memory");
			ret = -1;
		}
	}
	free(line);
	fclose(f);
	return ret;
}

/* Whether @arg names a validation run's true paths. */
static bool is_truth(const char *arg)
{
	return !strncmp(arg, "truth:", 6);
}

/* Loads operand @arg into @l: a run as a report shows it (its inlined
 * frames drawn when @lines reads DWARF), a validation run's true paths
 * (truth:ID), or a folded file. */
static int load(struct store **st, const char *db, const char *arg,
		struct compare_side *l, struct lines *lines)
{
	struct profile p;
	bool truth = is_truth(arg);
	const char *num = truth ? arg + 6 : arg;
	struct profile_request r = { .db = db, .budget_s = -1,
		.source = truth ? PROFILE_TRUTH : PROFILE_INFERRED,
		.flags = RUN_PROFILE_STATIC | RUN_PROFILE_DEBUGINFO |
			 RUN_PROFILE_DEBUGINFOD | (lines ? RUN_PROFILE_PCS : 0),
		.inlined = lines != NULL, .draw_inlined = true,
		.shared_lines = lines };
	char *end;
	long long id;
	int ret;

	errno = 0;
	id = strtoll(num, &end, 10);
	if (errno || end == num || *end || id <= 0) {
		if (truth) {
			log_error("%s: expected truth:RUN_ID", arg);
			return -1;
		}
		return read_folded(arg, l);
	}
	if (!*st && !(*st = profile__open(db)))
		return -1;
	r.sel.run_id = id;
	ret = profile__load(*st, &r, &p);
	if (ret == RUN_PROFILE_NONE && truth)
		log_error("run %lld has no true paths: only icppd validate "
			  "records them", id);
	if (!ret && (ret = folded__keys(p.p.cct, l->k, add_context, l)))
		folded__forest_error(ret);
	profile__exit(&p);
	return ret ? -1 : 0;
}

int compare__contexts(struct cct *t, uint32_t k, struct flat_entry **v,
		      size_t *n)
{
	struct compare_side s = { .k = k };
	int ret = folded__keys(t, k, add_context, &s);

	if (ret) {
		compare__free_contexts(s.e, s.n);
		s.e = NULL;
		s.n = 0;
	} else {
		metrics__merge(s.e, &s.n);
	}
	*v = s.e;
	*n = s.n;
	return ret;
}

void compare__free_contexts(struct flat_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].key);
	free(v);
}

static void free_side(struct compare_side *l)
{
	compare__free_contexts(l->e, l->n);
}

int compare__profiles(const struct compare_request *q,
		      struct compare_scores *out)
{
	struct compare_side a = { .k = q->k }, b = { .k = q->k };
	struct store *st = NULL;
	struct lines *lines = NULL;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	/* truth paths are physical: frames as validation scores them */
	if (!q->no_inline && !is_truth(q->a) && !is_truth(q->b) &&
	    !(lines = lines__new()))
		return -1;
	if (load(&st, q->db, q->a, &a, lines) ||
	    load(&st, q->db, q->b, &b, lines))
		goto out;
	strip_comm_frames(&a, &b, q->a);
	strip_comm_frames(&b, &a, q->b);
	cut_keys(&a, q->k);
	cut_keys(&b, q->k);
	metrics__merge(a.e, &a.n);
	metrics__merge(b.e, &b.n);
	metrics__compare(a.e, a.n, b.e, b.n, q->threshold, &out->r);
	out->contexts_a = a.n;
	out->contexts_b = b.n;
	ret = 0;
out:
	free_side(&a);
	free_side(&b);
	lines__delete(lines);
	store__close(st);
	return ret;
}
