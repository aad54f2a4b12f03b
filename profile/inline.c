/*
 * inline.c - the functions inlined in a profile's frames, drawn as
 * frames of their own (profile__inline()).
 *
 * A CID names a physical function: what was inlined in it is known only
 * from the pcs.  A caller's pc is the call site the tree keeps for each
 * callee (the heaviest one seen), so a callee moves below the functions
 * inlined at its call.  A leaf's pcs are its function's sampled
 * instructions (pc_samples), kept per function, not per context: each
 * leaf record is split among the inline chains of its function's pcs
 * in proportion to their samples, as pprof's locations split them.
 * That is exact for a function sampled in one context, and an
 * apportioning otherwise; perf, which has each sample's pc, splits
 * each context by its own.
 * The chains come from profile_dwarf (dwarf.c): the store's, or the
 * DWARF's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binary/demangle.h"
#include "binary/lines.h"
#include "common/grow.h"
#include "common/hindex.h"
#include "profile/dwarf.h"
#include "schema/report_store.h"

/* An inline chain: frame ids (of the new tree), outermost first, in
 * ids[start ..]; chain 0 is empty. */
struct chain {
	uint32_t start, n;
};

/* A function's leaf split: chains and their samples, in parts[start ..]. */
struct split {
	int64_t function;
	uint32_t start, n;
	int64_t total;
};

struct part {
	uint32_t chain;
	int64_t samples;
};

struct inliner {
	struct run_profile *p;
	struct profile_dwarf *d;
	struct cct *dst;
	/* chains by (module, address) */
	struct site {
		int64_t module;
		uint64_t vaddr;
		uint32_t chain;
	} *sites;
	size_t nsites, sites_cap;
	struct hindex site_index;
	struct chain *chains;
	size_t nchains, chains_cap;
	int64_t *ids;
	size_t nids, ids_cap;
	struct split *splits;
	size_t nsplits, splits_cap;
	struct hindex split_index;
	struct part *parts;
	size_t nparts, parts_cap;
};

/* The chain of the functions inlined at @vaddr of function frame @f:
 * its index (0: none), or UINT32_MAX when out of memory. */
static uint32_t chain_at(struct inliner *in, const struct cct_frame *f,
			 uint64_t vaddr)
{
	uint64_t h = hindex__mix(hindex__mix(14, (uint64_t)f->module_id),
				 vaddr);
	struct hindex_probe pr = { HINDEX_NONE, 0 };
	const struct lines_frame *fr;
	uint32_t i, c = 0;
	int n;

	while ((i = hindex__next(&in->site_index, &pr, h)) != HINDEX_NONE)
		if (in->sites[i].module == f->module_id &&
		    in->sites[i].vaddr == vaddr)
			return in->sites[i].chain;
	n = profile_dwarf__at(in->d, f->module_id, vaddr, &fr);
	if (n < 0)
		return UINT32_MAX;
	if (n > 1) {
		if (grow(&in->chains, &in->chains_cap, in->nchains + 1,
			 sizeof(*in->chains), 64) ||
		    grow(&in->ids, &in->ids_cap, in->nids + (size_t)n,
			 sizeof(*in->ids), 256))
			return UINT32_MAX;
		c = (uint32_t)in->nchains++;
		in->chains[c] = (struct chain){ (uint32_t)in->nids,
						(uint32_t)n - 1 };
		for (int j = n - 2; j >= 0; j--) {	/* outermost first */
			char buf[1024];
			const char *name = in->p->mangled ? fr[j].name :
				demangle__name(fr[j].name, buf, sizeof(buf));
			int64_t id = cct__inlined(in->dst, f->module_id, name);

			if (!id)
				return UINT32_MAX;
			in->ids[in->nids++] = id;
		}
	}
	if (grow(&in->sites, &in->sites_cap, in->nsites + 1,
		 sizeof(*in->sites), 256) ||
	    hindex__insert(&in->site_index, h, (uint32_t)in->nsites))
		return UINT32_MAX;
	in->sites[in->nsites++] = (struct site){ f->module_id, vaddr, c };
	return c;
}

/* Function frame @f's leaf split (n 0: nothing inlined where it was
 * sampled), or NULL when out of memory. */
static const struct split *split_of(struct inliner *in,
				    const struct cct_frame *f)
{
	uint64_t h = hindex__mix(15, (uint64_t)f->id);
	struct hindex_probe pr = { HINDEX_NONE, 0 };
	struct split s = { f->id, (uint32_t)in->nparts, 0, 0 };
	size_t first, n = store__pcs_of(in->p->pcs, in->p->npcs, f->id,
				       &first);
	bool inlined = false;
	uint32_t i;

	while ((i = hindex__next(&in->split_index, &pr, h)) != HINDEX_NONE)
		if (in->splits[i].function == f->id)
			return &in->splits[i];
	for (size_t j = 0; j < n; j++) {
		const struct store_pc *pc = &in->p->pcs[first + j];
		uint32_t c = chain_at(in, f, f->address + pc->offset);
		size_t k;

		if (c == UINT32_MAX)
			return NULL;
		for (k = s.start; k < in->nparts; k++)	/* chains are few */
			if (in->parts[k].chain == c)
				break;
		if (k == in->nparts) {
			if (grow(&in->parts, &in->parts_cap, in->nparts + 1,
				 sizeof(*in->parts), 256))
				return NULL;
			in->parts[in->nparts++] = (struct part){ c, 0 };
			s.n++;
		}
		in->parts[k].samples += pc->samples;
		s.total += pc->samples;
		inlined |= c != 0;
	}
	if (!inlined) {			/* the leaf stays as it is */
		in->nparts = s.start;
		s.n = 0;
	}
	if (grow(&in->splits, &in->splits_cap, in->nsplits + 1,
		 sizeof(*in->splits), 256) ||
	    hindex__insert(&in->split_index, h, (uint32_t)in->nsplits))
		return NULL;
	in->splits[in->nsplits] = s;
	return &in->splits[in->nsplits++];
}

