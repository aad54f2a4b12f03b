/*
 * ring.h - reader of one perf_event mmap ring buffer.
 *
 * The kernel writes records at data_head; we read from data_tail.
 * Protocol (tools/lib/perf/mmap.c): acquire-load data_head, copy out
 * records, release-store data_tail.  Records that wrap around the end of
 * the buffer are copied into a bounce buffer so the callback always sees
 * a contiguous record.  A header whose size is below the header size or
 * beyond the bytes available means the ring is corrupt: the reader skips
 * to data_head and counts it, rather than read garbage.
 */
#ifndef ICPPD_COLLECTOR_RING_H
#define ICPPD_COLLECTOR_RING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

struct ring {
	struct perf_event_mmap_page *meta;	/* first page of the mapping */
	uint8_t *data;
	size_t size;		/* data size: a power of two */
	size_t map_len;		/* whole mapping, 0 when not mmap'ed */
	uint64_t corrupt;	/* times the reader had to skip */
	uint8_t bounce[65536];	/* header.size is 16 bits */
};

/* Maps @data_pages (a power of two) pages of @fd's ring.  0 or -errno. */
int ring__map(struct ring *r, int fd, size_t data_pages);
/* Attaches to memory laid out like a ring (tests). */
void ring__init(struct ring *r, void *mem, size_t data_size);
void ring__unmap(struct ring *r);

/* Called for each record; a non-zero return stops the drain early (the
 * record counts as consumed). */
typedef int (*ring_cb)(void *arg, const struct perf_event_header *h);

/* Delivers every complete record; returns how many, or the callback's
 * non-zero value. */
int ring__drain(struct ring *r, ring_cb cb, void *arg);

#endif
