/*
 * retain.h - the daemon's retention: whole runs of kind "daemon" are
 * deleted, oldest first, when they ended before a time, or while the
 * database uses more than a number of bytes (pages in use, not the file
 * size: freed pages are reused before the file grows).
 */
#ifndef ICPPD_SCHEMA_RETAIN_H
#define ICPPD_SCHEMA_RETAIN_H

#include <stdint.h>

#include "schema/store.h"

/* Deletes daemon runs other than @keep that ended before @before_ns
 * (0: none by age), then the oldest while the database uses more than
 * @max_bytes (0: no limit).  The number deleted in *@deleted.  0 or -1. */
int store__retain(struct store *st, int64_t keep, int64_t before_ns,
		  int64_t max_bytes, int64_t *deleted);

/* The bytes of the database's pages in use; 0 or -1. */
int store__used_bytes(struct store *st, int64_t *bytes);

#endif
