/*
 * export.c - runs to ClickHouse (see export.h).
 *
 * Rows go as TabSeparated: strings escaped as ClickHouse reads them,
 * stacks as array literals of quoted strings, times as Unix seconds (no
 * time zone to agree on).
 */
#include "export/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/search.h"
#include "export/chschema.h"
#include "export/clickhouse.h"
#include "export/pull.h"
#include "inference/cct.h"
#include "profile/profile.h"
#include "schema/export_store.h"
#include "schema/report_store.h"

/* Runs read from the spool at a time. */
#define EXPORT_BATCH 64
/* The longest wait between two tries, seconds. */
#define EXPORT_BACKOFF_MAX 3600
/* Frames of one exported stack, outermost first; deeper stacks keep
 * their innermost ones under a "[cut]" frame. */
#define EXPORT_MAX_FRAMES 1024

/* A TabSeparated body being built. */
struct body {
	struct ch_text t;
	int64_t rows;
};

static int put(struct body *b, const char *s)
{
	return clickhouse__append(&b->t, s);
}

static int put_str(struct body *b, const char *s)
{
	return clickhouse__quote(&b->t, s);
}

/* What every row of a segment starts with. */
struct segment {
	char key[256];
	char host[128];
	int64_t start_s, end_s;
	/* each process's program */
	struct seg_prog { int64_t pid; char *path, *build_id; } *progs;
	size_t nprogs, progs_cap;
};

static int put_head(struct body *b, const struct segment *g,
		    const char *program, const char *build_id,
		    const char *comm, int64_t pid)
{
	char times[64];

	if (put_str(b, g->key) || put(b, "\t") || put_str(b, g->host) ||
	    put(b, "\t") || put_str(b, program) || put(b, "\t") ||
	    put_str(b, build_id) || put(b, "\t") || put_str(b, comm))
		return -ENOMEM;
	snprintf(times, sizeof(times), "\t%" PRId64 "\t%" PRId64 "\t%" PRId64
		 "\t", pid > 0 && pid <= UINT32_MAX ? pid : 0, g->start_s,
		 g->end_s);
	return put(b, times);
}

static int add_prog(void *arg, int64_t pid, const char *path,
		    const char *build_id)
{
	struct segment *g = arg;
	struct seg_prog *p;

	if (grow(&g->progs, &g->progs_cap, g->nprogs + 1, sizeof(*g->progs),
		 64))
		return -ENOMEM;
	p = &g->progs[g->nprogs];
	p->pid = pid;
	p->path = strdup(path);
	p->build_id = strdup(build_id);
	if (!p->path || !p->build_id) {
		free(p->path);
		free(p->build_id);
		return -ENOMEM;
	}
	g->nprogs++;
	return 0;
}

/* Process @pid's program (sorted by pid). */
static const struct seg_prog *prog_of(const struct segment *g, int64_t pid)
{
	size_t lo = LOWER_BOUND((size_t)0, g->nprogs, i,
				g->progs[i].pid < pid);

	return lo < g->nprogs && g->progs[lo].pid == pid ? &g->progs[lo] :
	       NULL;
}

static void segment_free(struct segment *g)
{
	for (size_t i = 0; i < g->nprogs; i++) {
		free(g->progs[i].path);
		free(g->progs[i].build_id);
	}
	free(g->progs);
}

/* The stack of record @r into @b: frames outermost first, up to its
 * process frame, whose pid and command *@proc gets. */
static int put_stack(struct body *b, struct cct *t, const struct cct_record *r,
		     int64_t *proc)
{
	uint32_t frames[EXPORT_MAX_FRAMES];
	size_t n = 0;
	bool cut = false;

	*proc = 0;
	for (uint32_t x = r->node; x != CCT_ROOT && x != CCT_NONE;
	     x = cct__node(t, x)->parent) {
		int64_t f = cct__node(t, x)->frame;

		if (cct__kind(t, f) == CCT_PROCESS) {
			*proc = f;
			break;
		}
		if (n == EXPORT_MAX_FRAMES)
			cut = true;
		else
			frames[n++] = x;
	}
	if (put(b, cut ? "['[cut]'" : "["))
		return -ENOMEM;
	for (size_t i = n; i-- > 0;) {
		if (put(b, i + 1 == n && !cut ? "'" : ",'") ||
		    put_str(b, cct__root_name(t, cct__node(t, frames[i])->frame)) ||
		    put(b, "'"))
			return -ENOMEM;
	}
	return put(b, "]");
}

