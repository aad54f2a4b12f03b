/*
 * printable.h - text that others parse or a terminal shows, made safe:
 * function names, commands and paths come from files and processes a
 * local user controls.  A name holding a newline would forge a line of
 * folded output or of a log; an escape sequence would reach the
 * terminal; bytes that are not UTF-8 make JSON invalid.
 */
#ifndef ICPPD_COMMON_PRINTABLE_H
#define ICPPD_COMMON_PRINTABLE_H

#include <stddef.h>
#include <stdio.h>

/* The length of the UTF-8 sequence at @s (1 to 4 bytes), or 0 where
 * the bytes there are not one (a stray continuation byte, a truncated or
 * overlong sequence, a surrogate, a code point above U+10FFFF). */
size_t utf8__len(const unsigned char *s);

/* Whether the valid UTF-8 sequence of @len bytes at @s is a control
 * character: C0, DEL or C1. */
int utf8__is_control(const unsigned char *s, size_t len);

/* @s with every control character and every byte of invalid UTF-8
 * written as \xNN (a backslash is written as itself: the text stays
 * readable, and no byte of the result is a control character).  A copy,
 * or NULL when out of memory. */
char *printable__dup(const char *s);

/* printable__dup(), written to @out. */
void printable__write(FILE *out, const char *s);

#endif
