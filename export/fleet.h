/*
 * fleet.h - a profile of the fleet: the k-contexts of the stacks every
 * host exported to ClickHouse (export.h), aggregated by ClickHouse
 * itself (arraySlice of each stack's innermost k + 1 frames, GROUP BY),
 * so only the aggregate comes back, whatever the number of samples.
 */
#ifndef ICPPD_EXPORT_FLEET_H
#define ICPPD_EXPORT_FLEET_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/run_profile.h"

struct fleet_query {
	const char *url;		/* the server */
	uint32_t k;			/* KCCF_INF: whole stacks */
	int64_t since_ns, until_ns;	/* 0: unbounded */
	const char *host;		/* NULL: every host */
	const char *exe;		/* a program's path, or its last
					 * component; NULL: all */
	long timeout_s;			/* each query's longest; 0: the
					 * default (clickhouse.h) */
	bool offcpu;			/* the off-CPU stacks (microseconds
					 * blocked), not the CPU samples */
};

/*
 * The fleet's profile at @q->url (the Distributed, or single-server,
 * tables of icppd export --schema) into @p: one record per k-context
 * and inference outcome, every frame named as the hosts named it (no
 * module, no address), and @p->run saying what was read ("fleet",
 * hosts and segments).  0, RUN_PROFILE_NONE (logged) when nothing
 * matches, -1 after logging why.
 */
int fleet__profile(const struct fleet_query *q, struct run_profile *p);

/* fleet__profile() of @query (a struct fleet_query), as a profile
 * request's reader (profile/profile.h, PROFILE_READ). */
int fleet__read(void *query, struct run_profile *p);

/* A reply's rows "['f1',...]\tHOW\tWEIGHT\tCERTAIN\n" (@len bytes, a
 * NUL not needed) into @p->cct (made by the caller) and @p->stats: 0,
 * -EPROTO at a malformed row, -ENOMEM.  What fleet__profile() parses
 * the server's answer with. */
int fleet__load(struct run_profile *p, const char *reply, size_t len);

#endif
