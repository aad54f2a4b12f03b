/*
 * kccf.c - inv_k: the k-calling-context forest of a weighted CCT.
 *
 * Forest nodes live in a dense array indexed by (parent, frame); roots
 * have parent KCCF_NONE.  Children lists are linked at the end, when
 * they are sorted.
 */
#include "inference/kccf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hindex.h"

struct kccf {
	struct kccf_node *nodes;
	size_t n, cap;
	struct hindex index;
	uint32_t first_root;
	uint64_t steps;		/* frames walked, against KCCF_MAX_STEPS */
};

/* The node for @frame under @parent, created when new.  0, -ENOMEM,
 * or -E2BIG past KCCF_MAX_NODES. */
static int child(struct kccf *f, uint32_t parent, int64_t frame, uint32_t *out)
{
	uint64_t h = hindex__mix(hindex__mix(7, parent), (uint64_t)frame);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&f->index, &p, h)) != HINDEX_NONE)
		if (f->nodes[i].parent == parent && f->nodes[i].frame == frame) {
			*out = i;
			return 0;
		}
	if (f->n >= KCCF_MAX_NODES)
		return -E2BIG;
	if (grow(&f->nodes, &f->cap, f->n + 1, sizeof(*f->nodes), 1024))
		return -ENOMEM;
	i = (uint32_t)f->n;
	f->nodes[i] = (struct kccf_node){ .parent = parent,
		.level = parent == KCCF_NONE ? 0 : f->nodes[parent].level + 1,
		.first_child = KCCF_NONE, .next_sibling = KCCF_NONE,
		.frame = frame };
	if (hindex__insert(&f->index, h, i))
		return -ENOMEM;
	f->n++;
	*out = i;
	return 0;
}

/*
 * Adds record @r (number @stamp) to the k-context that starts at CCT
 * node @from, @dist frames above the record's own node: levels 0..k
 * going up.  The level-j node is certain when the record's certain
 * suffix reaches its topmost frame (dist + j + 1 frames from the leaf).
 * A node this record already added to (recursion, --inclusive) is not
 * added to again.  0, -ENOMEM or -E2BIG.
 */
static int add_context(struct kccf *f, struct cct *t,
		       const struct cct_record *r, uint32_t stamp,
		       uint32_t from, uint32_t dist, uint32_t k)
{
	uint32_t x = from, below = CCT_NONE, fn = KCCF_NONE;

	for (uint32_t j = 0; x != CCT_ROOT && (k == KCCF_INF || j <= k); j++) {
		const struct cct_node *cn = cct__node(t, x);
		struct kccf_node *n;
		int err;

		if (++f->steps > KCCF_MAX_STEPS)
			return -E2BIG;
		if ((err = child(f, fn, cn->frame, &fn)))
			return err;
		n = &f->nodes[fn];
		if (n->stamp != stamp) {
			n->stamp = stamp;
			n->weight += r->weight;
			if ((uint64_t)dist + j + 1 <= r->exact)
				n->certain += r->weight;
			/* the call site by which this frame called the one
			 * below it, from the heaviest contribution */
			if (below != CCT_NONE && r->weight > n->site_weight) {
				const struct cct_node *b = cct__node(t, below);
				const struct cct_frame *fr =
					cct__frame(t, cn->frame);

				n->call_site = b->call_site;
				n->site_module = fr ? fr->module_id : 0;
				n->site_weight = r->weight;
			}
		}
		below = x;
		x = cn->parent;
	}
	return 0;
}

struct sort_key {
	uint32_t node;
	double weight;
	const char *name;
};

static int cmp_nodes(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Orders every node's children, and the roots, by weight descending
 * (ties by name), and links them. */
static int sort(struct kccf *f, const struct cct *t)
{
	struct sort_key *order = malloc((f->n ? f->n : 1) * sizeof(*order));

	if (!order)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->n; i++)
		order[i] = (struct sort_key){ i, f->nodes[i].weight,
					      cct__name(t, f->nodes[i].frame) };
	qsort(order, f->n, sizeof(*order), cmp_nodes);
	for (uint32_t i = 0; i < f->n; i++)
		f->nodes[i].first_child = KCCF_NONE;
	f->first_root = KCCF_NONE;
	/* link in reverse order, pushing at the head */
	for (uint32_t i = (uint32_t)f->n; i-- > 0;) {
		struct kccf_node *n = &f->nodes[order[i].node];
		uint32_t *head = n->parent == KCCF_NONE ? &f->first_root :
				 &f->nodes[n->parent].first_child;

		n->next_sibling = *head;
		*head = order[i].node;
	}
	free(order);
	return 0;
}

struct kccf *kccf__build(struct cct *t, uint32_t k, bool inclusive, int *err)
{
	struct kccf *f = calloc(1, sizeof(*f));
	const struct cct_record *recs;
	size_t nrecs;

	*err = -ENOMEM;
	if (!f)
		return NULL;
	f->first_root = KCCF_NONE;
	recs = cct__records(t, &nrecs);
	for (size_t i = 0; i < nrecs; i++) {
		const struct cct_record *r = &recs[i];
		uint32_t stamp = (uint32_t)i + 1, x = r->node, dist = 0;

		if (r->weight == 0)
			continue;
		do {
			if ((*err = add_context(f, t, r, stamp, x, dist, k)))
				goto out_fail;
			x = cct__node(t, x)->parent;
			dist++;
		} while (inclusive && x != CCT_ROOT);
	}
	if ((*err = sort(f, t)))
		goto out_fail;
	return f;
out_fail:
	kccf__delete(f);
	return NULL;
}

void kccf__delete(struct kccf *f)
{
	if (!f)
		return;
	hindex__exit(&f->index);
	free(f->nodes);
	free(f);
}

size_t kccf__size(const struct kccf *f)
{
	return f->n;
}

const struct kccf_node *kccf__node(const struct kccf *f, uint32_t i)
{
	return &f->nodes[i];
}

uint32_t kccf__first_root(const struct kccf *f)
{
	return f->first_root;
}
