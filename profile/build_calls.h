/*
 * build_calls.h - the direct calls of one build (binary/callsites.h)
 * with the names of the functions they join, as one packed blob: what
 * the store keeps per build-id, so that a build's code is decoded once
 * in a database's life, not at every inference, and its calls stay
 * readable once the file is gone or rebuilt.
 *
 * The blob comes back from a database anyone who can write it may have
 * crafted: build_calls__unpack() checks every count, offset and order
 * against the blob's length before use, and its work and memory are
 * linear in that length.
 *
 * Layout (little-endian): "ICPC", u32 version, then u64 counts (calls,
 * exports, functions, unknown sites, bytes of names, taken functions);
 * the calls, the exports, the functions, the taken functions, then the
 * names, each NUL-terminated; a name is its byte offset there.  Rows
 * are LEB128 varints, differences where values are close
 * (build_calls.c): a call is its return address, caller, kind (direct,
 * indirect, or an import's name), callee when direct, height change; an
 * export its address and name; a function its start and label; a taken
 * function its start.
 */
#ifndef ICPPD_PROFILE_BUILD_CALLS_H
#define ICPPD_PROFILE_BUILD_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "binary/callsites.h"
#include "binary/module.h"

/* A function some call or export names, as the module's symbols did. */
struct build_func {
	uint64_t start;
	const char *label;	/* the symbol, or MODULE+0xADDR */
	bool symbol;		/* label is the symbol */
};

struct build_calls {
	/* every name, labels too, in cs.names; a call to an import has
	 * callee 0: it is linked by name */
	struct callsites cs;
	size_t names_len;	/* bytes of cs.names */
	struct build_func *funcs;	/* sorted by start, no two alike */
	size_t nfuncs;
};

/* Decodes @m's calls (callsites__scan()) and names the functions they
 * join.  0 or callsites__scan()'s -errno. */
int build_calls__scan(struct module *m, struct build_calls *out);

/* The blob of @bc into *@blob (malloc'ed), *@len bytes.  0 or -ENOMEM. */
int build_calls__pack(const struct build_calls *bc, unsigned char **blob,
		      size_t *len);

/* @bc from @blob's @len bytes.  0, -ESTALE (a blob another version
 * wrote: decode the build again), -EINVAL (not a blob, or
 * inconsistent), -ENOMEM. */
int build_calls__unpack(const void *blob, size_t len, struct build_calls *bc);

/* The function starting at @start, or NULL. */
const struct build_func *build_calls__function(const struct build_calls *bc,
					       uint64_t start);

void build_calls__exit(struct build_calls *bc);

#endif
