/*
 * clickhouse.c - ClickHouse's HTTP interface through libcurl (see
 * clickhouse.h).
 *
 * The query goes in the URL (?query=...) when there is a body, else as
 * the body; http and https only, no redirects, bounded time (a server
 * that does not answer is an outage, and the caller retries later).
 */
#define _GNU_SOURCE		/* asprintf */
#include "export/clickhouse.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dynlib.h"
#include "common/grow.h"

#define CONNECT_TIMEOUT_S 5L

struct clickhouse {
	CURL *curl;
	char *base;		/* scheme://[user:password@]host[:port] */
	char *shown;		/* the URL without the user and password:
				 * what messages name and the spool keeps */
	char database[64];
	bool no_create;		/* create=no: never make missing tables */
	int raw_days;		/* raw_days=N: raw rows kept N days (0:
				 * for good) */
	char *reply;
	size_t nreply, reply_cap;
	bool too_long;
	long timeout_s;		/* a query's longest, its reply read */
	char error[512];
};

/* libcurl, loaded by the first client (common/dynlib.h).  The setopt
 * calls go through a pointer, so curl's compile-time check of their
 * values' types (typecheck-gcc.h) no longer sees them. */
static struct curl_fns {
	__typeof__(curl_global_init) *global_init;
	__typeof__(curl_easy_init) *easy_init;
	__typeof__(curl_easy_cleanup) *easy_cleanup;
	__typeof__(curl_easy_reset) *easy_reset;
	__typeof__(curl_easy_setopt) *easy_setopt;
	__typeof__(curl_easy_perform) *easy_perform;
	__typeof__(curl_easy_getinfo) *easy_getinfo;
	__typeof__(curl_easy_strerror) *easy_strerror;
	__typeof__(curl_easy_escape) *easy_escape;
	__typeof__(curl_free) *free;
} libcurl;
static const struct dynlib_fn curl_names[] = {
	DYNLIB_FN(struct curl_fns, global_init, curl_global_init),
	DYNLIB_FN(struct curl_fns, easy_init, curl_easy_init),
	DYNLIB_FN(struct curl_fns, easy_cleanup, curl_easy_cleanup),
	DYNLIB_FN(struct curl_fns, easy_reset, curl_easy_reset),
	DYNLIB_FN(struct curl_fns, easy_setopt, curl_easy_setopt),
	DYNLIB_FN(struct curl_fns, easy_perform, curl_easy_perform),
	DYNLIB_FN(struct curl_fns, easy_getinfo, curl_easy_getinfo),
	DYNLIB_FN(struct curl_fns, easy_strerror, curl_easy_strerror),
	DYNLIB_FN(struct curl_fns, easy_escape, curl_easy_escape),
	DYNLIB_FN(struct curl_fns, free, curl_free),
};
static struct dynlib curl_lib = {
	"libcurl.so.4", "libcurl4", curl_names,
	sizeof(curl_names) / sizeof(curl_names[0]), &libcurl,
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static int global_ret;

static void global_init(void)
{
	global_ret = dynlib__load(&curl_lib) ? -1 :
		     libcurl.global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

/* The database=NAME of @query (after '?'), into @out; 0, or -1 when it
 * is not an identifier. */
static int database_of(const char *query, char *out, size_t len)
{
	const char *p = query;

	snprintf(out, len, "icppd");
	while (p && *p) {
		const char *end = strchr(p, '&');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n > 9 && !strncmp(p, "database=", 9)) {
			size_t k = n - 9;

			if (k >= len)
				return -1;
			for (size_t i = 0; i < k; i++)
				if (!isalnum((unsigned char)p[9 + i]) &&
				    p[9 + i] != '_')
					return -1;
			memcpy(out, p + 9, k);
			out[k] = '\0';
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

struct clickhouse *clickhouse__new(const char *url, char *err, size_t len)
{
	struct clickhouse *c;
	const char *host, *q, *at;
	size_t n;

	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		snprintf(err, len, "%s: not an http:// or https:// URL "
			 "(ClickHouse's HTTP interface, e.g. "
			 "http://127.0.0.1:8123)", url);
		return NULL;
	}
	host = strstr(url, "://") + 3;
	n = strcspn(host, "/?#");
	if (!n) {
		snprintf(err, len, "%s: no host", url);
		return NULL;
	}
	pthread_once(&global_once, global_init);
	c = calloc(1, sizeof(*c));
	if (!c || global_ret) {
		free(c);
		snprintf(err, len, "%s", !global_ret ? "out of memory" :
			 *curl_lib.why ? curl_lib.why : "libcurl could not start");
		return NULL;
	}
	c->timeout_s = CLICKHOUSE_TIMEOUT_S;
	q = strchr(url, '?');
	if (database_of(q ? q + 1 : NULL, c->database, sizeof(c->database))) {
		snprintf(err, len, "%s: database= takes letters, digits and "
			 "_ only", url);
		free(c);
		return NULL;
	}
	for (const char *p = q; p; p = strchr(p + 1, '&')) {
		if (!strncmp(p + 1, "create=no", 9) &&
		    (!p[10] || p[10] == '&'))
			c->no_create = true;
		if (!strncmp(p + 1, "raw_days=", 9)) {
			char *end;
			long d = strtol(p + 10, &end, 10);

			if (end == p + 10 || (*end && *end != '&') || d < 1 ||
			    d > 36500) {
				snprintf(err, len, "%s: raw_days= takes a number "
					 "of days, 1 to 36500", url);
				free(c);
				return NULL;
			}
			c->raw_days = (int)d;
		}
	}
	c->base = strndup(url, (size_t)(host - url) + n);
	at = memchr(host, '@', n);
	if (asprintf(&c->shown, "%.*s%s", (int)(host - url), url,
		     at ? at + 1 : host) < 0)
		c->shown = NULL;
	c->curl = libcurl.easy_init();
	if (!c->base || !c->shown || !c->curl) {
		snprintf(err, len, "out of memory");
		clickhouse__delete(c);
		return NULL;
	}
	return c;
}

void clickhouse__delete(struct clickhouse *c)
{
	if (!c)
		return;
	if (c->curl)
		libcurl.easy_cleanup(c->curl);
	free(c->base);
	free(c->shown);
	free(c->reply);
	free(c);
}

const char *clickhouse__url(const struct clickhouse *c)
{
	return c->shown;
}

bool clickhouse__may_create(const struct clickhouse *c)
{
	return !c->no_create;
}

int clickhouse__raw_days(const struct clickhouse *c)
{
	return c->raw_days;
}

const char *clickhouse__database(const struct clickhouse *c)
{
	return c->database;
}

void clickhouse__set_timeout(struct clickhouse *c, long seconds)
{
	c->timeout_s = seconds > 0 ? seconds : CLICKHOUSE_TIMEOUT_S;
}

const char *clickhouse__error(const struct clickhouse *c)
{
	return c->error;
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct clickhouse *c = arg;
	size_t n = size * nmemb;

	if (c->nreply + n + 1 > CLICKHOUSE_REPLY_MAX) {
		c->too_long = true;
		return 0;		/* stops the transfer */
	}
	if (grow(&c->reply, &c->reply_cap, c->nreply + n + 1, 1, 4096))
		return 0;
	memcpy(c->reply + c->nreply, ptr, n);
	c->nreply += n;
	c->reply[c->nreply] = '\0';
	return n;
}

/* The first line of the reply, for an error message. */
static void first_line(const struct clickhouse *c, char *buf, size_t len)
{
	size_t n = c->reply ? strcspn(c->reply, "\n") : 0;

	snprintf(buf, len, "%.*s", (int)(n < 300 ? n : 300),
		 c->reply ? c->reply : "");
}

int clickhouse__query(struct clickhouse *c, const char *sql,
		      const char *settings, const char *body, size_t len,
		      const char **reply)
{
	return clickhouse__query_in(c, c->database, sql, settings, body, len,
				    reply);
}

int clickhouse__query_in(struct clickhouse *c, const char *database,
			 const char *sql, const char *settings,
			 const char *body, size_t len, const char **reply)
{
	char *q = NULL, *url = NULL;
	long status = 0;
	CURLcode rc;
	int ret = -1;

	c->nreply = 0;
	c->too_long = false;
	c->error[0] = '\0';
	if (grow(&c->reply, &c->reply_cap, 1, 1, 4096))
		goto nomem;
	c->reply[0] = '\0';
	if (body && !(q = libcurl.easy_escape(c->curl, sql, 0)))
		goto nomem;
	if (asprintf(&url, "%s/?database=%s%s%s%s%s", c->base, database,
		     q ? "&query=" : "", q ? q : "", settings ? "&" : "",
		     settings ? settings : "") < 0) {
		url = NULL;
		goto nomem;
	}
	libcurl.easy_reset(c->curl);
	libcurl.easy_setopt(c->curl, CURLOPT_URL, url);
	libcurl.easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	libcurl.easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	libcurl.easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
	libcurl.easy_setopt(c->curl, CURLOPT_TIMEOUT, c->timeout_s);
	libcurl.easy_setopt(c->curl, CURLOPT_POST, 1L);
	libcurl.easy_setopt(c->curl, CURLOPT_POSTFIELDS, body ? body : sql);
	libcurl.easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)(body ? len : strlen(sql)));
	libcurl.easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data);
	libcurl.easy_setopt(c->curl, CURLOPT_WRITEDATA, c);
	rc = libcurl.easy_perform(c->curl);
	if (rc == CURLE_OPERATION_TIMEDOUT) {
		snprintf(c->error, sizeof(c->error), "%s: no whole reply in "
			 "%ld s (a server that stalls, or a query longer than "
			 "the timeout)", c->shown, c->timeout_s);
		goto out;
	}
	if (rc != CURLE_OK) {
		snprintf(c->error, sizeof(c->error), "%s: %s", c->shown,
			 c->too_long ? "the reply is over 64 MiB" :
			 libcurl.easy_strerror(rc));
		goto out;
	}
	libcurl.easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		char line[320];

