/*
 * ctl.h - the daemon's control socket: a UNIX stream socket, created
 * with mode 0600, one request line per connection ("status", "flush",
 * "stop"), answered with text lines; the last line is "ok" or
 * "error: ...".
 */
#ifndef ICPPD_DAEMON_CTL_H
#define ICPPD_DAEMON_CTL_H

#include <stddef.h>

/*
 * Listens on @path: refuses a path where a daemon answers, replaces a
 * stale socket (nobody listening), refuses anything that is not a
 * socket.  The fd, or -1 with "PATH: why" in @err.
 */
int ctl__listen(const char *path, char *err, size_t errlen);

/* The same checks as ctl__listen(), without creating anything: 0, or
 * -1 with "PATH: why" in @err. */
int ctl__check(const char *path, char *err, size_t errlen);

/* Accepts one connection on @lfd and reads its request line into @req
 * (without the newline).  The connection's fd, or -1 when there was
 * none or it sent nothing within a second. */
int ctl__accept(int lfd, char *req, size_t len);

/* Sends @request to the daemon at @path and copies its answer to
 * stdout.  0 when the answer ends with "ok", else 1 (message on
 * stderr). */
int ctl__request(const char *path, const char *request);

#endif
