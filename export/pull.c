/*
 * pull.c - fleet learning (see pull.h).
 *
 * The server is input like any file: every row is parsed with its
 * fields counted, numbers range-checked, strings unescaped within the
 * row, and the nodes bounded.
 */
#include "export/pull.h"

#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/search.h"
#include "export/clickhouse.h"

#define PULL_FIELDS 12
/* A build that the fleet had no map of is asked for again after this. */
#define PULL_RETRY_NS (3600 * 1000000000LL)

/* Field @s (ending at @end) unescaped in place, NUL-terminated. */
static int unescape_field(char *s, const char *end)
{
	const char *r = s;
	char *w = s;

	while (r < end) {
		if (clickhouse__unescape(&r, end, w))
			return -1;
		if (!*w)
			*w = '?';
		w++;
	}
	*w = '\0';
	return 0;
}

static int number(const char *s, bool sign, int64_t *v)
{
	char *e;

	errno = 0;
	if (sign) {
		*v = strtoll(s, &e, 10);
	} else {
		unsigned long long u = strtoull(s, &e, 10);

		if (*s == '-' || u > INT64_MAX)
			return -1;
		*v = (int64_t)u;
	}
	return errno || e == s || *e ? -1 : 0;
}

/* Node ids of the rows parsed so far, to find a parent by. */
struct ids {
	int64_t *v;
	size_t cap;
};

/* The row's fields @f into @m's next node; @src: its source's first
 * row. */
static int parse_row(struct pull_map *m, struct ids *ids, char **f,
		     size_t src)
{
	struct store_pulled_node *x;
	int64_t node, parent, v[5];

	if (number(f[1], false, &node) || number(f[2], false, &parent) ||
	    number(f[6], false, &v[0]) || number(f[8], false, &v[1]) ||
	    number(f[9], true, &v[2]) || number(f[10], false, &v[3]) ||
	    number(f[11], false, &v[4]) || !node ||
	    (m->n > src && node <= ids->v[m->n - 1]))	/* sorted, once */
		return -EPROTO;
	if (m->n == PULL_MAX_NODES)
		return -E2BIG;
	if (grow(&m->nodes, &m->cap, m->n + 1, sizeof(*m->nodes), 1024) ||
	    grow(&ids->v, &ids->cap, m->n + 1, sizeof(*ids->v), 1024))
		return -ENOMEM;
	ids->v[m->n] = node;
	x = &m->nodes[m->n];
	*x = (struct store_pulled_node){ .parent = -1,
		.address = (uint64_t)v[0], .call_site = (uint64_t)v[1],
		.height = v[2], .self = (uint64_t)v[3],
		.total = (uint64_t)v[4], .module = f[4], .module_build = f[5],
		.function = f[7] };
	if (!m->program)
		m->program = f[3];
	if (parent) {
		/* a parent not among the source's earlier rows leaves the
		 * node unmergeable: its parent index is its own */
		size_t lo = src, hi = m->n;

		x->parent = (int64_t)m->n;
		lo = LOWER_BOUND(lo, hi, i, ids->v[i] < parent);
		if (lo < m->n && ids->v[lo] == parent)
			x->parent = (int64_t)lo;
	}
	m->n++;
	return 0;
}

int pull__parse(char *text, size_t len, struct pull_map *m)
{
	const char *source = NULL;
	struct ids ids = { 0 };
	char *s = text, *end = text + len;
	size_t src = 0;
	int ret = 0;

	memset(m, 0, sizeof(*m));
	while (s < end && !ret) {
		char *eol = memchr(s, '\n', (size_t)(end - s)), *f[PULL_FIELDS];
		size_t nf = 0;

		if (!eol) {
			ret = -EPROTO;
			break;
		}
		/* split at tabs (an escaped tab is "\\t": never a tab) */
		for (char *p = s; nf < PULL_FIELDS;) {
			char *tab = memchr(p, '\t', (size_t)(eol - p));
			char *fe = tab ? tab : eol;

			if (unescape_field(p, fe)) {
				ret = -EPROTO;
				break;
			}
			f[nf++] = p;
			if (!tab)
				break;
			p = tab + 1;
		}
		if (ret || nf != PULL_FIELDS) {
			ret = -EPROTO;
			break;
		}
		if (!source || strcmp(source, f[0])) {
			source = f[0];
			src = m->n;
			m->sources++;
		}
		ret = parse_row(m, &ids, f, src);
		s = eol + 1;
	}
	free(ids.v);
	return ret;
}

void pull_map__exit(struct pull_map *m)
{
	if (!m)
		return;
	free(m->nodes);
	memset(m, 0, sizeof(*m));
}

