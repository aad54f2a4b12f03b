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
 * Walks the stack copy from the sampled registers to the outermost
 * frame.  A frame is outermost when its CFI says the return address is
 * undefined (glibc's _start and clone3) or when its CFA is at or above
 * the stack base (a start routine without such CFI).  Heights use the
 * same base as the sample's CID, so frames[innermost] is the CID.
 * Frames are stored innermost first in c->frames; *@n is their count.
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
		struct mapping *m;
		uint64_t vaddr, look, sp = regs.sp;
		long i = space__find_map(p, regs.ip);
		int ret;

		if (*n == ICPPD_MAX_FRAMES)
			return UNW_TOO_DEEP;
		if (i < 0 || p->maps[i].kind != REGION_MODULE)
			return UNW_NO_MAPPING;
		m = &p->maps[i];
		if (module__error(m->mod) ||
		    module__vaddr(m->mod, regs.ip - m->start + m->pgoff, &vaddr))
			return UNW_NO_MAPPING;
		/* A return address may be one past a call that ends the
		 * function (noreturn): look up the call itself. */
		look = exact ? vaddr : vaddr - 1;
		if (module__function(m->mod, look, &f))
			return UNW_NO_CFI;
		ret = module__step(m->mod, look, &regs, &mem, &st);
		if (ret < 0 && ret != -EFAULT)
			return ret == -ENOENT ? UNW_NO_CFI : UNW_BAD_CFI;
		/* the copy ends inside this frame: its function and height
		 * are known (the CFA is), its caller is not */
		if (ret == -EFAULT && st.cfa < base && st.cfa > sp) {
			c->frames[(*n)++] = (struct path_frame){ .mod = m->mod,
				.func = f.start, .name = f.name, .pc = vaddr,
				.height = (int64_t)(base - st.cfa) };
			return UNW_TRUNCATED;
		}
		if (ret == -EFAULT && st.cfa < base)
			return UNW_TRUNCATED;
		c->frames[(*n)++] = (struct path_frame){ .mod = m->mod,
			.func = f.start, .name = f.name, .pc = vaddr,
			.height = (int64_t)(base - st.cfa) };
		if (ret == 1 || st.cfa >= base)
			return UNW_COMPLETE;
		if (ret == -EFAULT || regs.sp <= sp)
			return UNW_BAD_FRAME;
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
