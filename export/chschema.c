/*
 * chschema.c - the ClickHouse tables of a fleet (see chschema.h).
 *
 * Debian's ClickHouse is 18.16: no TTL, no skip indexes, no projections,
 * no SimpleAggregateFunction and no IF NOT EXISTS in ALTER, so the
 * rollups are SummingMergeTree tables whose sort key holds every column
 * but the weight (the least certain frames too: a report takes their
 * minimum, and rows that differ in it are kept apart), fed by
 * materialized views; a column added later is added by ALTER where it
 * is missing, a column another exporter added meanwhile being no
 * failure.
 */
#define _GNU_SOURCE		/* open_memstream */
#include "export/chschema.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "export/clickhouse.h"

/* How a stack was inferred. */
#define HOW_TYPE \
	"Enum8('precise' = 1, 'ambiguous' = 2, 'searched' = 3, 'unknown' = 4)"
/* Which event a row counts: CPU samples, or switches out (record
 * --off-cpu), whose stacks weigh the microseconds their threads were
 * blocked.  Added after the first fleets were made: new columns go
 * last, with defaults that old rows take (added_columns[]). */
#define EVENT_TYPE "Enum8('cpu' = 1, 'off-cpu' = 2) DEFAULT 'cpu'"
#define BLOCKED_TYPE "UInt64 DEFAULT 0"

/* What every row of both tables starts with: the run and process. */
#define HEAD_COLUMNS \
	"segment String,\n" \
	"    host String,\n" \
	"    program String,\n" \
	"    build_id String,\n" \
	"    comm String,\n" \
	"    pid UInt32,\n" \
	"    start_time DateTime,\n" \
	"    end_time DateTime,\n"

#define STACK_COLUMNS HEAD_COLUMNS \
	"    stack Array(String),\n" \
	"    weight Float64,\n" \
	"    certain_frames UInt16,\n" \
	"    how " HOW_TYPE ",\n" \
	"    event " EVENT_TYPE

/* A path map as one source (HOST/DATABASE-ID) had learned it by run
 * version: its nodes, each with its parent's node number (0: an
 * outermost frame). */
#define PATH_COLUMNS \
	"segment String,\n" \
	"    source String,\n" \
	"    host String,\n" \
	"    version UInt64,\n" \
	"    start_time DateTime,\n" \
	"    program String,\n" \
	"    build_id String,\n" \
	"    node UInt64,\n" \
	"    parent UInt64,\n" \
	"    module String,\n" \
	"    module_build_id String,\n" \
	"    address UInt64,\n" \
	"    function String,\n" \
	"    call_site UInt64,\n" \
	"    height Int64,\n" \
	"    self UInt64,\n" \
	"    total UInt64"

#define CID_COLUMNS HEAD_COLUMNS \
	"    module String,\n" \
	"    module_build_id String,\n" \
	"    function String,\n" \
	"    height Int64,\n" \
	"    samples UInt64,\n" \
	"    event " EVENT_TYPE ",\n" \
	"    blocked_us " BLOCKED_TYPE

/* The columns added to the tables since their first version, in the
 * order they were added: a database an earlier icppd made gets them
 * (chschema__update()), and its rows read their defaults. */
static const struct added_column {
	const char *table, *column, *type;
} added_columns[] = {
	{ "stacks", "event", EVENT_TYPE },
	{ "cids", "event", EVENT_TYPE },
	{ "cids", "blocked_us", BLOCKED_TYPE },
};
#define NR_ADDED (sizeof(added_columns) / sizeof(added_columns[0]))


/* The rollups: a program build's identical stacks of one event summed
 * per hour of their runs' start, apart per host or not; the runs. */
#define ROLLUP_COLUMNS \
	"program String,\n" \
	"    build_id String,\n" \
	"    event " EVENT_TYPE ",\n" \
	"    bucket DateTime,\n" \
	"    stack Array(String),\n" \
	"    how " HOW_TYPE ",\n" \
	"    certain_frames UInt16,\n" \
	"    weight Float64"
