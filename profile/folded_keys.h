/*
 * folded_keys.h - a profile's k-contexts as folded keys, and folded
 * lines read back (folded_keys.c).
 */
#ifndef ICPPD_PROFILE_FOLDED_KEYS_H
#define ICPPD_PROFILE_FOLDED_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "inference/cct.h"

/* The rounding group of a k-context's weight: @leaf names its innermost
 * frame, and its process when the context starts with one (the groups
 * whose weights are whole counts: rounding keeps each group's sum);
 * @process is that process frame (0: none), whose weights are whole
 * too. */
struct folded_group {
	int64_t leaf, process;
};

/* Calls @fn for every k-context of @t with its exclusive weight: its
 * @n frames, outermost first (valid in the call), and its group.  0,
 * the first non-zero return of @fn, or kccf__build's -ENOMEM or
 * -E2BIG. */
int folded__stacks(struct cct *t, uint32_t k,
		   int (*fn)(void *arg, const int64_t *frames, size_t n,
			     struct folded_group group, double weight),
		   void *arg);

/* What a ';' of a name is in a folded key (folded_keys.c says why). */
#define FOLDED_SEMICOLON "\\x3b"

/* Calls @fn for every k-context of @t (exclusive weights): @key is its
 * frames, outermost first, joined by ';', a ';' in a name written as
 * FOLDED_SEMICOLON (valid in the call), and its group.  0, the first
 * non-zero return of @fn, or kccf__build's -ENOMEM or -E2BIG. */
int folded__keys(struct cct *t, uint32_t k,
		 int (*fn)(void *arg, const char *key,
			   struct folded_group group, double weight),
		 void *arg);

/* A frame of a folded key with its names' ';' back, in place. */
void folded__unescape(char *frame);

/* The last @k + 1 frames of folded key @key (all with KCCF_INF): a
 * pointer into it. */
const char *folded__cut(const char *key, uint32_t k);

/* One line of a folded file, "frame;...;frame WEIGHT", split in place:
 * the frames stay in @line, trailing newline and weight cut off.  0 with
 * the weight (finite, >= 0) in *@w, FOLDED_BLANK for a blank line, -1
 * when the line is neither. */
int folded__line(char *line, double *w);
#define FOLDED_BLANK 1

/* Logs why the k-contexts could not be built (-E2BIG: too deep for
 * that k; else out of memory). */
void folded__forest_error(int err);

#endif
