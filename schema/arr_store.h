/*
 * arr_store.h - registering a binary rewritten by activation record
 * resizing: its module (new build-id), functions, a training map with
 * the predicted heights, and the search's results (arr_* tables).  All
 * between store__arr_begin() and store__arr_commit() (or _rollback()).
 * 0 or -1 with store__error() set, unless said otherwise.
 */
#ifndef ICPPD_SCHEMA_ARR_STORE_H
#define ICPPD_SCHEMA_ARR_STORE_H

#include <stdint.h>

#include "schema/store.h"

/* The module with @build_id (the lowest id); STORE_NONE when there is
 * none. */
int store__module_by_build(struct store *st, const char *build_id,
			   int64_t *id);

int store__arr_begin(struct store *st);
int store__arr_commit(struct store *st);
void store__arr_rollback(struct store *st);

/* A module for the rewritten file, with copies of @from's functions.
 * Fails when a module with @build_id exists already. */
int store__arr_module(struct store *st, int64_t from, const char *path,
		      const char *build_id, int64_t *id);
/* The function of module @module at @address. */
int store__function_at(struct store *st, int64_t module, uint64_t address,
		       int64_t *id);
/* The training map of program @module. */
int store__arr_map(struct store *st, int64_t module, int64_t *map);
struct store_node;
/* A node of map @map (its parent_id, function_id and context_id are
 * already the new ones); its id in *@id. */
int store__arr_node(struct store *st, int64_t map, const struct store_node *n,
		    int64_t depth, int64_t *id);
/* @frame < 0: not padable, @reason says why. */
int store__arr_function(struct store *st, int64_t module, int64_t function,
			int64_t frame, int64_t pad, const char *reason);
int store__arr_inseparable(struct store *st, int64_t module, int64_t context,
			   int64_t height, double samples);

struct arr_build_row {
	int64_t module_id, original_id, seed;
	double max_growth, samples, precise_before, precise_after;
	int64_t paths, paths_before, paths_after, deepest_before,
		deepest_after;
	double inseparable, search_ms;
};
int store__arr_build(struct store *st, const struct arr_build_row *b);

#endif
