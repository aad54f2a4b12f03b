/*
 * unwind.c - the CFI unwinder of training and validation: walks a
 * sample's stack copy to its outermost frame and hands the path, with
 * each frame's height, to the collector's path callback.
 *
 * Tuned for deep stacks sampled often (a compiler's 60 to 130 frames at
 * 1000 Hz): a thread's last whole walk is remembered, with the
 * registers it met at each frame and every word of the copy it read
 * from there on.  When a walk reaches a frame of the last one with the
 * same registers, and the new copy holds the same words at every
 * address the last walk read from that frame out, the rest of the walk
 * is the last one's: stepping out of a frame depends on nothing else
 * (the code mapped, checked by the process's maps_gen, and the stack
 * base, compared; a signal frame, whose caller's base is looked up by
 * time, ends what is reused).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binary/module.h"
#include "collector/collector_int.h"

/* Threads whose last walk is kept: direct-mapped by tid. */
#define WALK_SLOTS 8
/* Reads one walk may log (a frame reads two or three words). */
#define WALK_MAX_READS (4 * ICPPD_MAX_FRAMES)

/* The registers a walk met entering a frame, and where in its log the
 * reads of stepping out of it begin. */
struct walk_state {
	uint64_t ip, sp, bp, base;
	uint32_t read_at;
	bool exact;	/* the pc is not a return address */
	bool signal;	/* stepping out of it crossed a signal frame */
};

/* A thread's last whole walk: frames innermost first.  Its arrays have
 * the room of the collector's own for a walk, with which they trade
 * places when a walk is kept (no copy of a deep stack's frames at every
 * sample). */
struct walk {
	uint32_t pid, tid;
	uint64_t maps_gen;
	size_t n, nreads;
	struct path_frame *frames;	/* ICPPD_MAX_FRAMES, or NULL */
	struct walk_state *states;	/* ICPPD_MAX_FRAMES */
	struct cfi_read *reads;		/* WALK_MAX_READS */
	size_t last_signal;	/* states past it cross no signal frame;
				 * SIZE_MAX: none does */
};

/* ---- unwinding (training and validation) ---------------------------- */

static const char *const unwind_names[UNW_NR_STATUS] = {
	[UNW_COMPLETE] = "complete",
	[UNW_TRUNCATED] = "truncated",
	[UNW_NO_STACK] = "no_stack",
	[UNW_NO_MAPPING] = "no_mapping",
	[UNW_NO_CFI] = "no_cfi",
	[UNW_BAD_CFI] = "bad_cfi",
	[UNW_BAD_FRAME] = "bad_frame",
	[UNW_TOO_DEEP] = "too_deep",
	[UNW_NO_PROGRAM] = "no_program",
};

const char *unwind_status__name(enum unwind_status s)
{
	return (unsigned)s < UNW_NR_STATUS ? unwind_names[s] : "?";
}

int collector__set_unwind(struct collector *c, collector_path_fn fn,
			  void *arg)
{
	if (!c->frames) {
		c->frames = calloc(ICPPD_MAX_FRAMES, sizeof(*c->frames));
		c->states = calloc(ICPPD_MAX_FRAMES, sizeof(*c->states));
		c->reads = calloc(WALK_MAX_READS, sizeof(*c->reads));
		c->path = calloc(ICPPD_MAX_FRAMES, sizeof(*c->path));
		c->walks = calloc(WALK_SLOTS, sizeof(*c->walks));
		if (!c->frames || !c->states || !c->reads || !c->path ||
		    !c->walks) {
			unwind__exit(c);
			return -ENOMEM;
		}
	}
	c->path_fn = fn;
	c->path_arg = arg;
	return 0;
}

/*
 * A frame-pointer step, for code no CFI covers (Go's and hand-written
 * assembly, code built with frame pointers but no .eh_frame): the
 * caller's BP is saved at BP, its return address above it, and its SP
 * is just past them.  The same results as module__step(): 0;
 * CFI_OUTERMOST at the outermost frame, whose BP is 0 (the ABI's mark, which _start and Go's
 * runtime.goexit leave); -EFAULT (with the CFA) when the saved values
 * lie outside the copy; -ENOENT when BP cannot be a frame of this
 * stack.
 */