/* The search budget of a run's inference here, CPU seconds: a report's
 * default is none (profile/run_profile.h), but the daemon's exporter
 * has 60 s of CPU a round for every segment due and what it reads is
 * any watched user's to craft; a report with no --budget infers a run
 * that this left short again. */
#define EXPORT_BUDGET_S 10

/* Run @run_id's inferred stacks, per process, into @b: their samples,
 * or with @offcpu the microseconds their threads were blocked. */
static int stack_rows(struct store *st, int64_t run_id, bool offcpu,
		      const struct segment *g, struct body *b)
{
	/* what report --no-inline shows: the binaries' calls explain CIDs
	 * no path map does, stripped binaries are named from their local
	 * debug files (never debuginfod: the root daemon starts exporters,
	 * and it fetches nothing over the network).  No inlined frames:
	 * a fleet's stacks are physical frames, summed across hosts whether
	 * or not each host has the DWARF, and the exporter reads none. */
	struct profile_request rq = { .sel.run_id = run_id,
		.sel.offcpu = offcpu, .budget_s = EXPORT_BUDGET_S,
		.flags = RUN_PROFILE_BY_PID | RUN_PROFILE_STATIC |
			 RUN_PROFILE_SAVE | RUN_PROFILE_DEBUGINFO };
	struct profile pr;
	struct run_profile *p = &pr.p;
	const struct cct_record *recs;
	size_t n;
	int ret = profile__load(st, &rq, &pr);

	if (ret) {
		profile__exit(&pr);
		return ret == RUN_PROFILE_NONE ? 0 : -EIO;
	}
	recs = cct__records(p->cct, &n);
	for (size_t i = 0; i < n && !ret; i++) {
		const struct cct_record *r = &recs[i];
		struct body line = { 0 };
		const struct cct_frame *pf;
		const struct seg_prog *sp;
		char tail[96];
		int64_t proc;

		if (!(r->weight > 0))
			continue;
		/* the stack first: its process frame gives the head */
		ret = put_stack(&line, p->cct, r, &proc);
		pf = proc ? cct__frame(p->cct, proc) : NULL;
		sp = pf ? prog_of(g, pf->pid) : NULL;
		snprintf(tail, sizeof(tail), "\t%.17g\t%u\t%s\t%s\n",
			 r->weight, r->exact < 65535 ? r->exact : 65535,
			 cct_how__name(r->how), offcpu ? "off-cpu" : "cpu");
		if (!ret)
			ret = put_head(b, g, sp ? sp->path : "",
				       sp ? sp->build_id : "",
				       pf ? pf->name : "?", pf ? pf->pid : 0);
		if (!ret)
			ret = put(b, line.t.v ? line.t.v : "[]");
		if (!ret)
			ret = put(b, tail);
		free(line.t.v);
		b->rows++;
	}
	profile__exit(&pr);
	return ret;
}

struct cid_body {
	struct body *b;
	const struct segment *g;
	int64_t offcpu;		/* rows of switches out */
};

static int cid_line(void *arg, const struct store_cid_row *r)
{
	struct cid_body *c = arg;
	char tail[128];

	snprintf(tail, sizeof(tail), "\t%" PRId64 "\t%" PRId64 "\t%s\t%"
		 PRId64 "\n", r->height, r->samples > 0 ? r->samples : 0,
		 r->offcpu ? "off-cpu" : "cpu",
		 r->blocked_ns > 0 ? r->blocked_ns / 1000 : 0);
	c->offcpu += r->offcpu;
	c->b->rows++;
	return put_head(c->b, c->g, r->program, r->program_build, r->comm,
			r->pid) || put_str(c->b, r->module) ||
	       put(c->b, "\t") || put_str(c->b, r->build_id) ||
	       put(c->b, "\t") || put_str(c->b, r->function) ||
	       put(c->b, tail) ? -ENOMEM : 0;
}

