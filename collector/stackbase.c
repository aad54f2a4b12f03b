/*
 * stackbase.c - main-thread stack bases.  They are kept as a short list
 * by time, because an exec changes the base while samples from before
 * it may still be in flight; /proc gives the base (procfs).
 */
#include <string.h>

#include "binary/module.h"
#include "collector/collector_int.h"
#include "collector/procfs.h"

/* ---- stack bases ---------------------------------------------------- */

static uint32_t comm_hash(const char *comm)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < 15 && comm[i]; i++)
		h = (h ^ (unsigned char)comm[i]) * 16777619u;
	return h;
}

void stack__add_base(struct process *p, uint64_t since,
		     struct procfs_stack st, const char *early)
{
	struct stack_base b = { since, st.base, st.heap, early != NULL,
				early ? comm_hash(early) : 0 };
	int i;

	for (i = 0; i < p->nbases; i++)
		if (p->bases[i].since == since) {
			p->bases[i] = b;
			return;
		}
	if (p->nbases == MAX_BASES) {	/* forget the oldest */
		memmove(&p->bases[0], &p->bases[1],
			(MAX_BASES - 1) * sizeof(p->bases[0]));
		p->nbases--;
	}
	for (i = p->nbases; i > 0 && p->bases[i - 1].since > since; i--)
		p->bases[i] = p->bases[i - 1];
	p->bases[i] = b;
	p->nbases++;
}

/* The entry that holds at @time, or NULL: never read. */
static const struct stack_base *base_at(const struct process *p,
					uint64_t time)
{
	for (int i = p->nbases - 1; i >= 0; i--)
		if (p->bases[i].since <= time)
			return &p->bases[i];
	return NULL;
}

/* 1: *base holds; 0: unknown since an exec; -1: never read. */
static int main_base_at(const struct process *p, uint64_t time,
			uint64_t *base)
{
	const struct stack_base *b = base_at(p, time);

	if (!b)
		return -1;
	*base = b->base;
	return *base ? 1 : 0;
}

/* Whether @m is the brk heap: perf names it "[heap]" only while the
 * vma spans start_brk..brk as the record is written, so the mapping that
 * holds start_brk is the heap too. */
static bool on_heap(const struct process *p, const struct mapping *m,
		    uint64_t time)
{
	const struct stack_base *b;

	if (m->kind == REGION_HEAP)
		return true;
	b = base_at(p, time);
	return m->kind == REGION_ANON && b && b->heap &&
	       m->start <= b->heap && b->heap < m->end;
}

bool stack__has_base_since(const struct process *p, uint64_t since,
			   const char *comm)
{
	for (int i = 0; i < p->nbases; i++) {
		const struct stack_base *b = &p->bases[i];

		if (b->since == since || (b->early && comm &&
		    b->comm_hash == comm_hash(comm) &&
		    (b->since > since ? b->since - since : since - b->since) <=
		    EARLY_NEAR_NS))
			return true;
	}
	return false;
}

void stack__read_main_base(struct process *p, uint64_t since)
{
	struct procfs_stack st;

	if (!procfs__main_stack_base((pid_t)p->pid, &st))
		stack__add_base(p, since, st, NULL);
}

int stack__base(struct process *p, uint64_t sp, uint64_t time,
		uint64_t *base)
{
	const struct mapping *m = space__find_map(p, sp);

	if (m && on_heap(p, m, time)) {
		*base = 0;
		return 0;
	}
	/* a thread's stack (glibc maps one per thread) has its mapping's
	 * end for base; Go's threads run goroutines in heap arenas */
	if (m && m->kind == REGION_ANON) {
		*base = p->exe && module__is_go(p->exe) ? 0 : m->end;
		return 0;
	}
	if (m && m->kind != REGION_MAIN_STACK)
		return CID_SP_OUTSIDE_STACK;
	switch (main_base_at(p, time, base)) {
	case 1:
		break;
	case 0:
		return CID_NO_STACK_BASE;
	default:
		if (p->base_tried)
			return CID_NO_STACK_BASE;
		p->base_tried = true;
		stack__read_main_base(p, 0);
		if (main_base_at(p, time, base) != 1)
			return CID_NO_STACK_BASE;
	}
	if (sp >= *base || *base - sp > MAIN_STACK_MAX)
		return CID_SP_OUTSIDE_STACK;
	return 0;
}
