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

#include "common/clock.h"
#include "common/grow.h"
#include "common/hindex.h"
#include "common/log.h"
#include "export/chschema.h"
#include "export/clickhouse.h"
#include "inference/kccf.h"

/* The views over the local tables (a server without a cluster) read
 * every row and filter after: ClickHouse 18.16 pushes a query's
 * conditions into a view only when asked (a host's report read 1.7
 * million rollup rows where the sort key finds 38 thousand). */
#define PUSH_DOWN "enable_optimize_predicate_expression=1"

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

/* What a report reads (chschema.h): the rollups' hours [lo, hi), the
 * raw rows outside them; @events: the stacks say which event each row
 * counts (a database an earlier icppd made, never exported to since,
 * holds CPU samples alone, and no rollups). */
struct plan {
	bool events;
	int64_t lo, hi;		/* seconds; lo == hi: no rollup read */
	int64_t since_s, until_s;	/* the window */
	int64_t raw_from;	/* raw rows kept from (raw_days=N), or 0 */
	bool widened;		/* edges before it made whole hours */
};

/* The filters every part shares: event, host, program. */
static int filters(struct ch_text *b, const struct fleet_query *q,
		   const struct plan *pl)
{
	if (clickhouse__append(b, !pl->events ? (q->offcpu ? " AND 0" : "") :
			       q->offcpu ? " AND event = 'off-cpu'" :
			       " AND event = 'cpu'") ||
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

/* " FROM db.TABLE WHERE ..." of @c's database: the raw stacks of the
 * window outside the rollups' hours, or (@rollup) the rollup of those
 * hours (@table: the stacks', a host's stacks', or the runs'). */
static int from_where(struct ch_text *b, const struct clickhouse *c,
		      const struct fleet_query *q, const struct plan *pl,
		      const char *table)
{
	const char *col = strcmp(table, "segments") ? "bucket" : "start_time";
	char clause[320];
	int n;

	if (!strcmp(table, "stacks"))
		n = snprintf(clause, sizeof(clause), " FROM %s.stacks WHERE "
			     "end_time >= toDateTime(%" PRId64 ") AND "
			     "start_time <= toDateTime(%" PRId64 ")",
			     clickhouse__database(c), pl->since_s, pl->until_s);
	else
		n = snprintf(clause, sizeof(clause), " FROM %s.%s WHERE "
			     "%s >= toDateTime(%" PRId64 ") AND %s < "
			     "toDateTime(%" PRId64 ")", clickhouse__database(c),
			     table, col, pl->lo, col, pl->hi);
	if (!strcmp(table, "stacks") && pl->lo < pl->hi && n > 0 &&
	    (size_t)n < sizeof(clause))
		snprintf(clause + n, sizeof(clause) - (size_t)n, " AND NOT "
			 "(start_time >= toDateTime(%" PRId64 ") AND start_time "
			 "< toDateTime(%" PRId64 "))", pl->lo, pl->hi);
	return clickhouse__append(b, clause) || filters(b, q, pl) ? -ENOMEM : 0;
}

/* The rollup a report of @q reads: a host's, or the program's. */
static const char *rollup_of(const struct fleet_query *q)
{
	return q->host ? "host_stacks_rollup" : "stacks_rollup";
}

/*
 * What @c's database has (chschema.h) and which hours of @q's window
 * its rollups hold: whole hours from the later of the window's start
 * and the rollups' own (rows before them are read raw), to the window's
 * end.  A segment starting in such an hour lies in the window whatever
 * its end, so the rollup's sum is the raw rows' sum.
 */
static int plan_of(struct clickhouse *c, const struct fleet_query *q,
		   struct plan *pl)
{
	const char *db = clickhouse__database(c), *reply;
	char sql[512];
	int64_t since = -1, n = 0, rollups = 0, events = 0;

	*pl = (struct plan){ .since_s = q->since_ns / 1000000000,
		.until_s = q->until_ns ? q->until_ns / 1000000000 :
			   (int64_t)4102444800LL };
	snprintf(sql, sizeof(sql), "SELECT (SELECT count() FROM system.columns "
		 "WHERE database = '%s' AND table = 'stacks' AND name = "
		 "'event'), (SELECT count() FROM system.tables WHERE database = "
		 "'%s' AND name IN ('rollups', 'segments', 'stacks_rollup', "
		 "'host_stacks_rollup'))", db, db);
	if (clickhouse__query(c, sql, NULL, NULL, 0, &reply))
		return -1;
	if (sscanf(reply, "%" SCNd64 "\t%" SCNd64, &events, &rollups) != 2)
		events = rollups = 0;
	pl->events = events == 1;
	if (!pl->events || rollups != 4)
		return 0;
	snprintf(sql, sizeof(sql), "SELECT toUInt32(max(since)), count(), "
		 "toUInt32(max(raw_from)) FROM %s.rollups", db);
	/* a cluster where one server lacks them: all raw */
	if (clickhouse__query(c, sql, NULL, NULL, 0, &reply) ||
	    sscanf(reply, "%" SCNd64 "\t%" SCNd64 "\t%" SCNd64, &since, &n,
		   &pl->raw_from) != 3 || n < 1 || since < 0)
		return 0;
	/* inward to whole hours; outward where the raw rows are gone */
	if (pl->since_s < pl->raw_from && pl->since_s >= since) {
		pl->lo = pl->since_s - pl->since_s % CHSCHEMA_BUCKET_S;
		pl->widened = pl->lo < pl->since_s;
	} else {
		pl->lo = (pl->since_s > since ? pl->since_s : since) +
			 CHSCHEMA_BUCKET_S - 1;
		pl->lo -= pl->lo % CHSCHEMA_BUCKET_S;
	}
	pl->hi = pl->until_s + 1;
	if (pl->hi <= pl->raw_from && pl->hi % CHSCHEMA_BUCKET_S) {
		pl->hi += CHSCHEMA_BUCKET_S - pl->hi % CHSCHEMA_BUCKET_S;
		pl->widened = true;
	}
	pl->hi -= pl->hi % CHSCHEMA_BUCKET_S;
	if (pl->hi <= pl->lo)
		pl->lo = pl->hi = 0;
	return 0;
}

/* "SELECT @rollup_cols FROM @rollup WHERE (its hours) UNION ALL SELECT
 * @raw_cols FROM stacks WHERE (the rest) @raw_tail" into @b; the raw
 * part alone when no rollup is read. */
static int both_parts(struct ch_text *b, const struct clickhouse *c,
		      const struct fleet_query *q, const struct plan *pl,
		      const char *rollup, const char *rollup_cols,
		      const char *raw_cols, const char *raw_tail)
{
	int ret = 0;

	if (pl->lo < pl->hi)
		ret = clickhouse__append(b, "SELECT ") ||
		      clickhouse__append(b, rollup_cols) ||
		      from_where(b, c, q, pl, rollup) ||
		      clickhouse__append(b, " UNION ALL ");
	return ret || clickhouse__append(b, "SELECT ") ||
	       clickhouse__append(b, raw_cols) ||
	       from_where(b, c, q, pl, "stacks") ||
	       clickhouse__append(b, raw_tail) ? -ENOMEM : 0;
}

/* What a report of @q reads, counted by the server: its hosts, runs,
 * their stack rows and the rollup's rows, into @n.  0, -ENOMEM, -EIO
 * (the server's error in @c) or -EPROTO (an answer that is no count,
 * logged). */
static int count_read(struct clickhouse *c, const struct fleet_query *q,
		      const struct plan *pl, int64_t n[4])
{
	struct ch_text sql = { 0 };
	const char *reply;
	int ret = 0;

	if (clickhouse__append(&sql, "SELECT uniqExact(host), "
			       "uniqExact(segment), sum(rows), (") ||
	    (pl->lo < pl->hi ? clickhouse__append(&sql, "SELECT count()") ||
			       from_where(&sql, c, q, pl, rollup_of(q)) :
			       clickhouse__append(&sql, "SELECT 0")) ||
	    clickhouse__append(&sql, ") FROM (") ||
	    both_parts(&sql, c, q, pl, "segments", "host, segment, rows",
		       "host, segment, count() AS rows",
		       " GROUP BY host, segment") ||
	    clickhouse__append(&sql, ")"))
		ret = -ENOMEM;
	else if (clickhouse__query(c, sql.v, PUSH_DOWN, NULL, 0, &reply))
		ret = -EIO;
	else if (sscanf(reply, "%" SCNd64 "\t%" SCNd64 "\t%" SCNd64 "\t%"
			SCNd64, &n[0], &n[1], &n[2], &n[3]) != 4) {
		log_error("report --from: %s: an answer that is no count: %.80s",
			  q->url, reply);
		ret = -EPROTO;
	}
	free(sql.v);
	return ret;
}

int fleet__profile(const struct fleet_query *q, struct run_profile *p)
{
	const char *url = q->url;
	struct load *l = calloc(1, sizeof(*l));
	struct clickhouse *c;
	struct plan pl;
	char err[512], slice[64], cols[160];
	const char *reply;
	struct ch_text sql = { 0 };
	int64_t read[4] = { 0 }, t0;	/* hosts, runs, rows, rollup rows */
	const char *at;
	size_t bad;
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
	t0 = clock__mono_ns();
	if (plan_of(c, q, &pl))
		goto server;
	r = count_read(c, q, &pl, read);
	if (r == -ENOMEM)
		goto nomem;
	if (r == -EIO)
		goto server;
	if (r)
		goto out;
	if (!read[1]) {
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
	snprintf(cols, sizeof(cols), "%s AS context, how, weight AS w, "
		 "certain_frames AS f", slice);
	if (clickhouse__append(&sql, "SELECT context, how, sum(w), min(f) "
			       "FROM (") ||
	    both_parts(&sql, c, q, &pl, rollup_of(q), cols, cols, "") ||
	    clickhouse__append(&sql, ") GROUP BY context, how"
			       " FORMAT TabSeparated"))
		goto nomem;
	if (clickhouse__query(c, sql.v, PUSH_DOWN, NULL, 0, &reply))
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
		 " host%s, %" PRId64 " run%s", url, read[0], read[0] == 1 ? "" :
		 "s", read[1], read[1] == 1 ? "" : "s");
	snprintf(p->fleet_read, sizeof(p->fleet_read), "%" PRId64 " stack "
		 "rows summed by the server in %.2f s (%" PRId64 " rows of "
		 "the hourly rollups read%s)%s", read[2],
		 (double)(clock__mono_ns() - t0) / 1e9, read[3],
		 pl.lo < pl.hi ? ", the rest raw" : ": all raw", pl.widened ?
		 "; the raw rows of the window's edge are dropped "
		 "(raw_days): its whole hours" : "");
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
