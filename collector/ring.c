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
}

void ring__unmap(struct ring *r)
{
	if (r->map_len)
		icppd_sys.munmap(r->meta, r->map_len);
	r->meta = NULL;
	r->map_len = 0;
}

int ring__drain(struct ring *r, ring_cb cb, void *arg)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	size_t mask = r->size - 1;
	int count = 0, ret = 0;

	if (head - tail > r->size) {	/* the kernel never lets this happen */
		r->corrupt++;
		tail = head;
	}
	while (tail < head && !ret) {
		struct perf_event_header hdr;
		const struct perf_event_header *h;
		size_t off = tail & mask;
		uint64_t avail = head - tail;

		if (avail < sizeof(hdr))
			break;
		if (off + sizeof(hdr) <= r->size) {
			memcpy(&hdr, r->data + off, sizeof(hdr));
		} else {
			size_t first = r->size - off;

			memcpy(&hdr, r->data + off, first);
			memcpy((uint8_t *)&hdr + first, r->data, sizeof(hdr) - first);
		}
		if (hdr.size < sizeof(hdr) || hdr.size > avail) {
			r->corrupt++;
			tail = head;
			break;
		}
		if (off + hdr.size <= r->size) {
			h = (const void *)(r->data + off);
		} else {
			size_t first = r->size - off;

			memcpy(r->bounce, r->data + off, first);
			memcpy(r->bounce + first, r->data, hdr.size - first);
			h = (const void *)r->bounce;
		}
		tail += hdr.size;
		count++;
		ret = cb(arg, h);
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return ret ? ret : count;
}
