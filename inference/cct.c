/*
 * cct.c - the weighted calling context tree: nodes, records and frame
 * names in dense arrays, each with a hash index (common/hindex.h).
 */
#define _GNU_SOURCE
#include "inference/cct.h"
#include "common/path.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/printable.h"

struct cct {
	struct cct_node *nodes;
	size_t nnodes, nodes_cap;
	struct hindex children;		/* (parent, frame) -> node */
	struct cct_record *recs;
	size_t nrecs, recs_cap;
	struct hindex rec_index;	/* (node, exact, how) -> record */
	struct cct_frame *frames;
	size_t nframes, frames_cap;
	struct hindex frame_index;	/* id -> frame */
	struct hindex pseudo_index;	/* (function, height), (pid, comm)
					 * -> frame */
	int64_t next_pseudo;
	int64_t kernel;			/* the [kernel] frame; 0: none yet */
	double total;
};

static const char *const how_names[CCT_NR_HOW] = {
	"precise", "ambiguous", "searched", "unknown" };

const char *cct_how__name(enum cct_how how)
{
	return (unsigned)how < CCT_NR_HOW ? how_names[how] : "?";
}

struct cct *cct__new(void)
{
	struct cct *t = calloc(1, sizeof(*t));
	uint32_t root;

	if (!t)
		return NULL;
	t->next_pseudo = -1;
	if (grow(&t->nodes, &t->nodes_cap, 1, sizeof(*t->nodes), 1024)) {
		free(t);
		return NULL;
	}
	root = 0;
	t->nodes[root] = (struct cct_node){ .parent = CCT_NONE };
	t->nnodes = 1;
	return t;
}

void cct__delete(struct cct *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nframes; i++)
		free(t->frames[i].name);
	hindex__exit(&t->children);
	hindex__exit(&t->rec_index);
	hindex__exit(&t->frame_index);
	hindex__exit(&t->pseudo_index);
	free(t->frames);
	free(t->recs);
	free(t->nodes);
	free(t);
}

static uint64_t child_hash(uint32_t parent, int64_t frame)
{
	return hindex__mix(hindex__mix(0, parent), (uint64_t)frame);
}

int cct__child(struct cct *t, uint32_t parent, int64_t frame, uint32_t *out)
{
	uint64_t h = child_hash(parent, frame);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&t->children, &p, h)) != HINDEX_NONE)
		if (t->nodes[i].parent == parent && t->nodes[i].frame == frame) {
			*out = i;
			return 0;
		}
	if (t->nnodes >= CCT_NONE ||
	    grow(&t->nodes, &t->nodes_cap, t->nnodes + 1, sizeof(*t->nodes),
		 1024))
		return -ENOMEM;
	i = (uint32_t)t->nnodes;
	t->nodes[i] = (struct cct_node){ .parent = parent,
		.depth = t->nodes[parent].depth + 1, .frame = frame };
	if (hindex__insert(&t->children, h, i))
		return -ENOMEM;
	t->nnodes++;
	*out = i;
	return 0;
}

void cct__set_site(struct cct *t, uint32_t node, uint64_t site, double weight)
{
	struct cct_node *n = &t->nodes[node];

	if (site && (!n->call_site || weight > n->site_weight)) {
		n->call_site = site;
		n->site_weight = weight;
	}
}

int cct__add(struct cct *t, uint32_t node, uint32_t exact, enum cct_how how,
	     double weight)
{
	uint64_t h = hindex__mix(hindex__mix(hindex__mix(1, node), exact), how);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	t->total += weight;
	while ((i = hindex__next(&t->rec_index, &p, h)) != HINDEX_NONE) {
		struct cct_record *r = &t->recs[i];

		if (r->node == node && r->exact == exact && r->how == how) {
			r->weight += weight;
			return 0;
		}
	}
	if (grow(&t->recs, &t->recs_cap, t->nrecs + 1, sizeof(*t->recs), 1024))
		goto out_nomem;
	i = (uint32_t)t->nrecs;
	t->recs[i] = (struct cct_record){ node, exact, how, weight };
	if (hindex__insert(&t->rec_index, h, i))
		goto out_nomem;
	t->nrecs++;
	return 0;
out_nomem:
	t->total -= weight;
	return -ENOMEM;
}

