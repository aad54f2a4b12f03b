/*
 * report.h - what report and compare share: opening a database for
 * reading, parsing --k, and the folded lines of a profile.
 */
#ifndef ICPPD_DAEMON_REPORT_H
#define ICPPD_DAEMON_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "inference/cct.h"
#include "inference/kccf.h"

struct store;

/* Opens an existing database: writable when the file and its folder
 * are, else read-only.  NULL after logging why. */
struct store *report__open(const char *path);

/* "inf" or a whole number >= 0 into *@k (KCCF_INF).  0, or -1 after a
 * usage message for subcommand @cmd. */
int report__parse_k(const char *cmd, const char *arg, uint32_t *k);

/* Calls @fn for every k-context of @t (exclusive weights): @key is its
 * frames, outermost first, joined by ';' (valid in the call).  0, the
 * first non-zero return of @fn, or kccf__build's -ENOMEM or -E2BIG. */
int report__folded(struct cct *t, uint32_t k,
		   int (*fn)(void *arg, const char *key, double weight),
		   void *arg);

/* Logs why the k-contexts could not be built (-E2BIG: too deep for
 * that k; else out of memory). */
void report__forest_error(int err);

/* One line of a folded file, "frame;...;frame WEIGHT", split in place:
 * the frames stay in @line, trailing newline and weight cut off.  0 with
 * the weight (finite, >= 0) in *@w, 1 for a blank line, -1 when the
 * line is neither. */
int report__folded_line(char *line, double *w);

/* Prints @w with no decimals when it is whole, else with up to 3. */
void report__weight(FILE *out, double w);

#endif