/* One build's maps from @c into @st. */
static int pull_build(struct store *st, struct clickhouse *c,
		      const char *build_id, const char *dbid,
		      struct pull_result *res)
{
	struct ch_text q = { 0 }, b = { 0 };
	struct pull_map m = { 0 };
	const char *reply, *db = clickhouse__database(c);
	char *text = NULL;
	size_t merged = 0;
	int r, ret = -1;

	/* each other source's latest map of the build, parents first (this
	 * database's own learning is here already) */
	if (clickhouse__append(&b, "build_id = '") ||
	    clickhouse__quote(&b, build_id) ||
	    clickhouse__append(&b, "' AND NOT endsWith(source, '/") ||
	    clickhouse__quote(&b, dbid) || clickhouse__append(&b, "')") ||
	    clickhouse__append(&q, "SELECT source, node, parent, program,"
			       " module, module_build_id, address, function,"
			       " call_site, height, self, total FROM ") ||
	    clickhouse__append(&q, db) ||
	    clickhouse__append(&q, ".paths WHERE ") ||
	    clickhouse__append(&q, b.v) ||
	    clickhouse__append(&q, " AND (source, version) GLOBAL IN"
			       " (SELECT source, max(version) FROM ") ||
	    clickhouse__append(&q, db) ||
	    clickhouse__append(&q, ".paths WHERE ") ||
	    clickhouse__append(&q, b.v) ||
	    clickhouse__append(&q, " GROUP BY source) ORDER BY source, node"
			       " FORMAT TabSeparated")) {
		log_error("pulling path maps: out of memory");
		goto out;
	}
	if (clickhouse__query(c, q.v, NULL, NULL, 0, &reply)) {
		snprintf(res->error, sizeof(res->error), "%s",
			 clickhouse__error(c));
		ret = PULL_REMOTE_FAILED;
		goto out;
	}
	text = strdup(reply);
	r = text ? pull__parse(text, strlen(text), &m) : -ENOMEM;
	if (r == -ENOMEM) {
		log_error("pulling path maps: out of memory");
		goto out;
	}
	if (r) {
		snprintf(res->error, sizeof(res->error), "%s: the path map of "
			 "build %s: %s", clickhouse__url(c), build_id,
			 r == -E2BIG ? "more nodes than a pull takes" :
			 "a row that is no path node");
		ret = PULL_REMOTE_FAILED;
		goto out;
	}
	if ((m.n && store__merge_paths(st, m.program, build_id, m.nodes, m.n,
				       &merged)) ||
	    store__pull_done(st, build_id, clickhouse__url(c),
			     clock__real_ns(), (int64_t)merged, m.sources)) {
		log_error("pulling path maps: %s", store__error(st));
		goto out;
	}
	if (merged) {
		res->builds++;
		res->paths += (int64_t)merged;
		res->sources += m.sources;
	}
	ret = 0;
out:
	pull_map__exit(&m);
	free(text);
	free(q.v);
	free(b.v);
	return ret;
}

struct wanted {
	char **v;
	size_t n, cap;
};

static int want(void *arg, const char *build_id)
{
	struct wanted *w = arg;

	if (grow(&w->v, &w->cap, w->n + 1, sizeof(*w->v), 8) ||
	    !(w->v[w->n] = strdup(build_id)))
		return -ENOMEM;
	w->n++;
	return 0;
}

static int found(void *arg, const char *build_id)
{
	(void)arg;
	(void)build_id;
	return 1;
}

int pull__needed(struct store *st, const char *target, int64_t run_id)
{
	int r = store__pull_needed(st, run_id, NULL, target, clock__real_ns() -
				   PULL_RETRY_NS, found, NULL);

	return r < 0 ? -1 : r ? 1 : 0;
}

int pull__with(struct store *st, struct clickhouse *c, int64_t run_id,
	       const char *build_id, struct pull_result *res)
{
	struct wanted w = { 0 };
	char dbid[64];
	int ret = 0;

	if (store__database_id(st, dbid, sizeof(dbid)) ||
	    store__pull_needed(st, run_id, build_id, clickhouse__url(c),
			       clock__real_ns() - PULL_RETRY_NS, want, &w)) {
		log_error("pulling path maps: %s", store__error(st));
		ret = -1;
	}
	for (size_t i = 0; i < w.n && !ret; i++)
		ret = pull_build(st, c, w.v[i], dbid, res);
	for (size_t i = 0; i < w.n; i++)
		free(w.v[i]);
	free(w.v);
	return ret;
}

int pull__builds(struct store *st, const char *url, int64_t run_id,
		 const char *build_id, struct pull_result *res)
{
	struct clickhouse *c;
	char err[512];
	int ret;

	memset(res, 0, sizeof(*res));
	c = clickhouse__new(url, err, sizeof(err));
	if (!c) {
		log_error("pulling path maps: %s", err);
		return -1;
	}
	ret = pull__with(st, c, run_id, build_id, res);
	clickhouse__delete(c);
	return ret;
}