struct path_body {
	struct body *b;
	const struct segment *g;
	const char *source;
	int64_t run_id;
};

static int path_line(void *arg, const struct store_path_row *r)
{
	struct path_body *c = arg;
	char num[160];

	c->b->rows++;
	snprintf(num, sizeof(num), "\t%" PRId64 "\t%" PRId64 "\t", c->run_id,
		 c->g->start_s);
	if (put_str(c->b, c->g->key) || put(c->b, "\t") ||
	    put_str(c->b, c->source) || put(c->b, "\t") ||
	    put_str(c->b, c->g->host) || put(c->b, num) ||
	    put_str(c->b, r->program) || put(c->b, "\t") ||
	    put_str(c->b, r->program_build))
		return -ENOMEM;
	snprintf(num, sizeof(num), "\t%" PRId64 "\t%" PRId64 "\t", r->node,
		 r->parent);
	if (put(c->b, num) || put_str(c->b, r->module) || put(c->b, "\t") ||
	    put_str(c->b, r->module_build) || put(c->b, "\t"))
		return -ENOMEM;
	snprintf(num, sizeof(num), "%" PRIu64 "\t", (uint64_t)r->address);
	if (put(c->b, num) || put_str(c->b, r->function))
		return -ENOMEM;
	snprintf(num, sizeof(num), "\t%" PRIu64 "\t%" PRId64 "\t%" PRId64
		 "\t%" PRId64 "\n", (uint64_t)r->call_site, r->height,
		 r->self > 0 ? r->self : 0, r->total);
	return put(c->b, num) ? -ENOMEM : 0;
}

/* How many rows of @table carry segment key @key (-1: the server did
 * not say). */
static int64_t rows_there(struct clickhouse *c, const char *table,
			  const char *key)
{
	struct body q = { 0 };
	const char *reply;
	int64_t n = -1;

	if (!put(&q, "SELECT count() FROM ") &&
	    !put(&q, clickhouse__database(c)) && !put(&q, ".") &&
	    !put(&q, table) && !put(&q, " WHERE segment = '") &&
	    !put_str(&q, key) && !put(&q, "'") &&
	    !clickhouse__query(c, q.t.v, NULL, NULL, 0, &reply)) {
		char *end;
		long long v = strtoll(reply, &end, 10);

		if (end != reply && v >= 0)
			n = v;
	}
	free(q.t.v);
	return n;
}

/* Inserts @b into @table unless rows of the segment are there already:
 * 0, or -1 with the server's error in @why. */
static int insert_once(struct clickhouse *c, const char *table,
		       const char *key, const struct body *b, char *why,
		       size_t len)
{
	char sql[160], settings[64];
	const char *reply;
	int64_t there = rows_there(c, table, key);

	if (there < 0) {
		snprintf(why, len, "%s", clickhouse__error(c));
		return -1;
	}
	if (there > 0 || !b->rows)	/* an earlier try got through */
		return 0;
	snprintf(sql, sizeof(sql), "INSERT INTO %s.%s FORMAT TabSeparated",
		 clickhouse__database(c), table);
	/* one block: written all or nothing */
	snprintf(settings, sizeof(settings), "max_insert_block_size=%" PRId64,
		 b->rows + 1);
	if (clickhouse__query(c, sql, settings, b->t.v, b->t.n, &reply)) {
		snprintf(why, len, "%s", clickhouse__error(c));
		return -1;
	}
	return 0;
}

/* Ships run @run_id: 0 when the server has it, 1 (with @why) when a
 * try failed, -1 after logging a local failure. */