#define ROLLUP_KEY "program, event, bucket, build_id, stack, how, certain_frames"
#define ROLLUP_SELECT \
	"program, build_id, event, toStartOfHour(start_time) AS bucket," \
	" stack, how, certain_frames, sum(weight) AS weight"
#define ROLLUP_GROUP \
	"program, build_id, event, bucket, stack, how, certain_frames"

/* Inserts go to the raw tables (through the Distributed one of a
 * cluster, spread by host); the views feed the rollups on each server,
 * so their Distributed tables' key only serves an insert through them. */
#define RAW_SHARDS "sipHash64(host)"
#define ROLLUP_SHARDS "rand()"

static const struct table {
	const char *name, *columns, *engine, *partition, *order;
	const char *view;	/* the materialized view's SELECT and GROUP
				 * BY from stacks_local feeding it, or NULL */
	const char *group;
	const char *shards;	/* a Distributed table's sharding key */
} tables[] = {
	/* stacks and CIDs are read by program and time; path maps by
	 * build, each source's latest version */
	{ "stacks", STACK_COLUMNS, "MergeTree()", "toDate(start_time)",
	  "program, start_time, host, segment", NULL, NULL, RAW_SHARDS },
	{ "cids", CID_COLUMNS, "MergeTree()", "toDate(start_time)",
	  "program, start_time, host, segment", NULL, NULL, RAW_SHARDS },
	{ "paths", PATH_COLUMNS, "MergeTree()", "toDate(start_time)",
	  "build_id, source, version, node", NULL, NULL, RAW_SHARDS },
	{ "stacks_rollup", ROLLUP_COLUMNS, "SummingMergeTree((weight))",
	  "toDate(bucket)", ROLLUP_KEY, ROLLUP_SELECT, ROLLUP_GROUP,
	  ROLLUP_SHARDS },
	{ "host_stacks_rollup", "host String,\n    " ROLLUP_COLUMNS,
	  "SummingMergeTree((weight))", "toDate(bucket)", "host, " ROLLUP_KEY,
	  "host, " ROLLUP_SELECT, "host, " ROLLUP_GROUP, ROLLUP_SHARDS },
	{ "segments", "segment String,\n"
	  "    host String,\n"
	  "    program String,\n"
	  "    event " EVENT_TYPE ",\n"
	  "    start_time DateTime,\n"
	  "    end_time DateTime,\n"
	  "    rows UInt64,\n"
	  "    weight Float64", "SummingMergeTree((rows, weight))",
	  "toDate(start_time)", "start_time, host, segment, program, event, "
	  "end_time", "segment, host, program, event, start_time, end_time,"
	  " count() AS rows, sum(weight) AS weight",
	  "segment, host, program, event, start_time, end_time",
	  ROLLUP_SHARDS },
	{ "rollups", "since DateTime,\n"
	  "    raw_from DateTime DEFAULT toDateTime(0)",
	  "ReplacingMergeTree()", NULL, "tuple()", NULL, NULL,
	  ROLLUP_SHARDS },
};
#define NR_TABLES (sizeof(tables) / sizeof(tables[0]))

