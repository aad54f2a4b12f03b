/*
 * cmd_export.c - "icppd export": ship the runs a database holds to a
 * ClickHouse server (export/export.h), or print the ClickHouse schema
 * they go into.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/log.h"
#include "export/chschema.h"
#include "export/export.h"
#include "export/pull.h"
#include "schema/report_store.h"
#include "schema/store.h"

struct export_opts {
	const char *db, *database, *cluster;
	uint64_t run;
	bool schema, all, retry, due;
};

#define OPT(f) offsetof(struct export_opts, f)

static const struct cli_option export_options[] = {
	CLI_OPT_DATABASE(OPT(db)),
	{ "run", 0, CLI_UINT, OPT(run), "N",
	  "queue run N (default: the latest measurement run)", 1, INT64_MAX },
	{ "all", 0, CLI_FLAG, OPT(all), NULL,
	  "queue every finished run (record, daemon segment) not shipped "
	  "to URL yet, then ship them", 0, 0 },
	{ "retry", 0, CLI_FLAG, OPT(retry), NULL,
	  "queue nothing: only retry the runs already queued", 0, 0 },
	{ "due", 0, CLI_FLAG, OPT(due), NULL,
	  "as --retry, but only the runs whose next try is due after the "
	  "backoff; and pull the fleet's path maps of the builds the latest "
	  "run sampled (the daemon's exporter)", 0, 0 },
	{ "schema", 0, CLI_FLAG, OPT(schema), NULL,
	  "print the ClickHouse DDL instead (for clickhouse-client "
	  "--multiquery)", 0, 0 },
	{ "ch-database", 0, CLI_STRING, OPT(database), "NAME",
	  "--schema: the ClickHouse database (default icppd)", 0, 0 },
	{ "cluster", 0, CLI_STRING, OPT(cluster), "NAME",
	  "--schema: Distributed tables over cluster NAME", 0, 0 },
};

const struct cli_command export_command = {
	.name = "export",
	.synopsis = "[-d FILE] [--run N | --all | --retry | --due] URL\n"
		    "       icppd export --schema [--ch-database NAME] "
		    "[--cluster NAME]",
	.brief = "ship runs to ClickHouse, or print its schema",
	.summary = "Queue a run for the ClickHouse server at URL (its HTTP\n"
		   "interface, http://HOST:8123[?database=NAME]) and ship\n"
		   "every run queued for it: inferred stacks per process and\n"
		   "raw CID counts, each run once, marked exported only when\n"
		   "the server acknowledged it.  A run the server did not take\n"
		   "stays queued in the database; this command, record\n"
		   "--export and the daemon retry it.",
	.options = export_options,
	.noptions = sizeof(export_options) / sizeof(export_options[0]),
	.permute = true,
	.epilog = "Exit status 1 when a run could not be shipped (it stays\n"
		  "queued), or --due could not pull a path map.  See\n"
		  "icppd-export(1).\n",
};

/* --due: the fleet's maps of the builds the latest run (the daemon's
 * segment going on) sampled and this database never pulled.  0;
 * PULL_REMOTE_FAILED (logged) when the server failed; -1 after logging a
 * local failure. */
static int pull_latest(struct store *st, const char *url)
{
	struct pull_result res;
	int64_t latest = 0;
	int r;

	if (store__latest_run(st, &latest) < 0) {
		log_error("%s", store__error(st));
		return -1;
	}
	r = pull__builds(st, url, latest, NULL, &res);
	if (!r && res.paths)
		log_info("fleet: %lld path%s of %lld build%s learned by other "
			 "hosts", (long long)res.paths, res.paths == 1 ? "" :
			 "s", (long long)res.builds, res.builds == 1 ? "" :
			 "s");
	if (r == PULL_REMOTE_FAILED)
		log_warn("fleet: no path map pulled: %s", res.error);
	return r;
}

int cmd_export(int argc, char **argv)
{
	struct export_opts o = { .db = "icppd.db" };
	struct export_result res;
	struct store *st;
	char err[600];
	int64_t run = 0;
	int idx, ret = 1, pulled = 0;

	idx = cli__parse(&export_command, argc, argv, &o);
	if (idx < 0)
		return idx == -1 ? 0 : 2;
	if (o.schema) {
		if (argc != idx) {
			fprintf(stderr, "icppd: export: --schema takes no URL\n");
			return 2;
		}
		chschema__print(stdout, o.database ? o.database : "icppd",
			       o.cluster);
		return fflush(stdout) ? 1 : 0;
	}
	if (argc - idx != 1) {
		fprintf(stderr, "icppd: export: expected one URL\n"
			"Try 'icppd export --help'.\n");
		return 2;
	}
	if ((o.run != 0) + o.all + o.retry + o.due > 1) {
		fprintf(stderr, "icppd: export: --run, --all, --retry and --due "
			"choose what to ship: one of them\n");
		return 2;
	}
	if (access(o.db, F_OK)) {
		log_error("%s: no such database (record a run first: icppd "
			  "record -d %s -- COMMAND)", o.db, o.db);
		return 1;
	}
	cli__use_calls_cache();
	st = store__open_derived(o.db, err, sizeof(err));
	if (!st) {
		log_error("%s", err);
		return 1;
	}
	if (o.run) {
		struct run_row r;
		int found = store__run(st, (int64_t)o.run, &r);

		if (found) {
			log_error("%s: %s", o.db, found == STORE_NONE ? "no such run" :
				  store__error(st));
			goto out;
		}
		run = (int64_t)o.run;
	} else if (o.all) {
		int64_t queued;

		if (export__queue_all(st, argv[idx], &queued))
			goto out;
		log_info("%" PRId64 " run%s queued", queued,
			 queued == 1 ? "" : "s");
	} else if (!o.retry && !o.due && store__latest_run(st, &run) < 0) {
		log_error("%s", store__error(st));
		goto out;
	}
	pulled = o.due ? pull_latest(st, argv[idx]) : 0;
	if (pulled < 0 || export__run(st, run, argv[idx], !o.due, &res))
		goto out;
	printf("exported %" PRId64 " run%s (%" PRId64 " stack rows, %" PRId64
	       " CID rows) to %s\n", res.runs, res.runs == 1 ? "" : "s",
	       res.stack_rows, res.cid_rows, argv[idx]);
	if (res.failed) {
		log_error("export: %s: %" PRId64 " run%s stay%s queued (icppd "
			  "export --retry %s retries)", res.error, res.failed,
			  res.failed == 1 ? "" : "s", res.failed == 1 ? "s" :
			  "", argv[idx]);
		goto out;
	}
	ret = pulled ? 1 : 0;
out:
	store__close(st);
	return ret;
}
