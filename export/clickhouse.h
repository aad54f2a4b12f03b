/*
 * clickhouse.h - a ClickHouse server's HTTP interface, through libcurl:
 * one query at a time, its data (an INSERT's rows) as the POST body, the
 * reply read up to a bound.
 *
 * The URL is the server's HTTP endpoint, http://HOST:PORT or https://...,
 * optionally with ?database=NAME (default "icppd"): the database the
 * export and fleet tables live in (the exporter makes them where they
 * are missing, unless the URL also says create=no; icppd export
 * --schema prints them).
 */
#ifndef ICPPD_EXPORT_CLICKHOUSE_H
#define ICPPD_EXPORT_CLICKHOUSE_H

#include <stdbool.h>
#include <stddef.h>

/* What a reply may hold: a SELECT's rows beyond it are an error. */
#define CLICKHOUSE_REPLY_MAX (64u << 20)

struct clickhouse;

/* NULL with "why" in @err (a URL that is not http(s)://HOST..., a
 * database name that is not an identifier, out of memory). */
struct clickhouse *clickhouse__new(const char *url, char *err, size_t len);
void clickhouse__delete(struct clickhouse *c);

/* The server's URL without its user and password: what a database's
 * export spool names the server by (a password stays out of it). */
const char *clickhouse__url(const struct clickhouse *c);
/* Whether missing tables may be made (the URL has no create=no). */
bool clickhouse__may_create(const struct clickhouse *c);
/* How many days the raw rows are kept (the URL's raw_days=N; 0, the
 * default: for good): chschema__prune(). */
int clickhouse__raw_days(const struct clickhouse *c);
/* The database named by the URL ("icppd" when it names none). */
const char *clickhouse__database(const struct clickhouse *c);

/*
 * Runs @sql; @body (@len bytes, may be NULL) is its data, as the POST
 * body (an INSERT ... FORMAT's rows).  @settings ("name=value&...",
 * may be NULL) go into the URL.  0 with the reply in *@reply (owned by
 * @c, NUL-terminated, valid until the next call), or -1 with
 * clickhouse__error() saying why (the server unreachable, its HTTP
 * status and message, a reply over CLICKHOUSE_REPLY_MAX).
 */
int clickhouse__query(struct clickhouse *c, const char *sql,
		      const char *settings, const char *body, size_t len,
		      const char **reply);
/* The same in @database (an identifier: "default" for what makes the
 * URL's database). */
int clickhouse__query_in(struct clickhouse *c, const char *database,
			 const char *sql, const char *settings,
			 const char *body, size_t len, const char **reply);
const char *clickhouse__error(const struct clickhouse *c);
/* The longest a query may take, its reply read, in seconds (0: the
 * default, 120): past it the query fails, whatever the server sends. */
#define CLICKHOUSE_TIMEOUT_S 120
void clickhouse__set_timeout(struct clickhouse *c, long seconds);

/* Text being built: a query, an INSERT's rows (v: NUL-terminated once
 * anything was appended; free(v) when done). */
struct ch_text {
	char *v;
	size_t n, cap;
};
/* Appends @s as it is (SQL, a row's separators).  0 or -ENOMEM. */
int clickhouse__append(struct ch_text *t, const char *s);
/* Appends @s as a ClickHouse string literal's inside ('...' quoting,
 * and TabSeparated's: \\, \' and control characters escaped).  0 or
 * -ENOMEM. */
int clickhouse__quote(struct ch_text *t, const char *s);

/* One character of a string as ClickHouse writes it (TabSeparated, or
 * inside '...'): at *@p, before @end, its backslash escape decoded into
 * *@out and *@p past it.  0, or -1 when it runs past @end or is a
 * malformed \\x escape. */
int clickhouse__unescape(const char **p, const char *end, char *out);

#endif
