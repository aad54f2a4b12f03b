/*
 * store_int.h - what the files of the store share: the handle and the
 * helpers that turn SQLite errors into "PATH: what: why" messages.
 * Not part of the store's contract (store.h, profile_store.h).
 */
#ifndef ICPPD_SCHEMA_STORE_INT_H
#define ICPPD_SCHEMA_STORE_INT_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "schema/store.h"

struct func_slot {
	const struct module *mod;	/* NULL = empty */
	uint64_t addr;
	int64_t id;
};

struct store {
	sqlite3 *db;
	bool readonly;		/* opened by store__open_readonly() */
	char *path;
	char err[512];
	struct mod_slot {		/* module pointer -> id cache */
		const struct module *mod;
		int64_t id;
	} *mods;
	size_t nmods, mods_cap;
	struct func_slot *funcs;	/* (module, address) -> id */
	size_t nfuncs, funcs_cap;	/* funcs_cap: power of two */
	sqlite3_stmt *ins_module, *sel_module, *sel_build, *ins_func, *sel_func,
		     *ins_cid, *ins_unres, *ins_thread, *upd_run, *ins_map,
		     *sel_map, *ins_ctx, *ins_node, *upd_node, *ins_counter;
	/* prepared on first use by report_store.c */
	sqlite3_stmt *ins_unknown, *ins_inferred;
};

void store__set_error(struct store *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Sets the error from SQLite's last one, with a hint; returns -1. */
int store__db_error(struct store *st, const char *what);
/* Runs @sql (no rows).  0 or -1. */
int store__exec(struct store *st, const char *sql, const char *what);
/* Steps a prepared statement that returns nothing; resets it. */
int store__step_done(struct store *st, sqlite3_stmt *s, const char *what);
/* Steps a SELECT of one id; resets it. */
int store__select_id(struct store *st, sqlite3_stmt *s, int64_t *id);
/* Runs an INSERT ... RETURNING id; the id in *@id. */
int store__returning_id(struct store *st, sqlite3_stmt *s, int64_t *id,
			const char *what);

#endif
