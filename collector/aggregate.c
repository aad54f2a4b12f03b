/*
 * aggregate.c - CID counts.
 *
 * Entries live in a dense array (what the store iterates), found by a
 * common/hindex.h index.  Tuned for the sample loop: one hash and usually
 * one probe per sample, no allocation except when the table grows.
 * Unresolved counts and thread names are few: linear arrays.
 */
#include "collector/aggregate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hindex.h"

static const char *const failure_names[CID_NR_FAILURES] = {
	[CID_NO_USER_REGS] = "no_user_regs",
	[CID_NO_MAPPING] = "no_mapping",
	[CID_ANON_CODE] = "anon_code",
	[CID_MODULE_UNREADABLE] = "module_unreadable",
	[CID_NO_CFI] = "no_cfi",
	[CID_CFA_UNSUPPORTED] = "cfa_unsupported",
	[CID_NO_STACK_BASE] = "no_stack_base",
	[CID_MODULE_CHANGED] = "module_changed",
	[CID_SP_OUTSIDE_STACK] = "sp_outside_stack",
};

const char *cid_failure__name(enum cid_failure f)
{
	return (unsigned)f < CID_NR_FAILURES ? failure_names[f] : "unknown";
}

struct aggregate {
	struct cid_count *cids;
	size_t ncids, cap;
	struct hindex index;	/* over cids */
	struct offcpu_count *offcpu;
	size_t noffcpu, offcpu_cap;
	struct hindex offcpu_index;	/* over offcpu */
	struct pc_count *pcs;
	size_t npcs, pcs_cap;
	struct hindex pc_index;	/* over pcs */
	struct kchain_count *kchains;
	size_t nkchains, kchains_cap;
	struct hindex kchain_index;	/* over kchains */
	size_t max_keys;
	struct unresolved_count *unres;
	size_t nunres, unres_cap;
	struct thread_name *threads;
	size_t nthreads, threads_cap;
};

struct aggregate *aggregate__new(size_t max_keys)
{
	struct aggregate *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->max_keys = max_keys ? max_keys : 1;
	return a;
}

void aggregate__delete(struct aggregate *a)
{
	if (!a)
		return;
	free(a->cids);
	hindex__exit(&a->index);
	free(a->offcpu);
	hindex__exit(&a->offcpu_index);
	free(a->pcs);
	hindex__exit(&a->pc_index);
	for (size_t i = 0; i < a->nkchains; i++)
		free(a->kchains[i].chain);
	free(a->kchains);
	hindex__exit(&a->kchain_index);
	free(a->unres);
	free(a->threads);
	free(a);
}

static uint64_t hash_key(const struct cid_key *k)
{
	uint64_t h = hindex__mix(0, (uintptr_t)k->mod);

	h = hindex__mix(h, k->func);
	h = hindex__mix(h, (uint64_t)k->height);
	h = hindex__mix(h, ((uint64_t)k->pid << 32) | k->tid);
	return hindex__mix(h, (uintptr_t)k->prog);
}

static bool same_key(const struct cid_key *a, const struct cid_key *b)
{
	return a->mod == b->mod && a->func == b->func &&
	       a->height == b->height && a->pid == b->pid && a->tid == b->tid &&
	       a->prog == b->prog;
}

/* The entry of CID @k in a table keyed by CIDs (@v, its entries
 * @size bytes each, their struct cid_key first, indexed by @index), a
 * zeroed one added (*@fresh) when there is none; NULL when out of
 * memory. */
static void *cid_entry(struct hindex *index, void **v, size_t *n,
		       size_t *cap, size_t size, const struct cid_key *k,
		       bool *fresh)
{
	uint64_t h = hash_key(k);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;
	char *e;

	*fresh = false;
	while ((i = hindex__next(index, &p, h)) != HINDEX_NONE)
		if (same_key((const struct cid_key *)((char *)*v + i * size),
			     k))
			return (char *)*v + i * size;
	if (grow(v, cap, *n + 1, size, 256) ||
	    hindex__insert(index, h, (uint32_t)*n))
		return NULL;
	e = (char *)*v + (*n)++ * size;
	memset(e, 0, size);
	memcpy(e, k, sizeof(*k));
	*fresh = true;
	return e;
}

int aggregate__add_cid(struct aggregate *a, const struct cid_key *k,
		       const char *func_name, bool kernel)
{
	bool fresh;
	struct cid_count *c = cid_entry(&a->index, (void **)&a->cids,
					&a->ncids, &a->cap, sizeof(*c), k,
					&fresh);

	if (!c)
		return -ENOMEM;
	if (fresh)
		c->func_name = func_name;
	c->samples++;
	c->kernel += kernel;
	return 0;
}

int aggregate__add_offcpu(struct aggregate *a, const struct cid_key *k,
			  const char *func_name, uint64_t ns, bool preempted)
{
	bool fresh;
	struct offcpu_count *o = cid_entry(&a->offcpu_index,
					   (void **)&a->offcpu, &a->noffcpu,
					   &a->offcpu_cap, sizeof(*o), k,
					   &fresh);

	if (!o)
		return -ENOMEM;
	if (fresh)
		o->func_name = func_name;
	o->switches++;
	if (preempted)
		o->runnable_ns += ns;
	else
		o->blocked_ns += ns;
	return 0;
}

