/*
 * ring.c - perf mmap ring reader.
 */
#include "collector/ring.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/sys.h"

int ring__map(struct ring *r, int fd, size_t data_pages)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	void *mem;

	if (!data_pages || (data_pages & (data_pages - 1)))
		return -EINVAL;
	mem = icppd_sys.mmap(NULL, (data_pages + 1) * pg,
			     PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		return -errno;
	ring__init(r, mem, data_pages * pg);
	r->data = (uint8_t *)mem + pg;
	r->map_len = (data_pages + 1) * pg;
	return 0;
}

void ring__init(struct ring *r, void *mem, size_t data_size)
{
	r->meta = mem;
	r->data = (uint8_t *)mem + sizeof(struct perf_event_mmap_page);
	r->size = data_size;
	r->map_len = 0;
	r->corrupt = 0;
	r->read = 0;
	r->holding = false;
}

void ring__unmap(struct ring *r)
{
	if (r->map_len)
		icppd_sys.munmap(r->meta, r->map_len);
	r->meta = NULL;
	r->map_len = 0;
}

void ring__read_begin(struct ring *r, struct ring_read *rd)
{
	rd->head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	rd->tail = r->holding ? r->read : r->meta->data_tail;
	/* the kernel never lets this happen */
	if (rd->head - r->meta->data_tail > r->size ||
	    rd->head - rd->tail > r->size) {
		r->corrupt++;
		rd->tail = rd->head;
	}
}

const struct perf_event_header *ring__read_next(struct ring *r,
						struct ring_read *rd)
{
	struct perf_event_header hdr;
	size_t mask = r->size - 1, off = rd->tail & mask;
	uint64_t avail = rd->head - rd->tail;
	const struct perf_event_header *h;

	if (avail < sizeof(hdr))
		return NULL;
	if (off + sizeof(hdr) <= r->size) {
		memcpy(&hdr, r->data + off, sizeof(hdr));
	} else {
		size_t first = r->size - off;

		memcpy(&hdr, r->data + off, first);
		memcpy((uint8_t *)&hdr + first, r->data, sizeof(hdr) - first);
	}
	if (hdr.size < sizeof(hdr) || hdr.size > avail) {
		r->corrupt++;
		rd->tail = rd->head;
		return NULL;
	}
	if (off + hdr.size <= r->size) {
		h = (const void *)(r->data + off);
	} else {
		size_t first = r->size - off;

		memcpy(r->bounce, r->data + off, first);
		memcpy(r->bounce + first, r->data, hdr.size - first);
		h = (const void *)r->bounce;
	}
	rd->tail += hdr.size;
	return h;
}

void ring__read_end(struct ring *r, const struct ring_read *rd)
{
	r->holding = false;
	__atomic_store_n(&r->meta->data_tail, rd->tail, __ATOMIC_RELEASE);
}

void ring__read_hold(struct ring *r, const struct ring_read *rd)
{
	r->read = rd->tail;
	r->holding = true;
}

bool ring__in_place(const struct ring *r, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)h;

	return p >= r->data && p < r->data + r->size;
}

const struct perf_event_header *ring__at(const struct ring *r, uint64_t pos)
{
	return (const void *)(r->data + (pos & (r->size - 1)));
}

void ring__release(struct ring *r, uint64_t pos)
{
	if (!r->holding)
		return;
	if (pos - r->meta->data_tail > r->read - r->meta->data_tail)
		pos = r->read;	/* not past what was read */
	if (pos == r->read)
		r->holding = false;
	__atomic_store_n(&r->meta->data_tail, pos, __ATOMIC_RELEASE);
}
