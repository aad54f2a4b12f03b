/*
 * record.c - bounds-checked decoding of perf_event records.
 */
#include "collector/record.h"

#include <errno.h>
#include <string.h>

struct cursor {
	const uint8_t *p, *end;
};

static int take(struct cursor *c, void *dst, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -EINVAL;
	memcpy(dst, c->p, n);
	c->p += n;
	return 0;
}

static struct cursor body(const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)h;

	return (struct cursor){ p + sizeof(*h), p + h->size };
}

/* PERF_SAMPLE_STACK_USER: { u64 size; u8 data[size]; u64 dyn_size if
 * size }, dyn_size being how much of it the kernel could copy. */
static int parse_stack(struct cursor *c, struct perf_sample *out)
{
	uint64_t size, dyn;

	if (take(c, &size, 8))
		return -EINVAL;
	out->has_stack = true;
	out->stack_cap = size;
	if (!size)
		return c->p == c->end ? 0 : -EINVAL;
	if ((uint64_t)(c->end - c->p) < size)
		return -EINVAL;
	out->stack = c->p;
	c->p += size;
	if (take(c, &dyn, 8) || dyn > size || c->p != c->end)
		return -EINVAL;
	out->stack_size = dyn;
	return 0;
}

static int parse_sample(const struct perf_event_header *h,
			struct perf_sample *out, bool chain)
{
	struct cursor c;
	uint64_t abi;

	if (h->type != PERF_RECORD_SAMPLE || h->size < sizeof(*h))
		return -EINVAL;
	c = body(h);
	memset(out, 0, sizeof(*out));
	if (take(&c, &out->id, 8) || take(&c, &out->ip, 8) ||
	    take(&c, &out->pid, 4) || take(&c, &out->tid, 4) ||
	    take(&c, &out->time, 8))
		return -EINVAL;
	if (chain) {	/* nr, then nr entries: bounded by the record */
		if (take(&c, &out->nchain, 8) ||
		    out->nchain > (uint64_t)(c.end - c.p) / 8)
			return -EINVAL;
		out->chain = (const uint64_t *)(const void *)c.p;
		c.p += out->nchain * 8;
	}
	if (take(&c, &abi, 8))
		return -EINVAL;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
		if (abi != PERF_SAMPLE_REGS_ABI_64)
			return -EINVAL;
		/* Registers come in bit order of the mask: BP, SP, IP. */
		if (take(&c, &out->bp, 8) || take(&c, &out->sp, 8) ||
		    take(&c, &out->uip, 8))
			return -EINVAL;
		out->has_regs = true;
	}
	return c.p == c.end ? 0 : parse_stack(&c, out);
}

size_t record__copy_trimmed(const struct perf_event_header *h,
			    uint64_t stack_bytes, uint8_t *dst)
{
	const uint8_t *p = (const uint8_t *)h;
	size_t at, keep;
	uint64_t size, dyn;

	/* the copy is the record's last field: { size, data, dyn_size } */
	if (h->type != PERF_RECORD_SAMPLE || !stack_bytes ||
	    stack_bytes % 8 || h->size < sizeof(*h) + stack_bytes + 16) {
		memcpy(dst, h, h->size);
		return h->size;
	}
	at = h->size - stack_bytes - 16;
	memcpy(&size, p + at, 8);
	memcpy(&dyn, p + h->size - 8, 8);
	if (size != stack_bytes || dyn > size) {
		memcpy(dst, h, h->size);
		return h->size;
	}
	keep = (dyn + 7) & ~(size_t)7;
	memcpy(dst, h, at + 8 + keep);
	memcpy(dst + at, &(uint64_t){ keep }, 8);
	memcpy(dst + at + 8 + keep, &dyn, 8);
	((struct perf_event_header *)(void *)dst)->size =
		(uint16_t)(at + 16 + keep);
	return at + 16 + keep;
}

int record__parse_sample(const struct perf_event_header *h,
			 struct perf_sample *out)
{
	return parse_sample(h, out, false);
}

int record__parse_sample_chain(const struct perf_event_header *h,
			       struct perf_sample *out)
{
	return parse_sample(h, out, true);
}

/* The sample_id trailer: the last 24 bytes of a non-sample record. */
static int trailer(const struct perf_event_header *h, size_t fixed,
		   struct sample_id *sid)
{
	struct cursor c = body(h);

	if (h->size < sizeof(*h) + fixed + 24)
		return -EINVAL;
	c.p = c.end - 24;
	return take(&c, &sid->pid, 4) || take(&c, &sid->tid, 4) ||
	       take(&c, &sid->time, 8) || take(&c, &sid->id, 8) ? -EINVAL : 0;
}

