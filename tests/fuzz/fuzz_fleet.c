/*
 * fuzz_fleet.c - what a ClickHouse server answers, as icppd parses it: a
 * fleet report's k-contexts (fleet__load) and a pulled path map
 * (pull__parse).  A server is input like any file: every row must be
 * refused or parsed within its bytes, and a pulled node's parent must
 * come before it (or be marked unmergeable: itself).
 */
#include <stdlib.h>
#include <string.h>

#include "export/fleet.h"
#include "export/pull.h"
#include "inference/cct.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run_profile p = { 0 };
	struct pull_map m;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	/* the reply as the client holds it: NUL-terminated */
	memcpy(text, data, size);
	text[size] = '\0';
	p.cct = cct__new();
	if (p.cct && !fleet__load(&p, text, size) && p.stats.samples < 0)
		__builtin_trap();
	cct__delete(p.cct);
	if (!pull__parse(text, size, &m)) {
		for (size_t i = 0; i < m.n; i++)
			if (m.nodes[i].parent < -1 ||
			    m.nodes[i].parent > (int64_t)i ||
			    !m.nodes[i].module || !m.nodes[i].function)
				__builtin_trap();
		if (m.n && !m.program)
			__builtin_trap();
	}
	pull_map__exit(&m);
	free(text);
	return 0;
}
