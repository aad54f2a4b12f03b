/*
 * json.h - writing a JSON string, the one piece of JSON encoding the
 * subcommands share (their objects are fixed printf formats).
 */
#ifndef ICPPD_COMMON_JSON_H
#define ICPPD_COMMON_JSON_H

#include <stdio.h>

#include "common/printable.h"

/* Writes @s as a quoted JSON string, escaping quotes, backslashes and
 * control characters (C1 too), and writing each byte that is not part of
 * valid UTF-8 as U+FFFD: the output is valid UTF-8 whatever @s holds. */
static inline void json__string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', out);
	while (*p) {
		size_t n = utf8__len(p);

		if (!n) {
			fputs("\\ufffd", out);
			p++;
			continue;
		}
		if (utf8__is_control(p, n))	/* C1: U+0080 + p[1] - 0x80 */
			fprintf(out, "\\u%04x", n == 1 ? p[0] : p[1]);
		else if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else
			fwrite(p, 1, n, out);
		p += n;
	}
	fputc('"', out);
}

#endif
