/*
 * validation.h - printing a validation run's scores (icppd validate).
 * The scores come from the store (schema/validation.h); what could not
 * be scored comes from the recorder, passed in by name so that this
 * folder knows nothing of the collector.
 */
#ifndef ICPPD_REPORT_VALIDATION_H
#define ICPPD_REPORT_VALIDATION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct store;

struct validation_unscored {
	const char *name;	/* "truncated", "no_stack", ..., "map_full" */
	uint64_t samples;
};

struct validation_input {
	int64_t run_id;
	uint64_t unresolved;	/* samples with no CID at all */
	/* samples with a CID but no whole true stack, by reason; the text
	 * format names "truncated" apart and sums the rest as "other" */
	const struct validation_unscored *unscored;
	size_t nunscored;
};

/* Scores run @in->run_id (stored in v_validation) and writes them to
 * @out, as JSON or text; the samples scored in *@scored.  0, or -1 after
 * logging why. */
int report__validation(struct store *st, FILE *out, bool json,
		       const struct validation_input *in, uint64_t *scored);

#endif