/* A NUL-terminated string inside [c->p, limit). */
static int string(struct cursor *c, const uint8_t *limit, const char **s)
{
	const uint8_t *nul = memchr(c->p, '\0', (size_t)(limit - c->p));

	if (limit < c->p || !nul)
		return -EINVAL;
	*s = (const char *)c->p;
	return 0;
}

int record__parse_switch(const struct perf_event_header *h,
			 struct rec_switch *out)
{
	/* a CPU-wide event's (the daemon's) names the other task first;
	 * the sample_id is the task switching either way */
	if ((h->type != PERF_RECORD_SWITCH &&
	     h->type != PERF_RECORD_SWITCH_CPU_WIDE) ||
	    trailer(h, h->type == PERF_RECORD_SWITCH ? 0 : 8, &out->sid))
		return -EINVAL;
	out->out = h->misc & PERF_RECORD_MISC_SWITCH_OUT;
	out->preempted = out->out &&
			 (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
	return 0;
}

int record__parse_mmap2(const struct perf_event_header *h,
			struct rec_mmap2 *out)
{
	struct cursor c;
	uint32_t maj, min;
	uint64_t ino_gen;

	if (h->type != PERF_RECORD_MMAP2 || trailer(h, 64, &out->sid))
		return -EINVAL;
	c = body(h);
	if (take(&c, &out->pid, 4) || take(&c, &out->tid, 4) ||
	    take(&c, &out->start, 8) || take(&c, &out->len, 8) ||
	    take(&c, &out->pgoff, 8) || take(&c, &maj, 4) ||
	    take(&c, &min, 4) || take(&c, &out->ino, 8) ||
	    take(&c, &ino_gen, 8) || take(&c, &out->prot, 4) ||
	    take(&c, &out->flags, 4))
		return -EINVAL;
	/* With PERF_RECORD_MISC_MMAP_BUILD_ID the maj/min/ino words hold a
	 * build-id instead; icppd does not request that format. */
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
		maj = min = 0, out->ino = 0;
	out->dev = ((uint64_t)maj << 32) | min;
	if (out->start + out->len < out->start)
		return -EINVAL;
	return string(&c, c.end - 24, &out->filename);
}

int record__parse_comm(const struct perf_event_header *h, struct rec_comm *out)
{
	struct cursor c;

	if (h->type != PERF_RECORD_COMM || trailer(h, 8, &out->sid))
		return -EINVAL;
	c = body(h);
	if (take(&c, &out->pid, 4) || take(&c, &out->tid, 4))
		return -EINVAL;
	out->exec = h->misc & PERF_RECORD_MISC_COMM_EXEC;
	return string(&c, c.end - 24, &out->comm);
}

int record__parse_task(const struct perf_event_header *h, struct rec_task *out)
{
	struct cursor c;

	if ((h->type != PERF_RECORD_FORK && h->type != PERF_RECORD_EXIT) ||
	    trailer(h, 24, &out->sid))
		return -EINVAL;
	c = body(h);
	return take(&c, &out->pid, 4) || take(&c, &out->ppid, 4) ||
	       take(&c, &out->tid, 4) || take(&c, &out->ptid, 4) ||
	       take(&c, &out->time, 8) ? -EINVAL : 0;
}

int record__parse_lost(const struct perf_event_header *h, uint64_t *lost)
{
	struct cursor c = body(h);
	uint64_t id;
	struct sample_id sid;

	if (h->type == PERF_RECORD_LOST)
		return trailer(h, 16, &sid) || take(&c, &id, 8) ||
		       take(&c, lost, 8) ? -EINVAL : 0;
	if (h->type == PERF_RECORD_LOST_SAMPLES)
		return trailer(h, 8, &sid) || take(&c, lost, 8) ? -EINVAL : 0;
	return -EINVAL;
}

int record__sample_task(const struct perf_event_header *h, uint32_t *pid,
			uint32_t *tid)
{
	struct cursor c = body(h);

	if (h->type != PERF_RECORD_SAMPLE || h->size < sizeof(*h))
		return -EINVAL;
	c.p += 16;	/* identifier, ip */
	return c.p > c.end || take(&c, pid, 4) || take(&c, tid, 4) ?
	       -EINVAL : 0;
}

int record__time(const struct perf_event_header *h, uint64_t *time)
{
	struct sample_id sid;

	if (h->size < sizeof(*h))
		return -EINVAL;
	if (h->type == PERF_RECORD_SAMPLE) {
		struct cursor c = body(h);

		c.p += 24;	/* identifier, ip, pid/tid */
		return c.p > c.end || take(&c, time, 8) ? -EINVAL : 0;
	}
	if (trailer(h, 0, &sid))
		return -EINVAL;
	*time = sid.time;
	return 0;
}
