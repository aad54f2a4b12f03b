/*
 * folded_keys.c - a profile's k-contexts as folded keys
 * ("frame;frame;frame", outermost first), the keys of folded output,
 * of a baseline (base.c), of compare and of validation's scores; and
 * reading a folded line back.
 *
 * Every reader of folded stacks (flamegraph.pl, speedscope, inferno)
 * splits a line's frames at ';' and has no escape for one: a name that
 * holds one (a symbol any local user can write) would be two frames.
 * So a ';' in a name is written as the printable form of the byte,
 * "\x3b" (common/printable.h writes every unsafe byte so), in keys only:
 * every other format keeps the name as it is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hindex.h"
#include "common/log.h"
#include "inference/kccf.h"
#include "profile/folded_keys.h"

typedef int (*stack_fn)(void *arg, const int64_t *frames, size_t n,
			struct folded_group group, double weight);

/* The group of a stack's weight (@frames outermost first): its leaf's
 * CID, of one process when processes are apart, so that rounding keeps
 * a CID's samples whole, and a process's. */
static struct folded_group stack_group(const struct cct *t,
				       const int64_t *frames, size_t n)
{
	int64_t proc = cct__kind(t, frames[0]) == CCT_PROCESS ? frames[0] : 0;

	return (struct folded_group){
		proc ? (int64_t)hindex__mix((uint64_t)frames[n - 1],
					    (uint64_t)proc) :
		       frames[n - 1], proc };
}

/*
 * The whole stacks (k = KCCF_INF): one per CCT node with records, its
 * path from the root.  Its k-context forest has a chain per distinct
 * path, and a node's own weight is the records' of the CCT node with
 * that path; building it walked every record to the root and sorted
 * the forest (0.27 s of the 0.59 s of a folded report of a 10 kHz g++
 * record).  The same stacks, in the CCT's order; the walks bounded as
 * the forest's are (KCCF_MAX_STEPS).
 */
static int whole_stacks(struct cct *t, stack_fn fn, void *arg)
{
	size_t nrecs, n = cct__size(t), cap = 0;
	const struct cct_record *recs = cct__records(t, &nrecs);
	double *own = calloc(n ? n : 1, sizeof(*own));
	int64_t *frames = NULL;
	uint64_t steps = 0;
	int ret = 0;

	if (!own)
		return -ENOMEM;
	for (size_t i = 0; i < nrecs; i++)
		if (recs[i].node < n)
			own[recs[i].node] += recs[i].weight;
	for (uint32_t i = 1; i < n && !ret; i++) {
		size_t depth = 0;

		if (own[i] <= 1e-9)
			continue;
		for (uint32_t x = i; x != CCT_ROOT && !ret;
		     x = cct__node(t, x)->parent, depth++)
			if (++steps > KCCF_MAX_STEPS)
				ret = -E2BIG;
			else if (grow(&frames, &cap, depth + 1,
				      sizeof(*frames), 64))
				ret = -ENOMEM;
			else
				frames[depth] = cct__node(t, x)->frame;
		if (ret)
			break;
		for (size_t a = 0, b = depth - 1; a < b; a++, b--) {
			int64_t f = frames[a];

			frames[a] = frames[b];
			frames[b] = f;
		}
		ret = fn(arg, frames, depth, stack_group(t, frames, depth),
			 own[i]);
	}
	free(frames);
	free(own);
	return ret;
}

