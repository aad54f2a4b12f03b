/*
 * demangle.c - see demangle.h.
 */
#define _GNU_SOURCE
#include "binary/demangle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

const char *demangle__name(const char *sym, char *buf, size_t len)
{
	const char *at;
	char base[DEMANGLE_MAX_INPUT + 1], *out;
	size_t n;
	int w;

	/* Itanium C++ and Rust's legacy scheme (_ZN...17h<hash>E, the
	 * hash dropped), and Rust's v0 (_R): libiberty's automatic style
	 * tells them apart */
	if (strncmp(sym, "_Z", 2) && strncmp(sym, "_R", 2))
		return sym;
	at = strchr(sym, '@');
	n = at ? (size_t)(at - sym) : strlen(sym);
	if (n > DEMANGLE_MAX_INPUT)
		return sym;
	memcpy(base, sym, n);
	base[n] = '\0';
	/* the recursion limit stays on (no DMGL_NO_RECURSE_LIMIT): a
	 * crafted name cannot exhaust the stack */
	out = cplus_demangle(base, DMGL_PARAMS | DMGL_ANSI);
	if (!out)
		return sym;
	w = snprintf(buf, len, "%s%s", out, at ? at : "");
	free(out);
	return w >= 0 && (size_t)w < len ? buf : sym;
}
