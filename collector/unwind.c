/*
 * unwind.c - the CFI unwinder of training and validation: walks a
 * sample's stack copy to its outermost frame and hands the path, with
 * each frame's height, to the collector's path callback.
 */
#include <errno.h>
#include <stdlib.h>

#include "binary/module.h"
#include "collector/collector_int.h"

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
		if (!c->frames)
			return -ENOMEM;
	}
	c->path_fn = fn;
	c->path_arg = arg;
	return 0;
}

/*
 * A frame-pointer step, for code no CFI covers (Go's and hand-written
 * assembly, code built with frame pointers but no .eh_frame): the
 * caller's BP is saved at BP, its return address above it, and its SP
 * is just past them.  The same results as module__step(): 0; 1 at the
 * outermost frame, whose BP is 0 (the ABI's mark, which _start and Go's
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
		return 1;
	}
	if (regs->bp <= regs->sp || regs->bp % 8 || regs->bp > UINT64_MAX - 16)
		return -ENOENT;
	st->cfa = regs->bp + 16;
	if (cfi__mem_read(mem, regs->bp, &bp) ||
	    cfi__mem_read(mem, regs->bp + 8, &ra))
		return -EFAULT;
	*regs = (struct cfi_regs){ .sp = st->cfa, .bp = bp, .ip = ra };
	return 0;
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
				 size_t *n)
{
	struct cfi_regs regs = { .sp = s->sp, .bp = s->bp, .ip = s->uip };
	struct cfi_mem mem = { .start = s->sp, .data = s->stack,
			       .size = s->stack_size };
	bool exact = true;	/* the pc is not a return address */

	*n = 0;
	if (!s->stack || !s->stack_size)
		return UNW_NO_STACK;
	for (;;) {
		struct module_func f;
		struct cfi_step st = { 0 };
		struct mapping *m = space__find_map(p, regs.ip);
		uint64_t vaddr, look, sp = regs.sp;
		bool below;	/* the CFA is below the base */
		int ret;

		if (*n == ICPPD_MAX_FRAMES)
			return UNW_TOO_DEEP;
		/* With no base to reach, a stack ends where its frames stop
		 * returning into code: makecontext()'s trampoline returns
		 * to the uc_link it finds above it, as perf's unwinders
		 * end there too.  With a base, that is a broken walk. */
		if (!m || m->kind != REGION_MODULE)
			return !base && *n ? UNW_COMPLETE : UNW_NO_MAPPING;
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
		if (ret == 1 || !below || (ret == 0 && !regs.ip) ||
		    module__ends_walk(m->mod, f.start))
			return UNW_COMPLETE;
		/* a signal frame's caller may run on another stack (the
		 * handler's was a sigaltstack() block): the walk goes on with
		 * that stack's base, and a stack switch may move either way */
		if (ret == -EFAULT || (regs.sp <= sp && !st.signal))
			return UNW_BAD_FRAME;
		if (st.signal && stack__base(p, regs.sp, s->time, &base))
			base = 0;
		exact = st.signal;
	}
}

/* Reverses c->frames[0, n) into outermost-first order. */
static void reverse_frames(struct path_frame *f, size_t n)
{
	for (size_t i = 0; i < n / 2; i++) {
		struct path_frame t = f[i];

		f[i] = f[n - 1 - i];
		f[n - 1 - i] = t;
	}
}

int unwind__sample(struct collector *c, const struct perf_sample *s,
		   uint64_t base)
{
	struct process *p = space__find_proc(c, s->pid);	/* form_cid() made it */
	struct collector_path path;
	enum unwind_status st;
	size_t n;

	st = p->exe ? unwind(c, p, s, base, &n) : UNW_NO_PROGRAM;
	c->stats.unwind[st]++;
	if (st != UNW_COMPLETE && (st != UNW_TRUNCATED || !n))
		return 0;
	reverse_frames(c->frames, n);
	path = (struct collector_path){ .program = p->exe, .pid = s->pid,
		.tid = s->tid, .frames = c->frames, .n = n,
		.fragment = st == UNW_TRUNCATED };
	return c->path_fn(c->path_arg, &path);
}
