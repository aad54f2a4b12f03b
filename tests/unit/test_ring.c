/*
 * test_ring.c - the pull reader on a fake ring: records that wrap around
 * the end, a header that wraps, and corrupt sizes.
 */
#include <stdlib.h>

#include "collector/record.h"
#include "collector/ring.h"
#include "tests/tap.h"
#include "tests/unit/synth.h"

#define DATA 256

struct fake {
	struct perf_event_mmap_page meta;
	uint8_t data[DATA];
};

static uint64_t times[16];
static int ntimes;

/* One pass of the pull reader: how many records it returned. */
static int drain(struct ring *r)
{
	const struct perf_event_header *h;
	struct ring_read rd;
	struct perf_sample s;
	int n = 0;

	ring__read_begin(r, &rd);
	while ((h = ring__read_next(r, &rd))) {
		n++;
		if (!record__parse_sample(h, &s) && ntimes < 16)
			times[ntimes++] = s.time;
	}
	ring__read_end(r, &rd);
	return n;
}

/* Writes @len bytes at ring position @pos (wrapping). */
static void put(struct fake *f, uint64_t pos, const void *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		f->data[(pos + i) % DATA] = ((const uint8_t *)p)[i];
}

int main(void)
{
	static struct ring r;
	struct fake *f = calloc(1, sizeof(*f));
	struct synth s;
	struct perf_event_header *h;
	uint64_t pos;
	int n;

	ring__init(&r, f, DATA);
	r.data = f->data;

	/* Three 72-byte samples starting at 200: the second wraps its
	 * body, the header of the third wraps too (200+72+72 = 344). */
	f->meta.data_tail = 200;
	pos = 200;
	for (int i = 0; i < 3; i++) {
		h = synth_sample(&s, 1, 1, 100 + (uint64_t)i, 0x1000, 0x2000, 0, 1);
		put(f, pos, h, h->size);
		pos += h->size;
	}
	f->meta.data_head = pos;
	{
		struct ring_read rd;

		ring__read_begin(&r, &rd);
		ok(ring__read_next(&r, &rd) != NULL, "a record pulled");
		is_int(f->meta.data_tail, 200,
		       "the kernel gets nothing back before the pass ends");
		ring__read_end(&r, &rd);
		is_int(f->meta.data_tail, 272, "then exactly what was read");
		f->meta.data_tail = 200;
	}
	ntimes = 0;
	n = drain(&r);
	is_int(n, 3, "three records drained");
	is_int(ntimes, 3, "three records decode, wrapped or not");
	is_int(times[1], 101, "wrapped record intact");
	is_int(times[2], 102, "record with wrapped header intact");
	is_int(f->meta.data_tail, pos, "tail advanced to head");
	is_int(r.corrupt, 0, "no corruption counted");

	/* A header claiming more bytes than were written. */
	h = synth_sample(&s, 1, 1, 7, 0x1000, 0x2000, 0, 1);
	h->size = 200;
	put(f, pos, h, 72);
	f->meta.data_head = pos + 72;
	ntimes = 0;
	n = drain(&r);
	is_int(n, 0, "oversized record not delivered");
	is_int(r.corrupt, 1, "oversized record counted as corruption");
	is_int(f->meta.data_tail, pos + 72, "reader skipped to head");
	pos += 72;

	/* A header with size 0 would loop forever if trusted. */
	h = synth_sample(&s, 1, 1, 8, 0x1000, 0x2000, 0, 1);
	h->size = 0;
	put(f, pos, h, 72);
	f->meta.data_head = pos + 72;
	n = drain(&r);
	is_int(n, 0, "zero-size record not delivered");
	is_int(r.corrupt, 2, "zero-size record counted");
	pos += 72;

	/* Only half a header available: wait for the rest. */
	h = synth_sample(&s, 1, 1, 9, 0x1000, 0x2000, 0, 1);
	put(f, pos, h, h->size);
	f->meta.data_head = pos + 4;
	n = drain(&r);
	is_int(n, 0, "partial header left for later");
	is_int(f->meta.data_tail, pos, "tail not moved past a partial header");
	f->meta.data_head = pos + h->size;
	ntimes = 0;
	n = drain(&r);
	is_int(n, 1, "record delivered once complete");
	is_int(times[0], 9, "completed record intact");

	/* Head more than a ring ahead of tail: impossible, skip. */
	f->meta.data_head = f->meta.data_tail + DATA + 8;
	n = drain(&r);
	is_int(n, 0, "lapped ring delivers nothing");
	is_int(r.corrupt, 3, "lapped ring counted");
	free(f);
	return tap_done();
}
