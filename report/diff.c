/*
 * diff.c - a profile against a baseline (report --base): the weights of
 * both profiles' k-contexts (folded keys), and the change of each
 * function's and context's share of all samples, in text, JSON and
 * folded (flamegraph.pl's two-column form).  Shares, not counts: two
 * runs of different lengths compare.  The SVG colours its frames by the
 * same change (svg.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hindex.h"
#include "common/json.h"
#include "report/render.h"

/* ---- the change, row by row ---------------------------------------- */

struct diff_row {
	const char *key;	/* a context, or a function (its leaf) */
	double base, now;	/* shares of all samples, 0..1 */
};

struct diff {
	struct diff_row *rows;
	size_t n, cap;
	struct hindex index;
};

static int cmp_change(const void *a, const void *b)
{
	const struct diff_row *x = a, *y = b;
	double dx = fabs(x->now - x->base), dy = fabs(y->now - y->base);

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* Adds @share to row @key's base (@base) or current share. */
static int add_row(struct diff *d, const char *key, double share, bool base)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h = hindex__string(key);
	uint32_t i;

	while ((i = hindex__next(&d->index, &p, h)) != HINDEX_NONE)
		if (!strcmp(d->rows[i].key, key))
			break;
	if (i == HINDEX_NONE) {
		if (d->n >= UINT32_MAX - 1 ||
		    grow(&d->rows, &d->cap, d->n + 1, sizeof(*d->rows), 256) ||
		    hindex__insert(&d->index, h, (uint32_t)d->n))
			return -ENOMEM;
		i = (uint32_t)d->n++;
		d->rows[i] = (struct diff_row){ key, 0, 0 };
	}
	if (base)
		d->rows[i].base += share;
	else
		d->rows[i].now += share;
	return 0;
}

/* The rows of both profiles, by context (@leaf false) or by leaf
 * function, biggest change first. */
static int rows(struct diff *d, const struct profile_base *now,
		const struct profile_base *base, bool leaf)
{
	for (int side = 0; side < 2; side++) {
		const struct profile_base *b = side ? base : now;

		double total = profile_base__total(b);

		for (size_t i = 0; i < profile_base__size(b); i++) {
			double w;
			const char *key = profile_base__key(b, i, &w), *semi;

			if (leaf && (semi = strrchr(key, ';')))
				key = semi + 1;
			if (add_row(d, key, total > 0 ? w / total : 0, side))
				return -ENOMEM;
		}
	}
	qsort(d->rows, d->n, sizeof(*d->rows), cmp_change);
	return 0;
}

static bool shown(const struct render *r, const struct diff_row *w)
{
	return 100 * (w->base > w->now ? w->base : w->now) >=
	       r->v->min_percent && (w->base > 0 || w->now > 0);
}

/* A context leaf first, as the text forests read: "f <- g <- h". */
static void context_text(FILE *out, const char *key)
{
	const char *end = key + strlen(key), *p = end;

	while (p > key) {
		const char *start = p;

		while (start > key && start[-1] != ';')
			start--;
		fprintf(out, "%s%.*s", p == end ? "" : " <- ", (int)(p - start),
			start);
		p = start > key ? start - 1 : key;
	}
}

static void text_table(const struct render *r, const struct diff *d,
		       const char *what)
{
	fprintf(r->out, "\n%s:\n%8s %8s %8s  %s\n", what, "base%", "now%",
		"change", what[0] == 'f' ? "function" : "context");
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_row *w = &d->rows[i];

		if (!shown(r, w))
			continue;
		fprintf(r->out, "%8.2f %8.2f %+8.2f  ", 100 * w->base,
			100 * w->now, 100 * (w->now - w->base));
		context_text(r->out, w->key);
		fputc('\n', r->out);
	}
}

