/*
 * fuzz_module.c - the module loader (binary/module.h) on any bytes: what
 * the root daemon does with every file a watched process maps.  Symbol
 * lookup, file offsets and the build-id of whatever loads, and its
 * call sites (binary/callsites.h) as `icppd sites` decodes them.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "binary/callsites.h"
#include "binary/module.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct module *m = module__open_memory("fuzz", data, size);
	uint64_t probe[FUZZ_MAX_PROBES];
	size_t n;

	if (!m)
		return 0;
	if (module__error(m)) {
		module__delete(m);
		return 0;
	}
	if (strlen(module__build_id(m)) > 40 ||
	    strspn(module__build_id(m), "0123456789abcdef") !=
	    strlen(module__build_id(m)))
		__builtin_trap();
	n = fuzz_probes(data, size, probe);
	for (size_t i = 0; i < n; i++) {
		struct module_func f;
		uint64_t vaddr;

		if (!module__function(m, probe[i], &f) &&
		    (f.start > probe[i] || (f.name && strlen(f.name) > size)))
			__builtin_trap();
		(void)module__vaddr(m, probe[i], &vaddr);
	}
	(void)module__nr_symbols(m);
	/* every site: a call at least 2 bytes long inside its caller, a
	 * callee below the caller's frame (or a tail call's: a direct jump,
	 * the callee taking the frame), found again by its address */
	{
		struct callsites cs;

		if (!callsites__scan(m, &cs)) {
			for (size_t i = 0; i < cs.n; i++) {
				const struct callsite *c = &cs.v[i];
				bool tail = c->delta == CALLSITE_TAIL;

				if ((tail ? c->callee == CALLSITE_INDIRECT :
					    c->delta < 8) ||
				    c->ret < c->caller + 2 ||
				    (i && cs.v[i - 1].ret > c->ret) ||
				    !callsites__find(&cs, c->ret))
					__builtin_trap();
			}
			callsites__exit(&cs);
		}
	}
	module__delete(m);
	return 0;
}