static int fp_step(struct cfi_regs *regs, const struct cfi_mem *mem,
		   struct cfi_step *st)
{
	uint64_t bp, ra;

	if (!regs->bp) {	/* its return address is just above SP */
		st->cfa = regs->sp + 8;
		return CFI_OUTERMOST;
	}
	/* BP may equal SP: a frame with no locals, at a call (crtstuff's
	 * __do_global_dtors_aux calling __cxa_finalize) */
	if (regs->bp < regs->sp || regs->bp % 8 || regs->bp > UINT64_MAX - 16)
		return -ENOENT;
	st->cfa = regs->bp + 16;
	if (cfi__mem_read(mem, regs->bp, &bp) ||
	    cfi__mem_read(mem, regs->bp + 8, &ra))
		return -EFAULT;
	*regs = (struct cfi_regs){ .sp = st->cfa, .bp = bp, .ip = ra };
	return 0;
}

void unwind__exit(struct collector *c)
{
	if (!c)
		return;
	for (size_t i = 0; c->walks && i < WALK_SLOTS; i++) {
		free(c->walks[i].frames);
		free(c->walks[i].states);
		free(c->walks[i].reads);
	}
	free(c->walks);
	free(c->states);
	free(c->reads);
	free(c->frames);
	free(c->path);
	c->path = NULL;
	c->walks = NULL;
	c->states = NULL;
	c->reads = NULL;
	c->frames = NULL;
}

/* Keeps this walk (c->frames, c->states, c->reads; @n frames, @nreads
 * reads) as @w's, the thread's last: the arrays trade places, and the
 * collector's are the last walk's now, to be written over.  Whether it
 * was kept (no memory: the next walks whole). */
static bool remember(struct collector *c, struct walk *w,
		     const struct process *p, uint32_t tid, size_t n,
		     size_t nreads)
{
	struct path_frame *f = w->frames;
	struct walk_state *st = w->states;
	struct cfi_read *rd = w->reads;

	w->n = 0;
	if (!f) {
		f = malloc(ICPPD_MAX_FRAMES * sizeof(*f));
		st = malloc(ICPPD_MAX_FRAMES * sizeof(*st));
		rd = malloc(WALK_MAX_READS * sizeof(*rd));
		if (!f || !st || !rd) {
			free(f);
			free(st);
			free(rd);
			return false;
		}
	}
	w->frames = c->frames;
	w->states = c->states;
	w->reads = c->reads;
	c->frames = f;
	c->states = st;
	c->reads = rd;
	w->last_signal = SIZE_MAX;
	for (size_t i = 0; i < n; i++)
		if (w->states[i].signal)
			w->last_signal = i;
	w->pid = p->pid;
	w->tid = tid;
	w->maps_gen = p->maps_gen;
	w->nreads = nreads;
	w->n = n;
	return true;
}

/*
 * Whether the walk at frame @n, entered with @st, is the last walk @w's
 * from its frame *@at on (*@at: a cursor over @w's frames, by SP, which
 * only moves out): then its frames, states and reads from there are
 * appended to this walk's (c->frames, c->states, c->reads from @n and
 * *@nreads), and the number of frames appended is returned; else 0.
 * @mem: the new copy.
 */
static size_t reuse(struct collector *c, const struct walk *w, size_t *at,
		    const struct walk_state *st, size_t n, size_t *nreads,
		    const struct cfi_mem *mem)
{
	const struct cfi_mem plain = { mem->start, mem->data, mem->size, NULL };
	const struct walk_state *o;
	size_t k = *at, from, more;

	while (k < w->n && w->states[k].sp < st->sp)
		k++;
	*at = k;
	if (k >= w->n)
		return 0;
	o = &w->states[k];
	if (o->sp != st->sp || o->ip != st->ip || o->bp != st->bp ||
	    o->base != st->base || o->exact != st->exact ||
	    (w->last_signal != SIZE_MAX && w->last_signal >= k) ||
	    n + (w->n - k) > ICPPD_MAX_FRAMES)
		return 0;
	from = o->read_at;
	more = w->nreads - from;
	if (*nreads + more > WALK_MAX_READS)
		return 0;
	for (size_t i = from; i < w->nreads; i++) {
		uint64_t v;

		if (w->reads[i].addr == CFI_READ_DEAD ||
		    cfi__mem_read(&plain, w->reads[i].addr, &v) ||
		    v != w->reads[i].value)
			return 0;
	}
	memcpy(&c->frames[n], &w->frames[k], (w->n - k) * sizeof(*c->frames));
	for (size_t i = k; i < w->n; i++) {
		c->states[n + i - k] = w->states[i];
		c->states[n + i - k].read_at =
			(uint32_t)(w->states[i].read_at - from + *nreads);
	}
	memcpy(&c->reads[*nreads], &w->reads[from], more * sizeof(*c->reads));
	*nreads += more;
	return w->n - k;
}