size_t cct__size(const struct cct *t)
{
	return t->nnodes;
}

struct cct_node *cct__node(struct cct *t, uint32_t i)
{
	return &t->nodes[i];
}

const struct cct_record *cct__records(const struct cct *t, size_t *n)
{
	*n = t->nrecs;
	return t->recs;
}

double cct__total(const struct cct *t)
{
	return t->total;
}

static uint32_t find_frame(const struct cct *t, int64_t id)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h = hindex__mix(2, (uint64_t)id);
	uint32_t i;

	while ((i = hindex__next(&t->frame_index, &p, h)) != HINDEX_NONE)
		if (t->frames[i].id == id)
			return i;
	return HINDEX_NONE;
}

static int add_frame(struct cct *t, const struct cct_frame *f)
{
	uint32_t i = find_frame(t, f->id);

	if (i != HINDEX_NONE) {		/* redefined: the last name wins */
		free(t->frames[i].name);
		t->frames[i] = *f;
		return 0;
	}
	if (grow(&t->frames, &t->frames_cap, t->nframes + 1,
		 sizeof(*t->frames), 256) ||
	    hindex__insert(&t->frame_index, hindex__mix(2, (uint64_t)f->id),
			   (uint32_t)t->nframes))
		return -ENOMEM;
	t->frames[t->nframes++] = *f;
	return 0;
}

int cct__define(struct cct *t, int64_t id, const char *name,
		int64_t module_id, uint64_t address)
{
	struct cct_frame f = { .id = id, .name = printable__dup(name),
		.module_id = module_id, .address = address, .function_id = id };

	if (!f.name || add_frame(t, &f)) {
		free(f.name);
		return -ENOMEM;
	}
	return 0;
}

/* Pseudo frame @f (its name owned by the tree from now on, freed here
 * when it cannot be), found again by hash @h: its id, or 0 when out of
 * memory. */
static int64_t add_pseudo(struct cct *t, struct cct_frame *f, uint64_t h)
{
	uint32_t i = (uint32_t)t->nframes;

	f->id = t->next_pseudo;
	if (add_frame(t, f)) {
		free(f->name);
		return 0;
	}
	if (hindex__insert(&t->pseudo_index, h, i))
		return 0;	/* the frame stays, owned by the tree */
	t->next_pseudo--;
	return f->id;
}

int64_t cct__pseudo(struct cct *t, int64_t func, int64_t height)
{
	struct cct_frame f = { .kind = CCT_UNKNOWN_CALLERS,
		.function_id = func, .height = height };
	uint64_t h = hindex__mix(hindex__mix(3, (uint64_t)func),
				 (uint64_t)height);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;
	char *name;

	while ((i = hindex__next(&t->pseudo_index, &p, h)) != HINDEX_NONE)
		if (t->frames[i].function_id == func &&
		    t->frames[i].height == height)
			return t->frames[i].id;
	if ((height == ICPPD_HEIGHT_NONE ?
	     asprintf(&name, "[unknown callers of %s]", cct__name(t, func)) :
	     asprintf(&name, "[unknown callers of %s at height %lld]",
		      cct__name(t, func), (long long)height)) < 0)
		return 0;
	f.name = name;
	return add_pseudo(t, &f, h);
}

static uint64_t process_hash(int64_t pid, const char *comm)
{
	uint64_t h = hindex__mix(5, (uint64_t)pid);

	for (; *comm; comm++)
		h = hindex__mix(h, (unsigned char)*comm);
	return h;
}

int64_t cct__process(struct cct *t, int64_t pid, const char *comm)
{
	struct cct_frame f = { .kind = CCT_PROCESS, .pid = pid,
			       .name = printable__dup(comm) };
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h;
	uint32_t i;

	if (!f.name)
		return 0;
	h = process_hash(pid, f.name);
	while ((i = hindex__next(&t->pseudo_index, &p, h)) != HINDEX_NONE)
		if (t->frames[i].kind == CCT_PROCESS &&
		    t->frames[i].pid == pid && !strcmp(t->frames[i].name, f.name)) {
			free(f.name);
			return t->frames[i].id;
		}
	return add_pseudo(t, &f, h);
}

