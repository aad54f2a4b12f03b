/*
 * fleet.c - the fleet's k-contexts from ClickHouse (see fleet.h).
 *
 * ClickHouse answers with TabSeparated rows "['f1',...]\tHOW\tW\tC":
 * the array is quoted strings with backslash escapes, parsed here with
 * every length checked against the reply (a server is input too).
 * Frames become CCT function frames named by their string, numbered in
 * the order they come.
 */
#include "export/fleet.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hindex.h"
#include "common/log.h"
#include "export/clickhouse.h"
#include "inference/kccf.h"

/* Frames of one context at most, and the longest frame name. */
#define FLEET_MAX_FRAMES 4096
#define FLEET_MAX_NAME 4096

struct names {
	struct hindex index;
	char **v;
	size_t n, cap;
};

/* Frame id of @name (defined in @t on first sight); 0 when out of
 * memory. */
static int64_t frame_of(struct names *ns, struct cct *t, const char *name)
{
	uint64_t h = hindex__string(name);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&ns->index, &p, h)) != HINDEX_NONE)
		if (!strcmp(ns->v[i], name))
			return (int64_t)i + 1;
	if (grow(&ns->v, &ns->cap, ns->n + 1, sizeof(*ns->v), 256) ||
	    !(ns->v[ns->n] = strdup(name)))
		return 0;
	if (hindex__insert(&ns->index, h, (uint32_t)ns->n) ||
	    cct__define(t, (int64_t)ns->n + 1, name, 0, 0)) {
		free(ns->v[ns->n]);
		return 0;
	}
	return (int64_t)++ns->n;
}

static void names_free(struct names *ns)
{
	for (size_t i = 0; i < ns->n; i++)
		free(ns->v[i]);
	free(ns->v);
	hindex__exit(&ns->index);
}

/* One quoted string at *@p (before @end) into @out: 0, or -1 when it is
 * malformed or longer than FLEET_MAX_NAME. */
static int parse_quoted(const char **p, const char *end, char *out)
{
	const char *s = *p;
	size_t n = 0;

	if (s >= end || *s++ != '\'')
		return -1;
	while (s < end && *s != '\'') {
		char c;

		if (clickhouse__unescape(&s, end, &c))
			return -1;
		if (n + 1 >= FLEET_MAX_NAME)
			return -1;
		out[n++] = c ? c : '?';
	}
	if (s >= end)
		return -1;
	out[n] = '\0';
	*p = s + 1;
	return 0;
}

struct load {
	struct run_profile *p;
	struct names names;
	int64_t frames[FLEET_MAX_FRAMES];
	char name[FLEET_MAX_NAME];
};

static enum cct_how how_of(const char *s, size_t n)
{
	for (int h = 0; h < CCT_NR_HOW; h++)
		if (strlen(cct_how__name((enum cct_how)h)) == n &&
		    !strncmp(s, cct_how__name((enum cct_how)h), n))
			return (enum cct_how)h;
	return CCT_UNKNOWN;
}

/* One reply line [@s, @end): its context into the CCT.  0, -EPROTO for
 * a malformed line, -ENOMEM. */