static int ship(struct store *st, struct clickhouse *c, int64_t run_id,
		struct export_result *res, char *why, size_t len)
{
	struct segment g = { 0 };
	struct body stacks = { 0 }, cids = { 0 }, paths = { 0 };
	struct cid_body cb = { &cids, &g, 0 };
	struct path_body pb = { &paths, &g, NULL, run_id };
	struct pull_result pulled = { 0 };
	struct run_row run;
	char dbid[64], source[200];
	int ret = -1;

	if (store__run(st, run_id, &run) || store__database_id(st, dbid,
							       sizeof(dbid)) ||
	    store__run_host(st, run_id, g.host, sizeof(g.host)) ||
	    store__export_programs(st, run_id, add_prog, &g))
		goto out_store;
	snprintf(g.key, sizeof(g.key), "%s/%s/%" PRId64, g.host, dbid,
		 run_id);
	snprintf(source, sizeof(source), "%s/%s", g.host, dbid);
	pb.source = source;
	/* what the fleet learned of the run's programs first: the stacks
	 * shipped are inferred with it */
	ret = pull__with(st, c, run_id, NULL, &pulled);
	if (ret) {
		snprintf(why, len, "%s", pulled.error);
		goto out;
	}
	ret = -1;
	g.start_s = run.started_ns / 1000000000;
	g.end_s = (run.ended_ns > run.started_ns ? run.ended_ns :
		   run.started_ns) / 1000000000;
	if (store__export_cids(st, run_id, cid_line, &cb) ||
	    store__export_paths(st, run_id, path_line, &pb))
		goto out_store;
	ret = stack_rows(st, run_id, false, &g, &stacks);
	if (!ret && cb.offcpu)
		ret = stack_rows(st, run_id, true, &g, &stacks);
	if (ret == -ENOMEM) {
		log_error("exporting run %" PRId64 ": out of memory", run_id);
		ret = -1;
		goto out;
	}
	if (ret) {
		ret = -1;
		goto out;
	}
	ret = insert_once(c, "cids_local", g.key, &cids, why, len) ||
	      insert_once(c, "paths_local", g.key, &paths, why, len) ||
	      insert_once(c, "stacks_local", g.key, &stacks, why, len);
	if (!ret) {
		res->stack_rows += stacks.rows;
		res->cid_rows += cids.rows;
		if (store__export_done(st, run_id, clickhouse__url(c),
				       stacks.rows, cids.rows,
				       clock__real_ns()))
			goto out_store;
	}
	goto out;
out_store:
	log_error("exporting run %" PRId64 ": %s", run_id, store__error(st));
	ret = -1;
out:
	free(stacks.t.v);
	free(cids.t.v);
	free(paths.t.v);
	segment_free(&g);
	return ret;
}

/* Whether a failure says the database or a table is not there:
 * ClickHouse's codes 60 (UNKNOWN_TABLE) and 81 (UNKNOWN_DATABASE), as
 * "Code: 81, e.displayText() ..." (Debian's 18.16) or "Code: 81. DB::...". */
static bool missing_tables(const char *why)
{
	const char *p = strstr(why, "Code: ");
	long code = p ? strtol(p + 6, NULL, 10) : 0;

	return code == 60 || code == 81;
}

/* Ships one batch of the runs due (@now; < 0: all) for @c, the tables
 * brought up to date (chschema__migrate()) first, once, *@migrated
 * saying it was done: -1 after logging a local failure, else how many
 * runs were due (a try that failed stops the batch: the server is
 * away, the rest wait). */