/* The height of a frame whose CFA is @cfa: none without a base. */
static int64_t height_of(uint64_t base, uint64_t cfa)
{
	return base ? (int64_t)(base - cfa) : ICPPD_HEIGHT_NONE;
}

/*
 * Walks the stack copy from the sampled registers to the outermost
 * frame.  A frame is outermost when its CFI says the return address is
 * undefined (glibc's _start and clone3), when its return address is 0
 * (Go's runtime.goexit, the bottom of every goroutine), when its CFA
 * is at or above the stack base (a start routine without such CFI), or
 * when it is a Go runtime function that starts a stack or switches to
 * another (module__ends_walk(): what lies above runtime.systemstack on
 * a thread's system stack is stale, and read as frames it gave a
 * garbage caller or none).
 * Heights use the same base as the sample's CID, so frames[innermost]
 * is the CID; a @base of 0 (no fixed base) gives every frame
 * ICPPD_HEIGHT_NONE, up to a signal frame whose caller ran on a stack
 * with a base.  Frames are stored innermost first in c->frames;
 * *@n is their count.
 */
static enum unwind_status unwind(struct collector *c, struct process *p,
				 const struct perf_sample *s, uint64_t base,
				 const struct path_frame **frames, size_t *n)
{
	struct cfi_regs regs = { .sp = s->sp, .bp = s->bp, .ip = s->uip };
	struct cfi_log log = { c->reads, 0, WALK_MAX_READS, false };
	struct cfi_mem mem = { .start = s->sp, .data = s->stack,
			       .size = s->stack_size, .log = &log };
	struct walk *w = &c->walks[s->tid % WALK_SLOTS];
	bool known = w->n && w->pid == p->pid && w->tid == s->tid &&
		     w->maps_gen == p->maps_gen;
	bool exact = true;	/* the pc is not a return address */
	size_t at = 0, reused;	/* reuse()'s cursor over w's frames */

	*n = 0;
	if (!s->stack || !s->stack_size)
		return UNW_NO_STACK;
	for (;;) {
		struct module_func f;
		struct cfi_step st = { 0 };
		struct mapping *m;
		struct walk_state *ws;
		uint64_t vaddr, look, sp = regs.sp;
		bool below;	/* the CFA is below the base */
		int ret;

		if (*n == ICPPD_MAX_FRAMES)
			return UNW_TOO_DEEP;
		ws = &c->states[*n];
		*ws = (struct walk_state){ regs.ip, regs.sp, regs.bp, base,
			(uint32_t)log.n, exact, false };
		if (known && (reused = reuse(c, w, &at, ws, *n, &log.n,
					     &mem))) {
			c->stats.unwind_reused++;
			c->stats.unwind_frames_reused += reused;
			*n += reused;
			break;
		}
		m = space__find_map(p, regs.ip);
		/* With no base to reach, a stack ends where its frames stop
		 * returning into code: makecontext()'s trampoline returns
		 * to the uc_link it finds above it, as perf's unwinders
		 * end there too.  With a base, that is a broken walk. */
		if (!m || m->kind != REGION_MODULE) {
			if (base || !*n)
				return UNW_NO_MAPPING;
			break;
		}
		if (module__error(m->mod) ||
		    module__vaddr(m->mod, regs.ip - m->start + m->pgoff, &vaddr))
			return UNW_NO_MAPPING;
		/* A return address may be one past a call that ends the
		 * function (noreturn): look up the call itself.  One pushed
		 * by hand (makecontext() pushes its trampoline's start) is
		 * looked up as it is. */
		look = exact ? vaddr : vaddr - 1;
		if (module__function(m->mod, look, &f)) {
			if (exact || module__function(m->mod, vaddr, &f))
				return UNW_NO_CFI;
			look = vaddr;
		}
		ret = module__step(m->mod, look, &regs, &mem, &st);
		if (ret == -ENOENT)
			ret = fp_step(&regs, &mem, &st);
		ws->signal = st.signal;
		if (ret < 0 && ret != -EFAULT)
			return ret == -ENOENT ? UNW_NO_CFI : UNW_BAD_CFI;
		below = !base || st.cfa < base;
		/* the copy ends inside this frame: its function and height
		 * are known (the CFA is), its caller is not */
		if (ret == -EFAULT && below && st.cfa > sp) {
			c->frames[(*n)++] = (struct path_frame){ .mod = m->mod,
				.func = f.start, .name = f.name, .pc = vaddr,
				.height = height_of(base, st.cfa) };
			return UNW_TRUNCATED;
		}
		if (ret == -EFAULT && below)
			return UNW_TRUNCATED;
		c->frames[(*n)++] = (struct path_frame){ .mod = m->mod,
			.func = f.start, .name = f.name, .pc = vaddr,
			.height = height_of(base, st.cfa) };
		if (ret == CFI_OUTERMOST || !below || (ret == 0 && !regs.ip) ||
		    module__ends_walk(m->mod, f.start))
			break;
		/* a signal frame's caller may run on another stack (the
		 * handler's was a sigaltstack() block): the walk goes on with
		 * that stack's base, and a stack switch may move either way */
		if (ret == -EFAULT || (regs.sp <= sp && !st.signal))
			return UNW_BAD_FRAME;
		if (st.signal && stack__base(p, regs.sp, s->time, &base))
			base = 0;
		exact = st.signal;
	}
	/* complete: the thread's last walk now (unless its log is partial;
	 * then the slot keeps another walk, and the frames stay here) */
	if (!log.full && remember(c, w, p, s->tid, *n, log.n))
		*frames = w->frames;
	return UNW_COMPLETE;
}