void chschema__print(FILE *out, const char *db, const char *cluster)
{
	fprintf(out, "CREATE DATABASE IF NOT EXISTS %s;\n\n", db);
	for (size_t i = 0; i < NR_TABLES; i++) {
		const struct table *t = &tables[i];

		fprintf(out, "CREATE TABLE IF NOT EXISTS %s.%s_local (\n"
			"    %s\n) ENGINE = %s\n", db, t->name, t->columns,
			t->engine);
		if (t->partition)
			fprintf(out, "PARTITION BY %s\n", t->partition);
		fprintf(out, "ORDER BY (%s);\n\n", t->order);
		if (cluster)
			fprintf(out, "CREATE TABLE IF NOT EXISTS %s.%s AS "
				"%s.%s_local\nENGINE = Distributed(%s, %s, "
				"%s_local, %s);\n\n", db, t->name, db, t->name,
				cluster, db, t->name, t->shards);
		else
			fprintf(out, "CREATE VIEW IF NOT EXISTS %s.%s AS "
				"SELECT * FROM %s.%s_local;\n\n", db, t->name,
				db, t->name);
	}
	/* the rollups fed by every insert into stacks_local (on each
	 * server: the local tables) */
	for (size_t i = 0; i < NR_TABLES; i++)
		if (tables[i].view)
			fprintf(out, "CREATE MATERIALIZED VIEW IF NOT EXISTS "
				"%s.%s_mv TO %s.%s_local AS\nSELECT %s\nFROM "
				"%s.stacks_local GROUP BY %s;\n\n", db,
				tables[i].name, db, tables[i].name,
				tables[i].view, db, tables[i].group);
	/* since when they hold every row: from the start, or where the
	 * raw table had rows before they were made, the next hour (the
	 * earlier rows are read raw) */
	fprintf(out, "INSERT INTO %s.rollups_local SELECT if((SELECT count() "
		"FROM %s.stacks_local) = 0,\n    toDateTime(0), "
		"toDateTime(toStartOfHour(now()) + %d)), toDateTime(0)\n"
		"WHERE (SELECT count() FROM %s.rollups_local) = 0;\n\n", db, db,
		CHSCHEMA_BUCKET_S, db);
	fprintf(out, "-- A database an earlier icppd made lacks the columns "
		"added since.  icppd export\n-- adds them (unless the URL "
		"says create=no); by hand, on every server:\n");
	for (size_t i = 0; i < NR_ADDED; i++)
		fprintf(out, "--   ALTER TABLE %s.%s_local ADD COLUMN %s %s;\n",
			db, added_columns[i].table, added_columns[i].column,
			added_columns[i].type);
	fprintf(out, "-- then the same on the %s (a view of SELECT * keeps "
		"the columns it was made\n-- with: drop it and make it "
		"again), then the statements above.\n",
		cluster ? "Distributed tables" : "views");
}

/* A query of a migration: 0 with its reply in *@reply, or -1 with the
 * server's error in @why; "Code: 44" (a column another exporter just
 * added) is no failure. */
static int migration_query(struct clickhouse *c, const char *sql,
			   const char **reply, char *why, size_t len)
{
	/* in "default": the URL's database may not be there yet */
	if (!clickhouse__query_in(c, "default", sql, NULL, NULL, 0, reply))
		return 0;
	if (strstr(clickhouse__error(c), "Code: 44"))
		return 0;
	snprintf(why, len, "%s", clickhouse__error(c));
	return -1;
}

/* Table @t of @c's database, a view, made again over @t_local (a view
 * of SELECT * keeps the columns it was made with): 1; Distributed, given
 * added column @i: 0; -1 with why in @why. */
static int migrate_front(struct clickhouse *c, const char *t, size_t i,
			 char *why, size_t len)
{
	const char *db = clickhouse__database(c), *reply;
	char sql[512];

	snprintf(sql, sizeof(sql), "SELECT engine FROM system.tables WHERE "
		 "database = '%s' AND name = '%s'", db, t);
	if (migration_query(c, sql, &reply, why, len))
		return -1;
	if (!strncmp(reply, "Distributed", 11)) {
		snprintf(sql, sizeof(sql), "ALTER TABLE %s.%s ADD COLUMN %s %s",
			 db, t, added_columns[i].column, added_columns[i].type);
		return migration_query(c, sql, &reply, why, len);
	}
	if (strncmp(reply, "View", 4))
		return 0;	/* the user's own: left alone */
	snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s.%s", db, t);
	if (migration_query(c, sql, &reply, why, len))
		return -1;
	snprintf(sql, sizeof(sql), "CREATE VIEW IF NOT EXISTS %s.%s AS "
		 "SELECT * FROM %s.%s_local", db, t, db, t);
	return migration_query(c, sql, &reply, why, len) ? -1 : 1;
}

/* @ddl with its "--" comments (chschema__print()'s migrations, for a
 * person to run, and their ';') blanked out. */
static void blank_comments(char *ddl)
{
	for (char *p = strstr(ddl, "--"); p; p = strstr(p, "--")) {
		size_t n = strcspn(p, "\n");

		memset(p, ' ', n);
		p += n;
	}
}

