/*
 * sorted.c - a flat table of self weights by command, process, module
 * and function (--sort, as perf report --sort comm,dso,sym): the keys
 * the view asks for, in its order, heaviest first.
 */
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hindex.h"
#include "common/log.h"
#include "report/render.h"

const char *const report_sort_names[] = { "comm", "pid", "dso", "sym", NULL };

/* One line of the table: the frames its keys come from. */
struct sorted_entry {
	int64_t process;	/* the process frame; 0: not a key */
	int64_t module;		/* the leaf's module; 0: not a key */
	int64_t leaf;		/* the leaf frame; 0: not a key */
	double weight;
};

struct sorted {
	struct sorted_entry *e;
	size_t n, cap;
	struct hindex index;
};

static bool wants(const struct report_view *v, enum report_sort key)
{
	for (size_t i = 0; i < v->nsort; i++)
		if (v->sort[i] == key)
			return true;
	return false;
}

static int add(struct sorted *s, const struct sorted_entry *k)
{
	uint64_t h = hindex__mix(hindex__mix(hindex__mix(12,
		(uint64_t)k->process), (uint64_t)k->module), (uint64_t)k->leaf);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&s->index, &p, h)) != HINDEX_NONE)
		if (s->e[i].process == k->process &&
		    s->e[i].module == k->module && s->e[i].leaf == k->leaf) {
			s->e[i].weight += k->weight;
			return 0;
		}
	if (grow(&s->e, &s->cap, s->n + 1, sizeof(*s->e), 256) ||
	    hindex__insert(&s->index, h, (uint32_t)s->n))
		return -ENOMEM;
	s->e[s->n++] = *k;
	return 0;
}

static int heaviest_first(const void *a, const void *b)
{
	const struct sorted_entry *x = a, *y = b;

	return x->weight < y->weight ? 1 : x->weight > y->weight ? -1 : 0;
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void print_key(const struct render *r, enum report_sort key,
		      const struct sorted_entry *e, bool last)
{
	const struct cct_frame *pf = e->process ?
		cct__frame(r->p->cct, e->process) : NULL;
	const struct store_module *m = run_profile__module(r->p, e->module);

	switch (key) {
	case REPORT_SORT_COMM:
		fprintf(r->out, "%-15s", pf ? pf->name : "?");
		break;
	case REPORT_SORT_PID:
		fprintf(r->out, "%7lld", pf ? (long long)pf->pid : 0LL);
		break;
	case REPORT_SORT_DSO:
		fprintf(r->out, last ? "%s" : "%-24s",
			m ? basename_of(m->path) : "[unknown]");
		break;
	default:
		fprintf(r->out, "%s", cct__name(r->p->cct, e->leaf));
		break;
	}
}

static void print_table(const struct render *r, const struct sorted *s)
{
	const struct report_view *v = r->v;
	/* the columns' widths, as print_key() writes them */
	static const int widths[] = { -15, 7, -24, 0 };

	render__header(r);
	fprintf(r->out, "self weights by");
	for (size_t i = 0; i < v->nsort; i++)
		fprintf(r->out, "%s%s", i ? ", " : " ",
			report_sort_names[v->sort[i]]);
	fprintf(r->out, "; lines under %g%% of all samples hidden\n\n",
		v->min_percent);
	fprintf(r->out, "%11s %7s", render__unit(r), "%total");
	for (size_t i = 0; i < v->nsort; i++) {
		fprintf(r->out, " %*s", i + 1 < v->nsort ? widths[v->sort[i]] : 0,
			report_sort_names[v->sort[i]]);
	}
	fputc('\n', r->out);
	for (size_t i = 0; i < s->n; i++) {
		const struct sorted_entry *e = &s->e[i];

		if (r->total <= 0 || 100 * e->weight / r->total < v->min_percent)
			continue;
		render__count(r, e->weight);
		for (size_t j = 0; j < v->nsort; j++) {
			print_key(r, v->sort[j], e, j + 1 == v->nsort);
			fputc(j + 1 == v->nsort ? '\n' : ' ', r->out);
		}
	}
}

int render__sorted(const struct render *r)
{
	struct cct *t = r->p->cct;
	bool proc = wants(r->v, REPORT_SORT_COMM) ||
		    wants(r->v, REPORT_SORT_PID);
	bool dso = wants(r->v, REPORT_SORT_DSO);
	bool sym = wants(r->v, REPORT_SORT_SYM);
	struct sorted s = { 0 };
	const struct cct_record *recs;
	size_t n;
	int ret = 0;

	recs = cct__records(t, &n);
	for (size_t i = 0; i < n && !ret; i++) {
		int64_t leaf = cct__node(t, recs[i].node)->frame;
		const struct cct_frame *f = cct__frame(t, leaf);
		struct sorted_entry k = {
			proc ? cct__process_of(t, recs[i].node) : 0,
			dso && f ? f->module_id : 0, sym ? leaf : 0,
			recs[i].weight };

		if (recs[i].weight > 0)
			ret = add(&s, &k);
	}
	if (!ret) {
		qsort(s.e, s.n, sizeof(*s.e), heaviest_first);
		print_table(r, &s);
	} else {
		log_error("out of memory");
	}
	free(s.e);
	hindex__exit(&s.index);
	return ret ? -1 : 0;
}