/* @f[0, n) into @out, outermost first. */
static void reverse_frames(struct path_frame *out, const struct path_frame *f,
			   size_t n)
{
	for (size_t i = 0; i < n; i++)
		out[i] = f[n - 1 - i];
}

/* Counts a leaf copy's unwind (@st, @n frames innermost first), and
 * its sample of @key as unexplained unless the copy reached the
 * outermost frame, or the paths explain the sample's own CID (@known,
 * as for a copy not unwound: collector.c's leaf_left()) or the CID of
 * the outermost frame the copy reached. */
static void count_leaf(struct collector *c, const struct cid_key *key,
		       bool known, enum unwind_status st,
		       const struct path_frame *frames, size_t n)
{
	struct cid_key top = *key;
	bool explained = st == UNW_COMPLETE;

	c->stats.leaf_samples++;
	c->stats.leaf_whole += explained;
	c->stats.leaf_fragments += st == UNW_TRUNCATED && n;
	if (explained || known)
		return;
	if (st == UNW_TRUNCATED && n) {
		top.mod = frames[n - 1].mod;
		top.func = frames[n - 1].func;
		top.height = frames[n - 1].height;
		if (c->known(c->known_arg, &top))
			return;
	}
	c->stats.learn_unknown++;
}

int unwind__sample(struct collector *c, const struct perf_sample *s,
		   uint64_t base, const struct cid_key *leaf, bool leaf_known)
{
	struct process *p = space__find_proc(c, s->pid);	/* form_cid() made it */
	const struct path_frame *frames = c->frames;
	struct collector_path path;
	enum unwind_status st;
	size_t n = 0;

	st = p->exe ? unwind(c, p, s, base, &frames, &n) : UNW_NO_PROGRAM;
	if (leaf)
		count_leaf(c, leaf, leaf_known, st, frames, n);
	else
		c->stats.unwind[st]++;
	if (st != UNW_COMPLETE && (st != UNW_TRUNCATED || !n))
		return 0;
	reverse_frames(c->path, frames, n);
	path = (struct collector_path){ .program = p->exe, .pid = s->pid,
		.tid = s->tid, .frames = c->path, .n = n,
		.fragment = st == UNW_TRUNCATED, .leaf = leaf != NULL };
	return c->path_fn(c->path_arg, &path);
}