		first_line(c, line, sizeof(line));
		snprintf(c->error, sizeof(c->error), "%s: HTTP %ld: %s",
			 c->shown, status, line);
		goto out;
	}
	*reply = c->reply;
	ret = 0;
	goto out;
nomem:
	snprintf(c->error, sizeof(c->error), "out of memory");
out:
	libcurl.free(q);
	free(url);
	return ret;
}

int clickhouse__append(struct ch_text *t, const char *s)
{
	size_t k = strlen(s);

	if (grow(&t->v, &t->cap, t->n + k + 1, 1, 4096))
		return -ENOMEM;
	memcpy(t->v + t->n, s, k + 1);
	t->n += k;
	return 0;
}

int clickhouse__quote(struct ch_text *t, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		char esc[5] = { (char)ch, 0 };

		if (ch == '\\' || ch == '\'') {
			esc[0] = '\\';
			esc[1] = (char)ch;
		} else if (ch == '\t' || ch == '\n') {
			esc[0] = '\\';
			esc[1] = ch == '\t' ? 't' : 'n';
		} else if (ch < 0x20 || ch == 0x7f) {
			snprintf(esc, sizeof(esc), "\\x%02x", ch);
		}
		if (clickhouse__append(t, esc))
			return -ENOMEM;
	}
	return clickhouse__append(t, "");
}

int clickhouse__unescape(const char **p, const char *end, char *out)
{
	const char *s = *p;
	char c;

	if (s >= end)
		return -1;
	c = *s++;
	if (c == '\\') {
		if (s >= end)
			return -1;
		c = *s++;
		switch (c) {
		case 't': c = '\t'; break;
		case 'n': c = '\n'; break;
		case 'r': c = '\r'; break;
		case 'b': c = '\b'; break;
		case 'f': c = '\f'; break;
		case '0': c = '\0'; break;
		case 'x': {
			char hex[3] = { 0, 0, 0 }, *e;

			if (end - s < 2)
				return -1;
			hex[0] = s[0];
			hex[1] = s[1];
			c = (char)strtol(hex, &e, 16);
			if (*e)
				return -1;
			s += 2;
			break;
		}
		default: break;	/* \\ \' and the rest: the character */
		}
	}
	*out = c;
	*p = s;
	return 0;
}