static int load_line(struct load *l, const char *s, const char *end)
{
	const char *tab;
	size_t n = 0;
	uint32_t node = CCT_ROOT;
	unsigned long certain;
	double w;
	char *e;

	if (s >= end || *s++ != '[')
		return -EPROTO;
	while (s < end && *s != ']') {
		if (n && *s++ != ',')
			return -EPROTO;
		if (n == FLEET_MAX_FRAMES || parse_quoted(&s, end, l->name))
			return -EPROTO;
		if (!(l->frames[n++] = frame_of(&l->names, l->p->cct, l->name)))
			return -ENOMEM;
	}
	if (s >= end || *s++ != ']' || s >= end || *s++ != '\t' || !n)
		return -EPROTO;
	tab = memchr(s, '\t', (size_t)(end - s));
	if (!tab)
		return -EPROTO;
	w = strtod(tab + 1, &e);
	if (*e != '\t' || !(w > 0) || w > 1e18)
		return -EPROTO;
	certain = strtoul(e + 1, &e, 10);
	if (e != end)
		return -EPROTO;
	for (size_t i = 0; i < n; i++)
		if (cct__child(l->p->cct, node, l->frames[i], &node))
			return -ENOMEM;
	l->p->stats.samples += w;
	l->p->stats.by_how[how_of(s, (size_t)(tab - s))] += w;
	/* certain frames: the least of the stacks summed here, within
	 * the context (>= 1: the leaf is the sample's own) */
	return cct__add(l->p->cct, node, certain < 1 ? 1 : certain > n ?
			(uint32_t)n : (uint32_t)certain,
			how_of(s, (size_t)(tab - s)), w);
}

/* Every line of @reply (@len bytes); at a malformed one, its number
 * (from 1) into *@bad and where it starts into *@at. */
static int load_reply(struct load *l, const char *reply, size_t len,
		      size_t *bad, const char **at)
{
	const char *s = reply, *end = reply + len;
	int r = 0;

	for (*bad = 1; s < end; ++*bad) {
		const char *e = memchr(s, '\n', (size_t)(end - s));

		*at = s;
		if (!e)
			return -EPROTO;
		r = load_line(l, s, e);
		if (r)
			return r;
		s = e + 1;
	}
	return 0;
}

int fleet__load(struct run_profile *p, const char *reply, size_t len)
{
	struct load *l = calloc(1, sizeof(*l));
	const char *at;
	size_t bad;
	int r;

	if (!l)
		return -ENOMEM;
	l->p = p;
	r = load_reply(l, reply, len, &bad, &at);
	names_free(&l->names);
	free(l);
	return r;
}

/* " AND col = 'v'" with @v escaped. */
static int equals(struct ch_text *b, const char *col, const char *v)
{
	return clickhouse__append(b, " AND ") || clickhouse__append(b, col) ||
	       clickhouse__append(b, " = '") || clickhouse__quote(b, v) ||
	       clickhouse__append(b, "'") ? -ENOMEM : 0;
}

/* The query's FROM and WHERE: the stacks table of @c's database and
 * @q's filters; @events: the table says which event each row counts
 * (one an earlier icppd made, never exported to since, holds CPU
 * samples alone). */
static int from_where(struct ch_text *b, const struct clickhouse *c,
		      const struct fleet_query *q, bool events)
{
	char clause[200];

	snprintf(clause, sizeof(clause), " FROM %s.stacks WHERE end_time >="
		 " toDateTime(%" PRId64 ") AND start_time <= toDateTime(%"
		 PRId64 ")%s", clickhouse__database(c), q->since_ns / 1000000000,
		 q->until_ns ? q->until_ns / 1000000000 :
		 (int64_t)4102444800LL, !events ? (q->offcpu ? " AND 0" : "") :
		 q->offcpu ? " AND event = 'off-cpu'" : " AND event = 'cpu'");
	if (clickhouse__append(b, clause) ||
	    (q->host && equals(b, "host", q->host)))
		return -ENOMEM;
	if (q->exe && strchr(q->exe, '/'))
		return equals(b, "program", q->exe);
	if (q->exe)
		return clickhouse__append(b, " AND (program = '") ||
		       clickhouse__quote(b, q->exe) ||
		       clickhouse__append(b, "' OR endsWith(program, '/") ||
		       clickhouse__quote(b, q->exe) ||
		       clickhouse__append(b, "'))") ? -ENOMEM : 0;
	return 0;
}