static void json_rows(const struct render *r, const struct diff *d,
		      bool contexts)
{
	bool first = true;

	fprintf(r->out, ", \"%s\": [", contexts ? "contexts" : "functions");
	for (size_t i = 0; i < d->n; i++) {
		const struct diff_row *w = &d->rows[i];

		if (!shown(r, w))
			continue;
		fputs(first ? "\n  {" : ",\n  {", r->out);
		first = false;
		if (contexts) {	/* frames, outermost first */
			const char *f = w->key;

			fputs("\"frames\": [", r->out);
			for (bool one = true; f; one = false) {
				const char *semi = strchr(f, ';');
				char *name = strndup(f, semi ? (size_t)(semi - f) :
						     strlen(f));

				fputs(one ? "" : ", ", r->out);
				json__string(r->out, name ? name : "");
				free(name);
				f = semi ? semi + 1 : NULL;
			}
			fputs("]", r->out);
		} else {
			fputs("\"function\": ", r->out);
			json__string(r->out, w->key);
		}
		fprintf(r->out, ", \"base_percent\": %.4f, \"percent\": %.4f, "
			"\"change\": %.4f}", 100 * w->base, 100 * w->now,
			100 * (w->now - w->base));
	}
	fputs("\n]", r->out);
}

/* flamegraph.pl's differential input: "stack BASE NOW", the base's
 * weights scaled to the current profile's total. */
static void folded_pairs(const struct render *r, const struct profile_base *now,
			 const struct profile_base *base)
{
	double base_total = profile_base__total(base);
	double scale = base_total > 0 ?
		       profile_base__total(now) / base_total : 0;

	for (int side = 0; side < 2; side++) {
		const struct profile_base *b = side ? base : now;
		const struct profile_base *o = side ? now : base;

		for (size_t i = 0; i < profile_base__size(b); i++) {
			double w, ow;
			const char *key = profile_base__key(b, i, &w);
			bool in_other = profile_base__weight(o, key, &ow);
			double bw = side ? w : ow;
			double nw = side ? 0 : w;

			if (side && in_other)
				continue;	/* written with the profile */
			fprintf(r->out, "%s ", key);
			render__weight(r->out, bw * scale);
			fputc(' ', r->out);
			render__weight(r->out, nw);
			fputc('\n', r->out);
		}
	}
}

int render__diff(const struct render *r)
{
	int err = 0;
	struct profile_base *now = profile_base__of(r->p, r->v->k, &err);
	const struct profile_base *base = r->v->base;
	struct diff fn = { 0 }, ctx = { 0 };

	if (!now)
		goto out;
	if (r->v->fmt == REPORT_FOLDED) {
		folded_pairs(r, now, base);
		goto out;
	}
	if ((err = rows(&fn, now, base, true)) ||
	    (err = rows(&ctx, now, base, false)))
		goto out;
	if (r->v->fmt == REPORT_JSON) {
		fprintf(r->out, "{\"run_id\": %lld, \"samples\": %.3f, "
			"\"base_samples\": %.3f, \"k\": ",
			(long long)r->p->run.id, profile_base__total(now),
			profile_base__total(base));
		if (r->v->k == KCCF_INF)
			fputs("null", r->out);
		else
			fprintf(r->out, "%u", r->v->k);
		json_rows(r, &fn, false);
		json_rows(r, &ctx, true);
		fputs("}\n", r->out);
	} else {
		fprintf(r->out, "run %lld (%.0f %s) against the base "
			"(%.0f %s): shares of the whole in %%, change in "
			"percentage points, biggest first\n",
			(long long)r->p->run.id, profile_base__total(now),
			render__unit(r), profile_base__total(base),
			render__unit(r));
		text_table(r, &fn, "functions (self)");
		if (r->v->k)
			text_table(r, &ctx, "contexts");
	}
out:
	if (err)
		folded__forest_error(err);
	profile_base__delete(now);
	free(fn.rows);
	free(ctx.rows);
	hindex__exit(&fn.index);
	hindex__exit(&ctx.index);
	return err ? -1 : 0;
}
