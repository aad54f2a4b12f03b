/*
 * dwarf.h - what DWARF says at the addresses of a profile's modules
 * (dwarf.c), and the functions inlined in a profile's frames drawn as
 * frames of their own (inline.c).
 */
#ifndef ICPPD_PROFILE_DWARF_H
#define ICPPD_PROFILE_DWARF_H

#include <stdint.h>

#include "profile/run_profile.h"

struct lines;
struct lines_frame;
struct store;

/*
 * The functions inlined at the addresses of a profile's modules and
 * the source lines (lines__inlined()), read from store @st (may be
 * NULL) where an earlier report kept them for the build, else from the
 * DWARF @l reads, and then kept in @st (when it can be written) by
 * profile_dwarf__delete().  A build-id's DWARF never changes: a later
 * report of the build opens no DWARF for the addresses an earlier one
 * asked about.  @p, @l and @st outlive it.
 */
struct profile_dwarf;
struct profile_dwarf *profile_dwarf__new(const struct run_profile *p,
					 struct lines *l, struct store *st);
/* The frames at virtual address @vaddr of module @module_id, as
 * lines__inlined() gives them (names and files made printable; C++
 * names mangled), in *@out until the next call: their number, 0 when
 * unknown, or -ENOMEM. */
int profile_dwarf__at(struct profile_dwarf *d, int64_t module_id,
		      uint64_t vaddr, const struct lines_frame **out);
/* A row of the store's inlined table, @text (anyone's to write), as
 * frames into @fr (LINES_MAX_FRAMES; names and files @d's, valid while
 * it lives): their number, 0 when it is not a row a report writes (more
 * frames than the line reader gives, a named last frame, a line not
 * "NAME\tFILE\tLINE"), or -ENOMEM. */
int profile_dwarf__row(struct profile_dwarf *d, const char *text,
		       struct lines_frame *fr);
/* Keeps what DWARF said in the store, then frees @d (NULL: nothing). */
/* Between these two, the store's rows asked for are read in one
 * transaction, not a lock of the database per address (5 % of a 10 kHz
 * g++ record's report, 10 % of its pprof); @d may be NULL. */
void profile_dwarf__reads_begin(struct profile_dwarf *d);
void profile_dwarf__reads_end(struct profile_dwarf *d);
void profile_dwarf__delete(struct profile_dwarf *d);

/*
 * Draws the functions inlined in @p's function frames as frames of
 * their own below them (CCT_INLINED), from what @d says: at each
 * callee's call site, and, for a leaf, at its function's sampled
 * instructions (@p read with RUN_PROFILE_PCS), whose samples split its
 * weight.  Replaces p->cct; a frame of a module without DWARF stays as
 * it was, and every frame id stays.  0 or -ENOMEM.
 */
int profile__inline(struct run_profile *p, struct profile_dwarf *d);

#endif
