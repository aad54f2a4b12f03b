/*
 * base.h - a baseline for a differential report (base.c): the
 * k-contexts of profile, or of the folded lines of a file, by key.
 */
#ifndef ICPPD_PROFILE_BASE_H
#define ICPPD_PROFILE_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/run_profile.h"

/*
 * The k-contexts of profile @p (folded__keys()'s keys and weights), or
 * of the folded lines of @in cut to k (keys made printable: a file is
 * anyone's to write).  NULL with *@err -ENOMEM, folded__keys()'s
 * errors, -EIO, or -EINVAL at line *@bad_line that is not a folded
 * line.
 */
struct profile_base;
struct profile_base *profile_base__of(const struct run_profile *p, uint32_t k,
				      int *err);
struct profile_base *profile_base__read(FILE *in, uint32_t k, int *err,
					size_t *bad_line);
/* NULL: nothing. */
void profile_base__delete(struct profile_base *b);
double profile_base__total(const struct profile_base *b);
/* Its contexts: @i below profile_base__size(), the weight into *@w. */
size_t profile_base__size(const struct profile_base *b);
const char *profile_base__key(const struct profile_base *b, size_t i,
			      double *w);
/* Whether @key is one of @b's contexts, its weight (0: not) in *@w. */
bool profile_base__weight(const struct profile_base *b, const char *key,
			  double *w);

#endif
