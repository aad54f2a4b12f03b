/*
 * test_ring.c - the pull reader on a fake ring: records that wrap around
 * the end, a header that wraps, and corrupt sizes.
 */
#include <stdbool.h>
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

/* One pass that holds what it read: how many records it returned. */
static int drain_hold(struct ring *r)
{
	struct ring_read rd;
	int n = 0;

	ring__read_begin(r, &rd);
	while (ring__read_next(r, &rd))
		n++;
	ring__read_hold(r, &rd);
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

	/* A pass that holds what it read: the kernel gets nothing back,
	 * the next pass starts after it, and the records stay readable
	 * where they were read until given back. */
	{
		struct ring_read rd;
		uint64_t at[3], start;
		const struct perf_event_header *got[3];
		struct perf_sample ps;
		int wrapped = 0, bad = 0, whole = -1;

		pos = start = f->meta.data_tail;

		for (int i = 0; i < 3; i++) {
			h = synth_sample(&s, 1, 1, 20 + (uint64_t)i, 0x1000,
					 0x2000, 0, 1);
			put(f, pos, h, h->size);
			pos += h->size;
		}
		f->meta.data_head = pos;
		ring__read_begin(&r, &rd);
		for (int i = 0; i < 3; i++) {
			at[i] = rd.tail;
			got[i] = ring__read_next(&r, &rd);
		}
		ring__read_hold(&r, &rd);
		is_int(f->meta.data_tail, start, "a held pass gives nothing "
		       "back");
		for (int i = 0; i < 3; i++) {
			bool in = at[i] % DATA + 72 <= DATA;

			wrapped += !in;
			whole = in ? i : whole;
			if (ring__in_place(&r, got[i]) != in ||
			    (in && ring__at(&r, at[i]) != got[i]))
				bad++;
		}
		ok(wrapped > 0 && wrapped < 3 && !bad, "records whole in the "
		   "ring are held where they were read, those that wrapped "
		   "the end are not (%d of 3 wrapped)", wrapped);
		ntimes = 0;
		is_int(drain_hold(&r), 0, "the next pass starts after the "
		       "held records");
		ring__release(&r, at[whole]);
		is_int(f->meta.data_tail, at[whole], "released up to a position");
		ok(whole >= 0 &&
		   !record__parse_sample(ring__at(&r, at[whole]), &ps) &&
		   ps.time == 20 + (uint64_t)whole,
		   "a held record reads as it was read");
		ring__release(&r, pos + 4096);
		is_int(f->meta.data_tail, pos, "never past what was read");
		ring__release(&r, start);
		is_int(f->meta.data_tail, pos, "nor back, once all is given");
	}

	/* Head more than a ring ahead of tail: impossible, skip. */
	f->meta.data_head = f->meta.data_tail + DATA + 8;
	n = drain(&r);
	is_int(n, 0, "lapped ring delivers nothing");
	is_int(r.corrupt, 3, "lapped ring counted");
	free(f);
	return tap_done();
}