/* The columns added since the tables were first made, where @have
 * ("\nTABLE\tCOLUMN\n" for each column of the stacks and cids tables)
 * lacks them: 0, or -1 with why. */
static int add_columns(struct clickhouse *c, const char *have, char *why,
		       size_t len)
{
	const char *db = clickhouse__database(c), *reply;
	char sql[512], want[128];
	bool remade[NR_ADDED] = { false };
	int r;

	/* the local tables first: a view made again takes their columns */
	for (int local = 1; local >= 0; local--)
		for (size_t i = 0; i < NR_ADDED; i++) {
			const char *t = added_columns[i].table;

			snprintf(want, sizeof(want), "\n%s%s\t", t,
				 local ? "_local" : "");
			if (!strstr(have, want))
				continue;	/* no table: made whole */
			snprintf(want, sizeof(want), "\n%s%s\t%s\n", t,
				 local ? "_local" : "", added_columns[i].column);
			if (strstr(have, want) || remade[i])
				continue;
			log_info("export: %s: adding column %s to %s.%s%s",
				 clickhouse__url(c), added_columns[i].column, db,
				 t, local ? "_local" : "");
			if (local) {
				snprintf(sql, sizeof(sql), "ALTER TABLE %s.%s_local"
					 " ADD COLUMN %s %s", db, t,
					 added_columns[i].column,
					 added_columns[i].type);
				if (migration_query(c, sql, &reply, why, len))
					return -1;
				continue;
			}
			r = migrate_front(c, t, i, why, len);
			if (r < 0)
				return -1;
			/* a view made again has every column */
			for (size_t j = i; j < NR_ADDED && r; j++)
				if (!strcmp(added_columns[j].table, t))
					remade[j] = true;
		}
	return 0;
}


/* The cluster of @c's stacks table (Distributed(CLUSTER, ...)) into
 * @out, "" when it is a view or missing: what the tables made later are
 * made over. */