static int ship_batch(struct store *st, struct clickhouse *c, int64_t now,
		      bool *migrated, struct export_result *res)
{
	bool created = false;
	int64_t runs[EXPORT_BATCH], attempts[EXPORT_BATCH];
	size_t n;

	if (store__export_due(st, clickhouse__url(c), now, runs, attempts,
			      EXPORT_BATCH, &n))
		goto out_store;
	for (size_t i = 0; i < n; i++) {
		char why[512];
		int64_t wait = attempts[i] + 1 < 12 ?
			       (int64_t)1 << (attempts[i] + 1) :
			       EXPORT_BACKOFF_MAX;
		int r;

		log__progress("export to %s: run %lld, %lld shipped so far",
			      clickhouse__url(c), (long long)runs[i],
			      (long long)res->runs);
		if (!*migrated && (chschema__update(c, false, why,
						    sizeof(why)) ||
				   chschema__prune(c, why, sizeof(why)))) {
			r = 1;
		} else {
			*migrated = true;
			r = ship(st, c, runs[i], res, why, sizeof(why));
		}

		if (r < 0)
			return -1;
		if (r > 0 && !created && missing_tables(why) &&
		    !chschema__update(c, true, why, sizeof(why))) {
			created = true;	/* and this run again */
			i--;
			continue;
		}
		if (!r) {
			res->runs++;
			continue;
		}
		/* 2, 4, 8 ... seconds, then an hour at most */
		res->failed += (int64_t)(n - i);
		snprintf(res->error, sizeof(res->error), "%s", why);
		if (store__export_failed(st, runs[i], clickhouse__url(c),
					 attempts[i] + 1, clock__real_ns() +
					 wait * 1000000000, why))
			goto out_store;
		break;
	}
	return (int)n;
out_store:
	log_error("export: %s", store__error(st));
	return -1;
}

int export__target(const char *url, char *out, size_t len)
{
	struct clickhouse *c;
	char err[512];

	c = clickhouse__new(url, err, sizeof(err));
	if (!c) {
		log_error("export: %s", err);
		return -1;
	}
	snprintf(out, len, "%s", clickhouse__url(c));
	clickhouse__delete(c);
	return 0;
}

int export__queue(struct store *st, int64_t run_id, const char *url)
{
	char target[4096];

	if (export__target(url, target, sizeof(target)))
		return -1;
	if (store__export_queue(st, run_id, target, clock__real_ns())) {
		log_error("export: %s", store__error(st));
		return -1;
	}
	return 0;
}

int export__queue_all(struct store *st, const char *url, int64_t *n)
{
	char target[4096];

	*n = 0;
	if (export__target(url, target, sizeof(target)))
		return -1;
	if (store__export_queue_all(st, target, clock__real_ns(), n)) {
		log_error("export: %s", store__error(st));
		return -1;
	}
	return 0;
}

int export__due(struct store *st, const char *url, int64_t run_id)
{
	char target[4096];
	int64_t run, attempts;
	size_t n;
	int r = 0;

	if (export__target(url, target, sizeof(target)))
		return -1;
	if (store__export_due(st, target, clock__real_ns(), &run, &attempts,
			      1, &n) ||
	    (!n && (r = pull__needed(st, target, run_id)) < 0)) {
		log_error("export: %s", store__error(st));
		return -1;
	}
	return n || r ? 1 : 0;
}

int export__run(struct store *st, int64_t run_id, const char *url,
		bool force, struct export_result *res)
{
	int64_t now = clock__real_ns();
	struct clickhouse *c;
	char err[512];
	bool migrated = false;
	int n, ret = -1;

	memset(res, 0, sizeof(*res));
	c = clickhouse__new(url, err, sizeof(err));
	if (!c) {
		log_error("export: %s", err);
		return -1;
	}
	if (run_id && store__export_queue(st, run_id, clickhouse__url(c),
					  now)) {
		log_error("export: %s", store__error(st));
		goto out;
	}
	/* batch after batch, until none is left or the server is away */
	log__progress_start();
	do
		n = ship_batch(st, c, force ? -1 : now, &migrated, res);
	while (n == EXPORT_BATCH && !res->failed);
	/* one shipped: the server is back, so the runs an outage left
	 * waiting out their backoff go now too */
	if (n >= 0 && !force && res->runs && !res->failed)
		do
			n = ship_batch(st, c, -1, &migrated, res);
		while (n == EXPORT_BATCH && !res->failed);
	log__progress_end();
	ret = n < 0 ? -1 : 0;
out:
	clickhouse__delete(c);
	return ret;
}