/* The node below @at for chain @c, in *@out.  0 or -ENOMEM. */
static int descend(struct inliner *in, uint32_t at, uint32_t c, uint32_t *out)
{
	const struct chain *ch = &in->chains[c];

	for (uint32_t j = 0; c && j < ch->n; j++)
		if (cct__child(in->dst, at, in->ids[ch->start + j], &at))
			return -ENOMEM;
	*out = at;
	return 0;
}

static bool is_function(const struct cct *t, const struct cct_frame *f)
{
	return f && f->id > 0 && cct__kind(t, f->id) == CCT_FUNCTION;
}

/* Node @i of @src rebuilt in in->dst below the node of its parent
 * (@map), past what is inlined at the call site. */
static int add_node(struct inliner *in, struct cct *src, uint32_t i,
		    uint32_t *map)
{
	const struct cct_node *n = cct__node(src, i);
	const struct cct_frame *pf = cct__frame(src,
						cct__node(src, n->parent)->frame);
	uint32_t at = map[n->parent], c = 0;
	struct cct_node *d;

	/* a return address: its call is the instruction before */
	if (n->parent != CCT_ROOT && n->call_site && is_function(src, pf))
		c = chain_at(in, pf, n->call_site - 1);
	if (c == UINT32_MAX || descend(in, at, c, &at) ||
	    cct__child(in->dst, at, n->frame, &map[i]))
		return -ENOMEM;
	d = cct__node(in->dst, map[i]);
	d->call_site = n->call_site;
	d->site_weight = n->site_weight;
	d->ext = n->ext;
	d->height = n->height;
	return 0;
}

/* Record @r of @src, on its node's new node or split below it. */
static int add_record(struct inliner *in, struct cct *src,
		      const struct cct_record *r, const uint32_t *map)
{
	const struct cct_frame *f = cct__frame(src, cct__node(src, r->node)->frame);
	const struct split *s = is_function(src, f) ? split_of(in, f) : NULL;

	if (is_function(src, f) && !s)
		return -ENOMEM;
	if (!s || !s->n || s->total <= 0)
		return cct__add(in->dst, map[r->node], r->exact, r->how,
				r->weight);
	for (uint32_t j = 0; j < s->n; j++) {
		const struct part *pt = &in->parts[s->start + j];
		uint32_t at;

		if (descend(in, map[r->node], pt->chain, &at) ||
		    cct__add(in->dst, at,
			     r->exact + (pt->chain ? in->chains[pt->chain].n : 0),
			     r->how,
			     r->weight * (double)pt->samples / (double)s->total))
			return -ENOMEM;
	}
	return 0;
}

/* Every node of @src, then every record, into @in.  0 or -ENOMEM. */
static int add_all(struct inliner *in, struct cct *src,
		   const struct cct_record *recs, size_t nrecs, uint32_t *map)
{
	/* nodes come after their parents */
	for (uint32_t i = 1; i < cct__size(src); i++)
		if (add_node(in, src, i, map))
			return -ENOMEM;
	for (size_t i = 0; i < nrecs; i++)
		if (add_record(in, src, &recs[i], map))
			return -ENOMEM;
	return 0;
}

int profile__inline(struct run_profile *p, struct profile_dwarf *d)
{
	struct inliner in = { .p = p, .d = d };
	struct cct *src = p->cct;
	size_t nrecs, n = cct__size(src);
	const struct cct_record *recs = cct__records(src, &nrecs);
	uint32_t *map = calloc(n, sizeof(*map));
	int ret = -ENOMEM;

	in.dst = cct__new_like(src);
	/* chain 0: none */
	if (!map || !in.dst ||
	    grow(&in.chains, &in.chains_cap, 1, sizeof(*in.chains), 64))
		goto out;
	in.chains[in.nchains++] = (struct chain){ 0, 0 };
	profile_dwarf__reads_begin(d);
	ret = add_all(&in, src, recs, nrecs, map);
	profile_dwarf__reads_end(d);
	if (ret)
		goto out;
	p->cct = in.dst;
	in.dst = src;
	ret = 0;
out:
	cct__delete(in.dst);
	free(map);
	free(in.sites);
	hindex__exit(&in.site_index);
	free(in.chains);
	free(in.ids);
	free(in.splits);
	hindex__exit(&in.split_index);
	free(in.parts);
	return ret;
}