static int cluster_of(struct clickhouse *c, char *out, size_t len, char *why,
		      size_t wlen)
{
	const char *reply, *p;
	char sql[256];
	size_t n = 0;

	*out = '\0';
	snprintf(sql, sizeof(sql), "SELECT engine_full FROM system.tables "
		 "WHERE database = '%s' AND name = 'stacks'",
		 clickhouse__database(c));
	if (migration_query(c, sql, &reply, why, wlen))
		return -1;
	if (strncmp(reply, "Distributed(", 12))
		return 0;
	for (p = reply + 12; *p == ' ' || *p == '\''; p++)
		;
	while ((isalnum((unsigned char)p[n]) || p[n] == '_') && n + 1 < len)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

/* Runs chschema__print()'s statements over @cluster ("": views), one a
 * request, every one IF NOT EXISTS: 0, or -1 with why. */
static int make_tables(struct clickhouse *c, const char *cluster, char *why,
		       size_t len)
{
	char *ddl = NULL, *stmt, *save = NULL;
	size_t n = 0;
	FILE *m;
	int ret = 0;

	if (!(m = open_memstream(&ddl, &n)))
		return -1;
	chschema__print(m, clickhouse__database(c), *cluster ? cluster : NULL);
	if (fclose(m)) {
		free(ddl);
		return -1;
	}
	blank_comments(ddl);
	for (stmt = strtok_r(ddl, ";", &save); stmt && !ret;
	     stmt = strtok_r(NULL, ";", &save)) {
		const char *reply;

		if (strspn(stmt, " \n") == strlen(stmt))
			continue;
		/* in "default": the URL's database may not be there yet */
		if (clickhouse__query_in(c, "default", stmt, NULL, NULL, 0,
					 &reply)) {
			snprintf(why, len, "creating the tables: %s",
				 clickhouse__error(c));
			ret = -1;
		}
	}
	free(ddl);
	return ret;
}

int chschema__update(struct clickhouse *c, bool all, char *why, size_t len)
{
	const char *db = clickhouse__database(c), *reply;
	char sql[512], have[16384], cluster[64], want[128];
	size_t missing = 0;

	if (!clickhouse__may_create(c)) {
		if (all)
			snprintf(why + strlen(why), len - strlen(why),
				 " (the tables are missing and the URL says "
				 "create=no: icppd export --schema prints "
				 "them)");
		return all ? -1 : 0;
	}
	/* "\nTABLE\tCOLUMN\n" for each column of the database's tables */
	snprintf(sql, sizeof(sql), "SELECT table, name FROM system.columns "
		 "WHERE database = '%s' FORMAT TabSeparated", db);
	if (migration_query(c, sql, &reply, why, len))
		return -1;
	snprintf(have, sizeof(have), "\n%s", reply);
	if (strstr(have, "\nstacks_local\t") && add_columns(c, have, why, len))
		return -1;
	for (size_t i = 0; i < NR_TABLES; i++)
		for (int k = 0; k < 3; k++) {
			if (k == 2 && !tables[i].view)
				continue;
			snprintf(want, sizeof(want), "\n%s%s\t", tables[i].name,
				 k == 0 ? "" : k == 1 ? "_local" : "_mv");
			missing += !strstr(have, want);
		}
	if (!missing)
		return 0;
	if (cluster_of(c, cluster, sizeof(cluster), why, len))
		return -1;
	log_info("export: %s: making %zu missing tables and views in database %s%s%s "
		 "(create=no in the URL stops this)", clickhouse__url(c),
		 missing, db, *cluster ? " over cluster " : "", cluster);
	return make_tables(c, cluster, why, len);
}

int chschema__prune(struct clickhouse *c, char *why, size_t len)
{
	const char *db = clickhouse__database(c), *reply;
	char sql[512], parts[4096], *save = NULL;
	int days = clickhouse__raw_days(c);
	long long since = -1, n = 0;

	if (!days)
		return 0;
	/* the rollups of this server hold the days to drop */
	snprintf(sql, sizeof(sql), "SELECT toUInt32(max(since)), count() FROM "
		 "%s.rollups_local", db);
	if (migration_query(c, sql, &reply, why, len))
		return -1;
	if (sscanf(reply, "%lld\t%lld", &since, &n) != 2 || n < 1 ||
	    since < 0)
		return 0;
	snprintf(sql, sizeof(sql), "SELECT DISTINCT partition FROM system.parts "
		 "WHERE database = '%s' AND table IN ('stacks_local', "
		 "'cids_local') AND active AND toDate(partition) < today() - %d "
		 "AND toDate(partition) > toDate(toDateTime(%lld)) ORDER BY "
		 "partition LIMIT 400 FORMAT TabSeparated", db, days, since);
	if (migration_query(c, sql, &reply, why, len))
		return -1;
	snprintf(parts, sizeof(parts), "%s", reply);
	for (char *d = strtok_r(parts, "\n", &save); d;
	     d = strtok_r(NULL, "\n", &save)) {
		if (strspn(d, "0123456789-") != strlen(d) || strlen(d) != 10)
			continue;	/* a date, YYYY-MM-DD, or nothing */
		log_info("export: %s: dropping the raw rows of %s (raw_days=%d; "
			 "the rollups keep their sums)", clickhouse__url(c), d,
			 days);
		for (int t = 0; t < 2; t++) {
			snprintf(sql, sizeof(sql), "ALTER TABLE %s.%s_local DROP "
				 "PARTITION '%s'", db, t ? "cids" : "stacks", d);
			if (migration_query(c, sql, &reply, why, len))
				return -1;
		}
	}
	/* where the raw rows begin now: a report's window edges before it
	 * are whole hours of the rollups */
	snprintf(sql, sizeof(sql), "INSERT INTO %s.rollups_local SELECT "
		 "toDateTime(%lld), toDateTime(today() - %d) WHERE (SELECT "
		 "max(raw_from) FROM %s.rollups_local) < toDateTime(today() - "
		 "%d)", db, since, days, db, days);
	return migration_query(c, sql, &reply, why, len);
}
