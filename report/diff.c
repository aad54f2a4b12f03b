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
#include "common/printable.h"
#include "report/render.h"

struct report_base {
	char **keys;
	double *w;
	size_t n, cap, wcap;
	struct hindex index;
	double total;
};

/* Where @key is in @b, or HINDEX_NONE. */
static uint32_t find(const struct report_base *b, const char *key)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h = hindex__string(key);
	uint32_t i;

	while ((i = hindex__next(&b->index, &p, h)) != HINDEX_NONE)
		if (!strcmp(b->keys[i], key))
			return i;
	return HINDEX_NONE;
}

static int add(struct report_base *b, const char *key, double w)
{
	uint32_t i = find(b, key);

	b->total += w;
	if (i != HINDEX_NONE) {
		b->w[i] += w;
		return 0;
	}
	if (b->n >= UINT32_MAX - 1 ||
	    grow(&b->keys, &b->cap, b->n + 1, sizeof(*b->keys), 256) ||
	    grow(&b->w, &b->wcap, b->n + 1, sizeof(*b->w), 256) ||
	    hindex__insert(&b->index, hindex__string(key), (uint32_t)b->n) ||
	    !(b->keys[b->n] = strdup(key)))
		return -ENOMEM;
	b->w[b->n++] = w;
	return 0;
}

static int add_context(void *arg, const char *key, int64_t group, double w)
{
	(void)group;
	return add(arg, key, w);
}

struct report_base *report__base_of(const struct run_profile *p, uint32_t k,
				    int *err)
{
	struct report_base *b = calloc(1, sizeof(*b));

	*err = b ? 0 : -ENOMEM;
	if (b)		/* its keys are k-contexts already */
		*err = report__folded(p->cct, k, add_context, b);
	if (*err) {
		report__base_free(b);
		return NULL;
	}
	return b;
}

struct report_base *report__base_read(FILE *in, uint32_t k, int *err,
				      size_t *bad_line)
{
	struct report_base *b = calloc(1, sizeof(*b));
	char *line = NULL;
	size_t cap = 0, no = 0;

	*err = b ? 0 : -ENOMEM;
	*bad_line = 0;
	while (!*err && getline(&line, &cap, in) > 0) {
		double w;
		int r = report__folded_line(line, &w);

		no++;
		if (r < 0) {
			*err = -EINVAL;
			*bad_line = no;
		} else if (!r) {
			/* whole stacks: cut to k-contexts, and printable as
			 * the database's names are (a baseline file is
			 * anyone's to write: no escape sequence from it
			 * reaches a terminal, no invalid UTF-8 the JSON) */
			char *key = printable__dup(report__cut_key(line, k));

			*err = key ? add(b, key, w) : -ENOMEM;
			free(key);
		}
	}
	free(line);
	if (!*err && ferror(in))
		*err = -EIO;
	if (*err) {
		report__base_free(b);
		return NULL;
	}
	return b;
}

void report__base_free(struct report_base *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++)
		free(b->keys[i]);
	free(b->keys);
	free(b->w);
	hindex__free(&b->index);
	free(b);
}

double report__base_total(const struct report_base *b)
{
	return b->total;
}

size_t report__base_size(const struct report_base *b)
{
	return b->n;
}

const char *report__base_key(const struct report_base *b, size_t i,
			     double *w)
{
	*w = b->w[i];
	return b->keys[i];
}

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
static int rows(struct diff *d, const struct report_base *now,
		const struct report_base *base, bool leaf)
{
	for (int side = 0; side < 2; side++) {
		const struct report_base *b = side ? base : now;

		for (size_t i = 0; i < b->n; i++) {
			const char *key = b->keys[i], *semi;

			if (leaf && (semi = strrchr(key, ';')))
				key = semi + 1;
			if (add_row(d, key, b->total > 0 ? b->w[i] / b->total : 0,
				    side))
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
static void folded_pairs(const struct render *r, const struct report_base *now,
			 const struct report_base *base)
{
	double scale = base->total > 0 ? now->total / base->total : 0;

	for (int side = 0; side < 2; side++) {
		const struct report_base *b = side ? base : now;
		const struct report_base *o = side ? now : base;

		for (size_t i = 0; i < b->n; i++) {
			uint32_t j = find(o, b->keys[i]);
			double bw = side ? b->w[i] : (j == HINDEX_NONE ? 0 : o->w[j]);
			double nw = side ? 0 : b->w[i];

			if (side && j != HINDEX_NONE)
				continue;	/* written with the profile */
			fprintf(r->out, "%s ", b->keys[i]);
			report__weight(r->out, bw * scale);
			fputc(' ', r->out);
			report__weight(r->out, nw);
			fputc('\n', r->out);
		}
	}
}

int render__diff(const struct render *r)
{
	int err = 0;
	struct report_base *now = report__base_of(r->p, r->v->k, &err);
	const struct report_base *base = r->v->base;
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
			(long long)r->p->run.id, now->total, base->total);
		if (r->v->k == KCCF_INF)
			fputs("null", r->out);
		else
			fprintf(r->out, "%u", r->v->k);
		json_rows(r, &fn, false);
		json_rows(r, &ctx, true);
		fputs("}\n", r->out);
	} else {
		fprintf(r->out, "run %lld (%.0f samples) against the base "
			"(%.0f samples): shares of all samples in %%, change in "
			"percentage points, biggest first\n",
			(long long)r->p->run.id, now->total, base->total);
		text_table(r, &fn, "functions (self)");
		if (r->v->k)
			text_table(r, &ctx, "contexts");
	}
out:
	if (err)
		report__forest_error(err);
	report__base_free(now);
	free(fn.rows);
	free(ctx.rows);
	hindex__free(&fn.index);
	hindex__free(&ctx.index);
	return err ? -1 : 0;
}
