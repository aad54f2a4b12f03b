/*
 * hostile_http.c - a "ClickHouse server" that answers report --from
 * with hostile data, on a loopback port, to check that a fleet report
 * stays bounded in memory and time, prints nothing unprintable, and
 * says clearly what was wrong.  Every query gets a 200 reply; the
 * query of what the database has (its body names system.tables) a sane
 * "1\t0" (events, no rollups), the count query (uniqExact) a sane
 * "3\t7\t2000\t0" (hosts, runs, rows, rollup rows), the stacks query
 * what MODE says:
 *   huge     80 MiB of rows (over the client's 64 MiB bound)
 *   wide     rows of distinct 4,000-byte names, up to 60 MiB
 *   names    names with ESC, CR, BEL, invalid UTF-8, U+FFFE and ';'
 *   absurd   weights 1e300, nan, -5, a count of 10^20 frames
 *   endless  a row every 100 ms, never done
 * It stops by itself after LIMIT seconds (default 60) or 100
 * connections, and serves 127.0.0.1 only.
 * Usage: hostile_http PORTFILE MODE [LIMIT]   (writes its port there)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int put(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The request, as far as its headers and body come in one second. */
static void read_request(int fd, char *buf, size_t len)
{
	struct timeval tv = { 1, 0 };
	size_t at = 0;
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	buf[0] = '\0';
	while (at + 1 < len && (n = read(fd, buf + at, len - at - 1)) > 0) {
		char *body;

		at += (size_t)n;
		buf[at] = '\0';
		body = strstr(buf, "\r\n\r\n");
		if (body) {
			const char *cl = strcasestr(buf, "Content-Length:");
			size_t want = cl ? strtoul(cl + 15, NULL, 10) : 0;

			if (at - (size_t)(body + 4 - buf) >= want)
				break;
		}
	}
}

/* The fixed replies. */
static const char names[] =
	"['main','\\x1b]0;pwned\\x07\\x1b[2Jesc']\tprecise\t5\t2\n"
	"['main','FAKE\\rcr\\a']\tprecise\t4\t2\n"
	"['main','bad\xff\xfeutf8']\tprecise\t3\t2\n"
	"['main','nonchar\xef\xbf\xbe']\tprecise\t2\t2\n"
	"['main','semi;FORGED']\tprecise\t1\t2\n";
static const char absurd[] =
	"['main','a']\tprecise\t1e300\t1\n"
	"['main','b']\tprecise\tnan\t1\n"
	"['main','c']\tprecise\t-5\t1\n"
	"['main','d']\tprecise\t1\t100000000000000000000\n";

static void rows(int fd, const char *mode)
{
	static char row[8192];
	size_t sent = 0;

	if (!strcmp(mode, "huge")) {
		for (unsigned i = 0; sent < (80u << 20); i++) {
			int n = snprintf(row, sizeof(row),
					 "['main','f%u']\tprecise\t1\t1\n", i);

			if (put(fd, row, (size_t)n))
				return;
			sent += (size_t)n;
		}
	} else if (!strcmp(mode, "wide")) {
		char name[4001];

		memset(name, 'w', sizeof(name) - 1);
		name[sizeof(name) - 1] = '\0';
		for (unsigned i = 0; sent < (60u << 20); i++) {
			int n = snprintf(row, sizeof(row),
					 "['%08u%s']\tprecise\t1\t1\n", i,
					 name + 8);

			if (put(fd, row, (size_t)n))
				return;
			sent += (size_t)n;
		}
	} else if (!strcmp(mode, "names") || !strcmp(mode, "absurd")) {
		const char *body = !strcmp(mode, "names") ? names : absurd;

		put(fd, body, strlen(body));
	} else if (!strcmp(mode, "endless")) {
		for (unsigned i = 0; i < 100000; i++) {
			int n = snprintf(row, sizeof(row),
					 "['main','e%u']\tprecise\t1\t1\n", i);
			struct timespec ts = { 0, 100000000 };

			if (put(fd, row, (size_t)n))
				return;
			nanosleep(&ts, NULL);
		}
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int s, one = 1;
	FILE *f;

	if (argc < 3)
		return 2;
	signal(SIGPIPE, SIG_IGN);
	alarm(argc > 3 ? (unsigned)atoi(argv[3]) : 60);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s, (struct sockaddr *)&a, sizeof(a)) || listen(s, 8) ||
	    getsockname(s, (struct sockaddr *)&a, &alen))
		return 1;
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%u\n", ntohs(a.sin_port)) < 0 || fclose(f))
		return 1;
	for (int served = 0; served < 100; served++) {
		static char req[1 << 16];
		static const char head[] = "HTTP/1.1 200 OK\r\n"
			"Content-Type: text/tab-separated-values\r\n"
			"Connection: close\r\n\r\n";
		int c = accept(s, NULL, NULL);

		if (c < 0)
			continue;
		read_request(c, req, sizeof(req));
		put(c, head, sizeof(head) - 1);
		if (strstr(req, "system.tables"))
			put(c, "1\t0\n", 4);
		else if (strstr(req, "uniqExact"))
			put(c, "3\t7\t2000\t0\n", 11);
		else
			rows(c, argv[2]);
		close(c);
	}
	return 0;
}