int aggregate__add_pc(struct aggregate *a, const struct cid_key *k,
		      const char *func_name, uint64_t pc)
{
	uint64_t off = pc - k->func, h;
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	if (pc < k->func || off > UINT32_MAX)
		return 0;
	h = hindex__mix(hindex__mix(hindex__mix(1, (uintptr_t)k->mod),
				    k->func), (off << 32) | k->pid);
	while ((i = hindex__next(&a->pc_index, &p, h)) != HINDEX_NONE) {
		struct pc_count *c = &a->pcs[i];

		if (c->mod == k->mod && c->func == k->func &&
		    c->offset == off && c->pid == k->pid) {
			c->samples++;
			return 0;
		}
	}
	if (grow(&a->pcs, &a->pcs_cap, a->npcs + 1, sizeof(*a->pcs), 256) ||
	    hindex__insert(&a->pc_index, h, (uint32_t)a->npcs))
		return -ENOMEM;
	a->pcs[a->npcs++] = (struct pc_count){ k->mod, k->func, (uint32_t)off,
		k->pid, func_name, 1 };
	return 0;
}

int aggregate__add_kchain(struct aggregate *a, const struct cid_key *k,
			  const char *func_name, const char *chain)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint64_t h = hindex__mix(hindex__mix(hindex__mix(hindex__string(chain),
		(uintptr_t)k->mod), k->func), ((uint64_t)k->tid << 32) |
		(uint64_t)(uint32_t)k->height);
	uint32_t i;

	while ((i = hindex__next(&a->kchain_index, &p, h)) != HINDEX_NONE) {
		struct kchain_count *c = &a->kchains[i];

		if (same_key(&c->key, k) && !strcmp(c->chain, chain)) {
			c->samples++;
			return 0;
		}
	}
	if (grow(&a->kchains, &a->kchains_cap, a->nkchains + 1,
		 sizeof(*a->kchains), 64) ||
	    hindex__insert(&a->kchain_index, h, (uint32_t)a->nkchains))
		return -ENOMEM;
	a->kchains[a->nkchains] = (struct kchain_count){ *k, func_name,
		strdup(chain), 1 };
	if (!a->kchains[a->nkchains].chain)
		return -ENOMEM;
	a->nkchains++;
	return 0;
}

int aggregate__add_unresolved(struct aggregate *a, const struct module *mod,
			      uint32_t pid, uint32_t tid, enum cid_failure why)
{
	for (size_t i = 0; i < a->nunres; i++) {
		struct unresolved_count *u = &a->unres[i];

		if (u->mod == mod && u->pid == pid && u->tid == tid &&
		    u->reason == why) {
			u->samples++;
			return 0;
		}
	}
	if (grow(&a->unres, &a->unres_cap, a->nunres + 1, sizeof(*a->unres),
		 16))
		return -ENOMEM;
	a->unres[a->nunres++] = (struct unresolved_count){ mod, pid, tid, why, 1 };
	return 0;
}

int aggregate__add_thread(struct aggregate *a, uint32_t pid, uint32_t tid,
			  const char *comm)
{
	struct thread_name *t = NULL;

	for (size_t i = 0; i < a->nthreads && !t; i++)
		if (a->threads[i].pid == pid && a->threads[i].tid == tid)
			t = &a->threads[i];
	if (!t) {
		if (grow(&a->threads, &a->threads_cap, a->nthreads + 1,
			 sizeof(*a->threads), 16))
			return -ENOMEM;
		t = &a->threads[a->nthreads++];
		t->pid = pid;
		t->tid = tid;
	}
	strncpy(t->comm, comm, sizeof(t->comm) - 1);
	t->comm[sizeof(t->comm) - 1] = '\0';
	return 0;
}

bool aggregate__full(const struct aggregate *a)
{
	return a->ncids + a->noffcpu + a->npcs + a->nkchains + a->nunres +
	       a->nthreads >= a->max_keys;
}

bool aggregate__empty(const struct aggregate *a)
{
	return !a->ncids && !a->noffcpu && !a->npcs && !a->nkchains &&
	       !a->nunres && !a->nthreads;
}

void aggregate__clear(struct aggregate *a)
{
	hindex__clear(&a->index);
	hindex__clear(&a->offcpu_index);
	hindex__clear(&a->pc_index);
	hindex__clear(&a->kchain_index);
	for (size_t i = 0; i < a->nkchains; i++)
		free(a->kchains[i].chain);
	a->ncids = a->noffcpu = a->npcs = a->nkchains = a->nunres =
		a->nthreads = 0;
}

const struct cid_count *aggregate__cids(const struct aggregate *a, size_t *n)
{
	*n = a->ncids;
	return a->cids;
}

const struct offcpu_count *aggregate__offcpu(const struct aggregate *a,
					     size_t *n)
{
	*n = a->noffcpu;
	return a->offcpu;
}

const struct kchain_count *aggregate__kchains(const struct aggregate *a,
					     size_t *n)
{
	*n = a->nkchains;
	return a->kchains;
}

const struct pc_count *aggregate__pcs(const struct aggregate *a, size_t *n)
{
	*n = a->npcs;
	return a->pcs;
}

const struct unresolved_count *aggregate__unresolved(const struct aggregate *a,
						     size_t *n)
{
	*n = a->nunres;
	return a->unres;
}

const struct thread_name *aggregate__threads(const struct aggregate *a,
					     size_t *n)
{
	*n = a->nthreads;
	return a->threads;
}
