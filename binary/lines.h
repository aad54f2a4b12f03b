/*
 * lines.h - source lines of code addresses, from the DWARF line tables
 * (.debug_line, read with libdwarf) of a module or of its separate
 * debug file (/usr/lib/debug/.build-id/...).
 *
 * Modules are opened on first use and cached by path.  A module whose
 * file no longer has the recorded build-id is never read: a rebuilt
 * binary would give wrong lines.
 */
#ifndef ICPPD_BINARY_LINES_H
#define ICPPD_BINARY_LINES_H

#include <stddef.h>
#include <stdint.h>

struct lines;

struct lines *lines__new(void);
void lines__free(struct lines *l);

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

#endif
