/*
 * fuzz_folded.c - folded stack files as compare reads them
 * (folded__line), then the comparison of the profile with itself
 * (inference/metrics.h), which must score 1 when it has weight.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "profile/folded_keys.h"
#include "inference/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LINES 4096

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct flat_entry *)a)->key,
		      ((const struct flat_entry *)b)->key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flat_entry *e = calloc(MAX_LINES, sizeof(*e));
	char *text = malloc(size + 1), *line, *next;
	struct compare_result r;
	double total = 0;
	size_t n = 0, kept = 0;

	if (!e || !text)
		goto out;
	memcpy(text, data, size);
	text[size] = '\0';
	for (line = text; line && n < MAX_LINES; line = next) {
		double w;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (folded__line(line, &w))
			continue;
		if (!(w >= 0) || isinf(w) || !isfinite(total += w))
			goto out;	/* compare refuses the file */
		e[n].key = line;
		e[n++].weight = w;
	}
	qsort(e, n, sizeof(*e), cmp_key);
	for (size_t i = 0; i < n; i++) {	/* as compare merges keys */
		if (kept && !strcmp(e[kept - 1].key, e[i].key))
			e[kept - 1].weight += e[i].weight;
		else
			e[kept++] = e[i];
	}
	metrics__compare(e, kept, e, kept, 0.01, &r);
	if (isnan(r.overlap) || r.overlap < 0 || r.overlap > 1 + 1e-9 ||
	    (total > 0 && isfinite(total) && fabs(r.overlap - 1) > 1e-6))
		__builtin_trap();
out:
	free(e);
	free(text);
	return 0;
}
