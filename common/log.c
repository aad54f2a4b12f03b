/*
 * log.c - leveled messages on stderr.
 */
#define _GNU_SOURCE
#include "common/log.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/printable.h"

static enum log_level max_level = LOG_INFO;

/* Progress: shown only after this long, so quick work draws nothing. */
#define PROGRESS_AFTER_NS 500000000LL
#define PROGRESS_EVERY_NS 100000000LL
static struct {
	int64_t start, last;	/* clock__mono_ns(); 0: not started */
	int depth;		/* starts not yet ended: work within work
				 * goes on the outer line */
	bool shown;
} progress;

static void clear_progress(void)
{
	if (progress.shown)
		fputs("\r\033[K", stderr);
	progress.shown = false;
}

void log__set_level(enum log_level max)
{
	max_level = max;
}

void log__msg(enum log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = { "", "warning: ", "", "debug: " };
	char *line;
	va_list ap;

	if (level > max_level && !(level == LOG_DEBUG && getenv("ICPPD_DEBUG")))
		return;
	clear_progress();
	fprintf(stderr, "icppd: %s", prefix[level]);
	/* one line whatever a path or a name in it holds (printable.h) */
	va_start(ap, fmt);
	if (vasprintf(&line, fmt, ap) < 0)
		line = NULL;
	va_end(ap);
	printable__write(stderr, line ? line : fmt);
	free(line);
	fputc('\n', stderr);
}

void log__progress_start(void)
{
	if (progress.depth++)
		return;
	progress.start = max_level >= LOG_INFO && isatty(STDERR_FILENO) ?
			 clock__mono_ns() : 0;
	progress.last = 0;
}

void log__progress(const char *fmt, ...)
{
	int64_t now;
	va_list ap;

	if (!progress.start)
		return;
	now = clock__mono_ns();
	if (now - progress.start < PROGRESS_AFTER_NS ||
	    now - progress.last < PROGRESS_EVERY_NS)
		return;
	progress.last = now;
	progress.shown = true;
	fputs("\ricppd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\033[K", stderr);
	fflush(stderr);
}

void log__progress_end(void)
{
	if (progress.depth && --progress.depth)
		return;
	clear_progress();
	progress.start = 0;
}