int folded__stacks(struct cct *t, uint32_t k, stack_fn fn, void *arg)
{
	int64_t *frames = NULL;
	size_t cap = 0;
	struct kccf *f;
	int ret;

	if (k == KCCF_INF)
		return whole_stacks(t, fn, arg);
	f = kccf__build(t, k, false, &ret);
	if (!f)
		return ret;
	ret = 0;
	for (uint32_t i = 0; i < kccf__size(f) && !ret; i++) {
		const struct kccf_node *n = kccf__node(f, i);
		double self = n->weight;
		size_t depth = 0;

		for (uint32_t c = n->first_child; c != KCCF_NONE;
		     c = kccf__node(f, c)->next_sibling)
			self -= kccf__node(f, c)->weight;
		if (self <= 1e-9)
			continue;
		/* a forest's root is the leaf function and its children its
		 * callers: node i is the outermost frame, its parents lead in
		 * to the leaf */
		for (uint32_t j = i; j != KCCF_NONE && !ret;
		     j = kccf__node(f, j)->parent, depth++)
			if (grow(&frames, &cap, depth + 1, sizeof(*frames), 64))
				ret = -ENOMEM;
			else
				frames[depth] = kccf__node(f, j)->frame;
		if (ret)
			break;
		ret = fn(arg, frames, depth, stack_group(t, frames, depth),
			 self);
	}
	free(frames);
	kccf__delete(f);
	return ret;
}

/* folded__keys()'s frames into a key. */
struct keyed {
	struct cct *t;
	int (*fn)(void *arg, const char *key, struct folded_group group,
		  double weight);
	void *arg;
	char *buf;
	size_t cap;
};

static int to_key(void *arg, const int64_t *frames, size_t n,
		  struct folded_group group, double weight)
{
	struct keyed *k = arg;
	size_t len = 0;

	if (grow(&k->buf, &k->cap, 1, 1, 256))
		return -ENOMEM;
	k->buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *name = cct__root_name(k->t, frames[i]);
		size_t l = strlen(name);

		/* each ';' of a name written as FOLDED_SEMICOLON: 4 bytes */
		if (l > (SIZE_MAX - len - 2) / 4 ||
		    grow(&k->buf, &k->cap, len + 4 * l + 2, 1, 256))
			return -ENOMEM;
		for (const char *c = name; *c; c++)
			if (*c == ';') {
				memcpy(k->buf + len, FOLDED_SEMICOLON, 4);
				len += 4;
			} else {
				k->buf[len++] = *c;
			}
		k->buf[len++] = i + 1 < n ? ';' : '\0';
	}
	return k->fn(k->arg, k->buf, group, weight);
}

int folded__keys(struct cct *t, uint32_t k,
		 int (*fn)(void *arg, const char *key,
			   struct folded_group group, double weight),
		 void *arg)
{
	struct keyed kd = { t, fn, arg, NULL, 0 };
	int ret = folded__stacks(t, k, to_key, &kd);

	free(kd.buf);
	return ret;
}

void folded__unescape(char *frame)
{
	char *w = frame;

	for (const char *r = frame; *r;)
		if (!strncmp(r, FOLDED_SEMICOLON, 4)) {
			*w++ = ';';
			r += 4;
		} else {
			*w++ = *r++;
		}
	*w = '\0';
}

const char *folded__cut(const char *key, uint32_t k)
{
	const char *p = key + strlen(key);
	uint32_t frames = 0;

	if (k == KCCF_INF)
		return key;
	while (p > key) {
		if (p[-1] == ';' && ++frames == k + 1)
			return p;
		p--;
	}
	return key;
}

int folded__line(char *line, double *w)
{
	size_t len = strlen(line);
	char *sp, *end;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		line[--len] = '\0';
	if (!len)
		return FOLDED_BLANK;
	sp = strrchr(line, ' ');
	if (!sp || sp == line)
		return -1;
	*w = strtod(sp + 1, &end);
	if (end == sp + 1 || *end || !(*w >= 0) || isinf(*w))
		return -1;
	*sp = '\0';
	return 0;
}

void folded__forest_error(int err)
{
	if (err == -E2BIG)
		log_error("report: the contexts of this profile take more than "
			  "%llu frames to build or %zu to hold (paths that deep, "
			  "or --inclusive over deep paths): use a smaller --k",
			  (unsigned long long)KCCF_MAX_STEPS, KCCF_MAX_NODES);
	else
		log_error("out of memory");
}
