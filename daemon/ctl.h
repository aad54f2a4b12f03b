/*
 * ctl.h - the daemon's control socket: a UNIX stream socket, created
 * with mode 0600, one request line per connection ("status", "flush",
 * "stop"), answered with text lines; the last line is "ok" or
 * "error: ...".
 */
#ifndef ICPPD_DAEMON_CTL_H
#define ICPPD_DAEMON_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Listens on @path: refuses a path where a daemon answers, replaces a
 * stale socket (nobody listening), refuses anything that is not a
 * socket.  The fd, or -1 with "PATH: why" in @err.
 */
int ctl__listen(const char *path, char *err, size_t errlen);

/* The same checks as ctl__listen(), without creating anything: 0, or
 * -1 with "PATH: why" in @err. */
int ctl__check(const char *path, char *err, size_t errlen);

/*
 * The daemon's side: a server that never blocks.  Any local user of the
 * socket's owner may connect, so one that never reads its reply, or
 * sends a byte a second, must not stall sampling: every socket is
 * non-blocking, each client has its own request and reply buffers, at
 * most CTL_MAX_CLIENTS are served at once, and a client not done within
 * CTL_TIMEOUT_MS is dropped.
 */
#define CTL_MAX_CLIENTS 8
#define CTL_TIMEOUT_MS 2000
#define CTL_MAX_REQUEST 64
#define CTL_MAX_REPLY (4 << 20)

/* Writes the reply to request @req (without its newline) to @out. */
typedef void (*ctl_answer_fn)(void *arg, const char *req, FILE *out);

struct ctl_server;
/* Serves listening socket @lfd (from ctl__listen(), non-blocking). */
struct ctl_server *ctl_server__new(int lfd, ctl_answer_fn answer, void *arg);
/* Closes every client, not @lfd. */
void ctl_server__delete(struct ctl_server *s);
/* Moves every client on as far as it goes without blocking, and with
 * @pending (poll found @lfd readable) accepts what is pending: never
 * otherwise, as the kernel makes a socket for every accept4(), even one
 * that finds nothing (15 % of the daemon's CPU, called at each step).
 * Call when @lfd is readable and at least every few hundred ms. */
void ctl_server__service(struct ctl_server *s, bool pending);
/* The clients being served. */
size_t ctl_server__clients(const struct ctl_server *s);

/* Sends @request to the daemon at @path and copies its answer to
 * stdout.  0 when the answer ends with "ok", else 1 (message on
 * stderr). */
int ctl__request(const char *path, const char *request);

#endif