int64_t cct__kernel(struct cct *t)
{
	struct cct_frame f = { .kind = CCT_KERNEL };

	if (t->kernel)
		return t->kernel;
	if (!(f.name = strdup("[kernel]")))
		return 0;
	f.id = t->next_pseudo;
	if (add_frame(t, &f)) {
		free(f.name);
		return 0;
	}
	t->next_pseudo--;
	return t->kernel = f.id;
}

int64_t cct__kernel_function(struct cct *t, const char *name)
{
	struct cct_frame f = { .kind = CCT_KERNEL, .name = printable__dup(name) };
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h;
	uint32_t i;

	if (!f.name)
		return 0;
	h = hindex__mix(7, hindex__string(f.name));
	while ((i = hindex__next(&t->pseudo_index, &p, h)) != HINDEX_NONE)
		if (t->frames[i].kind == CCT_KERNEL &&
		    !strcmp(t->frames[i].name, f.name)) {
			free(f.name);
			return t->frames[i].id;
		}
	return add_pseudo(t, &f, h);
}

int64_t cct__inlined(struct cct *t, int64_t module_id, const char *name)
{
	struct cct_frame f = { .kind = CCT_INLINED, .module_id = module_id };
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h;
	uint32_t i;
	char *s;

	if (asprintf(&s, "%s" CCT_INLINED_MARK, name) < 0)
		return 0;
	f.name = printable__dup(s);
	free(s);
	if (!f.name)
		return 0;
	h = hindex__mix(hindex__mix(13, (uint64_t)module_id),
			hindex__string(f.name));
	while ((i = hindex__next(&t->pseudo_index, &p, h)) != HINDEX_NONE)
		if (t->frames[i].kind == CCT_INLINED &&
		    t->frames[i].module_id == module_id &&
		    !strcmp(t->frames[i].name, f.name)) {
			free(f.name);
			return t->frames[i].id;
		}
	return add_pseudo(t, &f, h);
}

struct cct *cct__new_like(const struct cct *src)
{
	struct cct *t = cct__new();

	if (!t)
		return NULL;
	t->next_pseudo = src->next_pseudo;
	t->kernel = src->kernel;
	if (grow(&t->frames, &t->frames_cap, src->nframes ? src->nframes : 1,
		 sizeof(*t->frames), 256) ||
	    hindex__copy(&t->frame_index, &src->frame_index) ||
	    hindex__copy(&t->pseudo_index, &src->pseudo_index))
		goto fail;
	for (; t->nframes < src->nframes; t->nframes++) {
		t->frames[t->nframes] = src->frames[t->nframes];
		t->frames[t->nframes].name = strdup(src->frames[t->nframes].name);
		if (!t->frames[t->nframes].name)
			goto fail;
	}
	return t;
fail:
	cct__delete(t);
	return NULL;
}

enum cct_frame_kind cct__kind(const struct cct *t, int64_t id)
{
	const struct cct_frame *f = id < 0 ? cct__frame(t, id) : NULL;

	return f ? f->kind : CCT_FUNCTION;
}

int64_t cct__process_of(struct cct *t, uint32_t i)
{
	if (i == CCT_ROOT)
		return 0;
	while (t->nodes[i].parent != CCT_ROOT)
		i = t->nodes[i].parent;
	return cct__kind(t, t->nodes[i].frame) == CCT_PROCESS ?
	       t->nodes[i].frame : 0;
}

const struct cct_frame *cct__frame(const struct cct *t, int64_t id)
{
	uint32_t i = find_frame(t, id);

	return i == HINDEX_NONE ? NULL : &t->frames[i];
}

const char *cct__name(const struct cct *t, int64_t id)
{
	const struct cct_frame *f = cct__frame(t, id);

	return f ? f->name : "?";
}

const char *cct__root_name(const struct cct *t, int64_t id)
{
	const struct cct_frame *f = cct__frame(t, id);

	if (!f)
		return "?";
	return f->kind == CCT_UNKNOWN_CALLERS ? CCT_UNKNOWN_ROOT : f->name;
}
