/*
 * pull.h - fleet learning: the path maps every host exported (export.h
 * ships each run's with it) pulled into this database for a build it has
 * not learned yet, so that its first samples of a program are explained
 * by what the fleet learned.
 *
 * Per build-id the server holds, per source (a host's database), one
 * map per exported run; a pull takes each source's latest (a map grows
 * with each run) and merges them into the local map of that build as a
 * local run's counts would be (schema/export_store.h), remembering the
 * counts as pulled: an export ships only this database's own.
 */
#ifndef ICPPD_EXPORT_PULL_H
#define ICPPD_EXPORT_PULL_H

#include <stddef.h>
#include <stdint.h>

#include "schema/export_store.h"

/* Nodes of one pull at most (a map is bounded as the recorder's is). */
#define PULL_MAX_NODES (1u << 20)

/* A server's reply parsed: nodes parents first, strings pointing into
 * the text parsed. */
struct pull_map {
	const char *program;		/* the first source's path */
	struct store_pulled_node *nodes;
	size_t n, cap;
	int64_t sources;
};

/*
 * Parses TabSeparated rows "SOURCE NODE PARENT PROGRAM MODULE
 * MODULE_BUILD ADDRESS FUNCTION CALL_SITE HEIGHT SELF TOTAL", sorted by
 * source and node, in place (@text, @len bytes, is unescaped where it
 * lies) into @m: a parent is resolved among its source's earlier rows
 * (a node whose parent is not there is kept, and merged not).  0,
 * -EPROTO for a malformed row, -E2BIG past PULL_MAX_NODES, -ENOMEM.
 * pull_map__exit() after either.
 */
int pull__parse(char *text, size_t len, struct pull_map *m);
void pull_map__exit(struct pull_map *m);

struct pull_result {
	int64_t builds, paths, sources;		/* merged now */
	char error[512];			/* a failed pull's why */
};

/*
 * Pulls from the ClickHouse server at @url the fleet's map of each
 * build that run @run_id sampled (0: none), and of @build_id (NULL:
 * none), that this database never pulled from that server (or found
 * none of, more than an hour ago).  0 with what was merged in @res;
 * PULL_REMOTE_FAILED with @res->error when the server failed (nothing
 * is remembered: the next call asks again); -1 after logging a local
 * failure.
 */
#define PULL_REMOTE_FAILED 1
int pull__builds(struct store *st, const char *url, int64_t run_id,
		 const char *build_id, struct pull_result *res);
/* Whether run @run_id sampled a build that pull__builds() would ask
 * @target (a URL without credentials: clickhouse__url()) for: 1, 0, or
 * -1 with store__error() saying why. */
int pull__needed(struct store *st, const char *target, int64_t run_id);
/* The same through a server connection of the caller's (@res is added
 * to, not cleared). */
struct clickhouse;
int pull__with(struct store *st, struct clickhouse *c, int64_t run_id,
	       const char *build_id, struct pull_result *res);

#endif
