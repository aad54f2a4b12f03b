/*
 * ring.h - reader of one perf_event mmap ring buffer.
 *
 * The kernel writes records at data_head; we read from data_tail.
 * Protocol (tools/lib/perf/mmap.c): acquire-load data_head, copy out
 * records, release-store data_tail.  The reader pulls records itself, as
 * perf does (perf_mmap__read_init, read_event, read_done).  Records that
 * wrap around the end of the buffer are copied into a bounce buffer so
 * the reader always sees a contiguous record.  A header whose size is below the header size or
 * beyond the bytes available means the ring is corrupt: the reader skips
 * to data_head and counts it, rather than read garbage.
 */
#ifndef ICPPD_COLLECTOR_RING_H
#define ICPPD_COLLECTOR_RING_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ring {
	struct perf_event_mmap_page *meta;	/* first page of the mapping */
	uint8_t *data;
	size_t size;		/* data size: a power of two */
	size_t map_len;		/* whole mapping, 0 when not mmap'ed */
	uint64_t corrupt;	/* times the reader had to skip */
	/* Where the next pass starts when the last one kept its records
	 * (ring__read_hold): ahead of data_tail, which the kernel reads. */
	uint64_t read;
	bool holding;
	/* header.size is 16 bits; records are read in place from here */
	uint8_t bounce[65536] __attribute__((aligned(8)));
};

/* Maps @data_pages (a power of two) pages of @fd's ring.  0 or -errno. */
int ring__map(struct ring *r, int fd, size_t data_pages);
/* Attaches to memory laid out like a ring (tests). */
void ring__init(struct ring *r, void *mem, size_t data_size);
void ring__unmap(struct ring *r);

/* One pass over the records written so far. */
struct ring_read {
	uint64_t head, tail;
};
/* Takes the kernel's head: the pass reads up to there. */
void ring__read_begin(struct ring *r, struct ring_read *rd);
/* The next whole record, or NULL at the end of the pass (or at a
 * corrupt header: the pass then skips to the head and counts it).  Valid
 * until the next call. */
const struct perf_event_header *ring__read_next(struct ring *r,
						struct ring_read *rd);
/* Gives what was read back to the kernel. */
void ring__read_end(struct ring *r, const struct ring_read *rd);

/*
 * Or keeps it: the next pass starts where this one ended, and the
 * records read stay where they are, unwritten by the kernel, until
 * ring__release() gives them back.  A record the pass returned is held
 * in place when ring__in_place() says so (one that wrapped the end was
 * returned in the bounce buffer), at ring__at() of the position
 * (rd->tail) it was read from.
 */
void ring__read_hold(struct ring *r, const struct ring_read *rd);
bool ring__in_place(const struct ring *r, const struct perf_event_header *h);
const struct perf_event_header *ring__at(const struct ring *r, uint64_t pos);
/* Gives the kernel back everything before @pos (at most where the last
 * pass ended); the rest stays held. */
void ring__release(struct ring *r, uint64_t pos);

#endif
