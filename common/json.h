/*
 * json.h - writing a JSON string, the one piece of JSON encoding the
 * subcommands share (their objects are fixed printf formats).
 */
#ifndef ICPPD_COMMON_JSON_H
#define ICPPD_COMMON_JSON_H

#include <stdio.h>

/* Writes @s as a quoted JSON string, escaping quotes, backslashes and
 * control characters. */
static inline void json__string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

#endif
