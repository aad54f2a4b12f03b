/*
 * fuzz_module.c - the module loader (binary/module.h) on any bytes: what
 * the root daemon does with every file a watched process maps.  Symbol
 * lookup, file offsets and the build-id of whatever loads.
 */
#include <stdio.h>
#include <string.h>

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
		module__free(m);
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
	module__free(m);
	return 0;
}
