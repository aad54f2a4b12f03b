/*
 * printable.c - see printable.h.
 */
#include "common/printable.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t utf8__len(const unsigned char *s)
{
	uint32_t cp;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;	/* a continuation byte, 0xc0, 0xc1, 0xf5.. */
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;	/* the NUL included: truncated */
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;	/* overlong, a surrogate, out of range */
	return n;
}

int utf8__is_control(const unsigned char *s, size_t len)
{
	return (len == 1 && (s[0] < 0x20 || s[0] == 0x7f)) ||
	       (len == 2 && s[0] == 0xc2 && s[1] < 0xa0);	/* C1 */
}

/* Appends @s, made printable, to @out (which has room: 4 bytes per
 * byte of @s, and the NUL); the length written. */
static size_t render(char *out, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	while (*p) {
		size_t n = utf8__len(p);

		if (n && !utf8__is_control(p, n)) {
			memcpy(out + o, p, n);
			o += n;
			p += n;
			continue;
		}
		for (size_t i = 0; i < (n ? n : 1); i++, p++) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[*p >> 4];
			out[o++] = hex[*p & 15];
		}
	}
	out[o] = '\0';
	return o;
}

char *printable__dup(const char *s)
{
	size_t len = strlen(s);
	char *out = len < (SIZE_MAX - 1) / 4 ? malloc(4 * len + 1) : NULL;

	if (out)
		render(out, s);
	return out;
}

void printable__write(FILE *out, const char *s)
{
	char buf[1024];
	const char *p = s;

	/* in pieces of 255 bytes, never splitting a UTF-8 sequence */
	while (*p) {
		char piece[256];
		size_t n = 0;

		while (p[n] && n < sizeof(piece) - 4) {
			size_t k = utf8__len((const unsigned char *)p + n);

			n += k ? k : 1;
		}
		memcpy(piece, p, n);
		piece[n] = '\0';
		render(buf, piece);
		fputs(buf, out);
		p += n;
	}
}
