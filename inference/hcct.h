/*
 * hcct.h - hot calling contexts (D'Elia, Demetrescu, Finocchi): the
 * contexts whose weight is at least phi of the total, found with a
 * Space-Saving heavy-hitters counter (Metwally, Agrawal, El Abbadi) of
 * ceil(2 / phi) + 1 counters, so memory is O(1/phi) whatever the number
 * of contexts streamed through it.
 *
 * Space-Saving guarantees: every context heavier than total / counters
 * is monitored, and a monitored count overestimates by at most its
 * error (the count it inherited on eviction).  A context is reported
 * hot when its count is at least phi * total, so no hot context is
 * missed; count - error is a lower bound on its true weight.
 */
#ifndef ICPPD_INFERENCE_HCCT_H
#define ICPPD_INFERENCE_HCCT_H

#include <stddef.h>
#include <stdint.h>

struct ss_item {
	uint32_t key;
	double count, error;
};

struct spacesaving;

/* NULL on a zero @capacity or out of memory. */
struct spacesaving *ss__new(size_t capacity);
void ss__delete(struct spacesaving *ss);
/* Adds @weight (> 0) to @key.  0 or -ENOMEM. */
int ss__add(struct spacesaving *ss, uint32_t key, double weight);
/* The monitored items, in no order. */
const struct ss_item *ss__items(const struct spacesaving *ss, size_t *n);
double ss__total(const struct spacesaving *ss);

/* The number of counters the HCCT uses for @phi in (0, 1]. */
size_t hcct__counters(double phi);

struct cct;

#define HCCT_NONE UINT32_MAX

/*
 * The HCCT of a CCT: its hot nodes and their ancestors, from one
 * Space-Saving pass over the CCT's records.  Positions index nodes[]
 * (CCT order: a parent before its children); up/first/next give the
 * tree over positions (HCCT_NONE for none).  count and error are per
 * CCT node, NAN where the node was not monitored.
 */
struct hcct {
	uint32_t *nodes;
	uint32_t *up, *first, *next;
	double *count, *error;
	size_t n;		/* positions */
	size_t ncounters;	/* Space-Saving counters used */
	size_t hot;		/* nodes at least phi of the total */
	double threshold;	/* phi times the streamed total */
};

/* Builds the HCCT of @t for @phi in (0, 1] into @h (zeroed first).
 * 0 or -ENOMEM; hcct__exit() either way. */
int hcct__build(struct cct *t, double phi, struct hcct *h);
void hcct__exit(struct hcct *h);

#endif
