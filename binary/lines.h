/*
 * lines.h - source lines of code addresses, from the DWARF line tables
 * (.debug_line, read with libdwarf) of a module or of its separate
 * debug file (/usr/lib/debug/.build-id/...).
 *
 * The same tables' DIEs give the functions inlined at an address.
 *
 * Modules are opened on first use and cached by path.  A module whose
 * file no longer has the recorded build-id is never read: a rebuilt
 * binary would give wrong lines.
 */
#ifndef ICPPD_BINARY_LINES_H
#define ICPPD_BINARY_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct lines;

struct lines *lines__new(void);
void lines__delete(struct lines *l);

/*
 * The source file (as the line table names it, with its compilation
 * directory: a full path where the compiler gave one; owned by @l) and
 * line of virtual address
 * @vaddr of the module at @path with @build_id ("" for none).  0, or
 * -ENOENT when unknown (no line table, another build, an address
 * outside every sequence).
 */
int lines__find(struct lines *l, const char *path, const char *build_id,
		uint64_t vaddr, const char **file, unsigned *line);

/* A frame of an address: a function and its source line there. */
struct lines_frame {
	const char *name;	/* NULL: the function the others are
				 * inlined in (the caller knows it) */
	const char *file;	/* NULL (line 0): unknown */
	unsigned line;
};

/* The most frames lines__inlined() gives: 16 inlined, and the one they
 * are inlined in. */
#define LINES_MAX_FRAMES 17
/* The longest function name it gives (a longer one is cut). */
#define LINES_NAME_MAX 400

/*
 * The frames at virtual address @vaddr of the module at @path with
 * @build_id, innermost first: each function inlined there
 * (DW_TAG_inlined_subroutine) with its line at @vaddr (the innermost
 * one's is @vaddr's own line; an outer one's, the line where it called
 * the next one in), then, unnamed, the line of the function they are
 * all inlined in.  Names and files are owned by @l; C++ names are
 * mangled.  At most @cap frames (LINES_MAX_FRAMES gets every one): their
 * number, 1 when nothing is inlined at @vaddr, 0 when unknown, or
 * -ENOENT when the module has no DWARF (no address of it has any).
 */
int lines__inlined(struct lines *l, const char *path, const char *build_id,
		   uint64_t vaddr, struct lines_frame *out, size_t cap);

/*
 * The separate debug file of the module at @path with @build_id
 * (debuginfo__find(), with debuginfod when @network), looked up by the
 * worker, so the same timeout bounds it: its path into @out (@len
 * bytes).  0, or -ENOENT when there is none, it took too long, or the
 * worker was lost.
 */
int lines__debug_file(struct lines *l, const char *path, const char *build_id,
		      bool network, char *out, size_t len);

#endif