int fleet__profile(const struct fleet_query *q, struct run_profile *p)
{
	const char *url = q->url;
	struct load *l = calloc(1, sizeof(*l));
	struct clickhouse *c;
	char err[512], slice[64];
	const char *reply;
	struct ch_text sql = { 0 };
	int64_t hosts = 0, segments = 0;
	const char *at;
	size_t bad;
	bool events;
	int ret = -1, r = 0;

	memset(p, 0, sizeof(*p));
	p->cct = cct__new();
	c = clickhouse__new(url, err, sizeof(err));
	if (!l || !p->cct || !c) {
		log_error("report --from: %s", c ? "out of memory" : err);
		goto out;
	}
	l->p = p;
	clickhouse__set_timeout(c, q->timeout_s);
	snprintf(err, sizeof(err), "SELECT count() FROM system.columns WHERE "
		 "database = '%s' AND table = 'stacks' AND name = 'event'",
		 clickhouse__database(c));
	if (clickhouse__query(c, err, NULL, NULL, 0, &reply))
		goto server;
	events = *reply == '1';
	/* what was read: hosts and segments */
	if (clickhouse__append(&sql, "SELECT uniqExact(host), "
			       "uniqExact(segment)") ||
	    from_where(&sql, c, q, events))
		goto nomem;
	if (clickhouse__query(c, sql.v, NULL, NULL, 0, &reply))
		goto server;
	if (sscanf(reply, "%" SCNd64 "\t%" SCNd64, &hosts, &segments) != 2) {
		log_error("report --from: %s: an answer that is no count: %.80s",
			  url, reply);
		goto out;
	}
	if (!segments) {
		log_error("report --from: %s: no exported run matches%s (icppd "
			  "export ships runs there)", url, q->offcpu ?
			  " with off-CPU time" : "");
		ret = RUN_PROFILE_NONE;
		goto out;
	}
	/* the k-contexts, summed by ClickHouse */
	sql.n = 0;
	if (q->k == KCCF_INF)
		snprintf(slice, sizeof(slice), "stack");
	else
		snprintf(slice, sizeof(slice), "arraySlice(stack, -%" PRIu64 ")",
			 (uint64_t)q->k + 1);
	if (clickhouse__append(&sql, "SELECT ") ||
	    clickhouse__append(&sql, slice) ||
	    clickhouse__append(&sql, " AS context, how, sum(weight),"
			       " min(certain_frames)") ||
	    from_where(&sql, c, q, events) ||
	    clickhouse__append(&sql, " GROUP BY context, how"
			       " FORMAT TabSeparated"))
		goto nomem;
	if (clickhouse__query(c, sql.v, NULL, NULL, 0, &reply))
		goto server;
	r = load_reply(l, reply, strlen(reply), &bad, &at);
	if (r == -ENOMEM)
		goto nomem;
	if (r) {
		log_error("report --from: %s: row %zu is no stack, how, weight "
			  "(above 0, at most 1e18) and frames: %.*s", url, bad,
			  (int)strcspn(at, "\n") < 100 ?
			  (int)strcspn(at, "\n") : 100, at);
		goto out;
	}
	p->fleet = true;
	p->offcpu = q->offcpu;
	snprintf(p->run.kind, sizeof(p->run.kind), "fleet");
	snprintf(p->run.command, sizeof(p->run.command), "%s: %" PRId64
		 " host%s, %" PRId64 " run%s", url, hosts, hosts == 1 ? "" :
		 "s", segments, segments == 1 ? "" : "s");
	p->run.samples = (int64_t)(p->stats.samples + 0.5);
	p->run.user_ns = p->run.system_ns = -1;
	ret = 0;
	goto out;
nomem:
	log_error("report --from: out of memory");
	goto out;
server:
	log_error("report --from: %s", clickhouse__error(c));
out:
	free(sql.v);
	if (l)
		names_free(&l->names);
	free(l);
	clickhouse__delete(c);
	return ret;
}

int fleet__read(void *query, struct run_profile *p)
{
	const struct fleet_query *q = query;

	return fleet__profile(q, p);
}
