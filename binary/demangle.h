/*
 * demangle.h - C++ (Itanium ABI) symbol names as people read them, with
 * libiberty's cplus_demangle, the demangler binutils and GDB use.
 */
#ifndef ICPPD_BINARY_DEMANGLE_H
#define ICPPD_BINARY_DEMANGLE_H

#include <stddef.h>

/* Names longer than this are left mangled: symbol names come from files
 * anyone can craft, and the demangler's work grows with the name. */
#define DEMANGLE_MAX_INPUT 4096

/*
 * @sym demangled with its parameters ("ns::f(int)") into @buf; a symbol
 * version ("@@GLIBCXX_3.4") stays after the name.  @sym itself when it
 * is not a mangled name, is too long, or its demangled form does not fit
 * in @len bytes.
 */
const char *demangle__name(const char *sym, char *buf, size_t len);

#endif
