/*
 * resize.h - activation record resizing, the whole job (icppd arr):
 * the training path map of a binary's build read from the store, which
 * functions' frames can grow in place decided (binary/frame.h), the
 * pads that separate colliding CIDs searched (inference/arr.h), a copy
 * of the binary written with the grown prologues and a new build-id,
 * and the copy registered with its predicted path map, so that record,
 * validate and report work on it without training again.
 */
#ifndef ICPPD_ARR_RESIZE_H
#define ICPPD_ARR_RESIZE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "binary/elfimage.h"
#include "binary/frame.h"
#include "inference/arr.h"

struct resize_request {
	const char *db;		/* the database with the training */
	const char *binary;	/* the program to resize */
	const char *output;	/* the copy to write (not @binary) */
	double growth;		/* the deepest training stack may grow so
				 * many times (>= 1) */
	double target;		/* stop at this share of precise training
				 * samples (0..1) */
	uint64_t seed;		/* of the search; 0: 1 */
};

/* A function of the training map. */
struct resize_func {
	int64_t id, module_id;
	uint64_t address;
	char *name;		/* owned */
	struct frame_info frame;
	const char *why;	/* not padable: why (static); NULL: padable */
};

/* What the job did; every pointer owned. */
struct resize_outcome {
	char output[PATH_MAX];	/* the copy, canonical */
	char build_id[2 * ELF_IMAGE_BUILD_ID_MAX + 1];	/* its, in hex */
	bool known;		/* the same pads as an earlier run: the copy
				 * was written again, registered already */
	int64_t program;	/* the original's module id */
	struct resize_func *funcs;	/* res.pads[i] is funcs[i]'s pad */
	size_t nfuncs;
	struct arr_result res;
	double search_ms;
};

/*
 * Resizes @q->binary into @q->output and registers the copy, as above.
 * Nothing to gain (no pad makes more training samples precise) is an
 * error, and no copy is written; a copy that cannot be registered is
 * removed.  0, or -1 after logging why.  @out needs resize__exit()
 * whatever the result.
 */
int resize__run(const struct resize_request *q, struct resize_outcome *out);

/* Frees what @o holds and leaves it zeroed; NULL: nothing. */
void resize__exit(struct resize_outcome *o);

#endif
