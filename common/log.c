/*
 * log.c - leveled messages on stderr.
 */
#include "common/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static enum log_level max_level = LOG_INFO;

void log__set_level(enum log_level max)
{
	max_level = max;
}

void log__msg(enum log_level level, const char *fmt, ...)
{
	static const char *const prefix[] = { "", "warning: ", "", "debug: " };
	va_list ap;

	if (level > max_level && !(level == LOG_DEBUG && getenv("ICPPD_DEBUG")))
		return;
	fprintf(stderr, "icppd: %s", prefix[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
