/*
 * fuzz_record.c - the perf record decoder and the collector behind it.
 *
 * The input is a stream of records as they sit in a ring (header, then
 * header.size bytes in all); each is decoded by every parser, whatever
 * its type, then fed to a collector that unwinds stack copies, as the
 * root daemon does with what the kernel hands it.  The module cache
 * lives across inputs, as in the daemon.  Inputs whose first byte is
 * odd are decoded as record --kernel's, with a call chain in each
 * sample, named through a small kallsyms of the harness's own.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/module.h"
#include "collector/aggregate.h"
#include "collector/collector.h"
#include "collector/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct module_cache *modules;
static char kallsyms[] = "/tmp/fuzz_record-kallsyms-XXXXXX";

/* A kallsyms of three functions, written once. */
static const char *kallsyms_file(void)
{
	static const char text[] = "ffffffff81000000 T _stext\n"
		"ffffffff81000100 t do_syscall_64\n"
		"ffffffff81000200 W weak_one\tmodule]\n"
		"0000000000000000 T zero\n";
	static bool made;
	int fd;

	if (!made && (fd = mkstemp(kallsyms)) >= 0) {
		made = write(fd, text, sizeof(text) - 1) ==
		       (ssize_t)sizeof(text) - 1;
		close(fd);
	}
	return made ? kallsyms : NULL;
}

/* A complete path has frames, at most ICPPD_MAX_FRAMES of them. */
static int on_path(void *arg, const struct collector_path *p)
{
	(void)arg;
	if (!p->n || p->n > ICPPD_MAX_FRAMES)
		__builtin_trap();
	return 0;
}

static void decode(const struct perf_event_header *h)
{
	struct perf_sample s;
	struct rec_mmap2 m;
	struct rec_comm c;
	struct rec_task t;
	uint64_t v;
	uint32_t pid, tid;

	if (!record__parse_sample(h, &s) && s.stack &&
	    (s.stack < (const uint8_t *)h ||
	     s.stack + s.stack_size > (const uint8_t *)h + h->size))
		__builtin_trap();
	if (!record__parse_sample_chain(h, &s) &&
	    ((s.nchain && (const uint8_t *)(s.chain + s.nchain) >
	      (const uint8_t *)h + h->size) ||
	     (s.stack && s.stack + s.stack_size >
	      (const uint8_t *)h + h->size)))
		__builtin_trap();
	if (!record__parse_mmap2(h, &m) &&
	    (m.filename < (const char *)h ||
	     m.filename + strlen(m.filename) >= (const char *)h + h->size))
		__builtin_trap();
	if (!record__parse_comm(h, &c) &&
	    c.comm + strlen(c.comm) >= (const char *)h + h->size)
		__builtin_trap();
	(void)record__parse_task(h, &t);
	(void)record__parse_lost(h, &v);
	(void)record__sample_task(h, &pid, &tid);
	(void)record__time(h, &v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aggregate *agg = aggregate__new(1000);
	struct collector *col;
	uint64_t buf[65536 / 8];
	size_t off = 0;

	if (!modules)
		modules = module_cache__new();
	col = agg && modules ? collector__new(modules, agg) : NULL;
	if (!col) {
		aggregate__delete(agg);
		return 0;
	}
	collector__set_unwind(col, on_path, NULL);
	if (size && (data[0] & 1) && kallsyms_file())
		collector__set_kernel_chains(col, kallsyms_file());
	while (size - off >= sizeof(struct perf_event_header)) {
		struct perf_event_header *h = (void *)buf;

		memcpy(h, data + off, sizeof(*h));
		if (h->size < sizeof(*h) || h->size > size - off)
			break;
		memcpy(buf, data + off, h->size);	/* aligned, as a ring copy */
		off += h->size;
		decode(h);
		collector__peek(col, h);
		collector__process(col, h);
	}
	collector__delete(col);
	aggregate__delete(agg);
	return 0;
}
