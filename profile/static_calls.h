/*
 * static_calls.h - the calls of a program's binaries, read from their
 * files (binary/callsites.h), as proven edges of the inference engine's
 * call graph: direct calls and tail calls, and indirect calls with the
 * functions whose address is taken (infer__add_indirect()).
 *
 * Edges join functions by the store's ids.  A function no sample and no
 * path map named yet (a caller the search may need) gets a provisional
 * id above the store's, defined in the CCT under its symbol; when an
 * inference is saved, static_calls__store_id() gives it a row of the
 * store's functions table.  Calls through a PLT stub or the GOT are
 * linked by symbol name to the function the program's other modules
 * export (the executable first, as the dynamic linker looks).
 *
 * A module's file is read only when it still has the build-id the store
 * recorded; otherwise, unless the store (or the machine's cache,
 * static_calls__use_cache()) keeps that build's calls from an earlier
 * inference, its calls are left out and counted.
 */
#ifndef ICPPD_PROFILE_STATIC_CALLS_H
#define ICPPD_PROFILE_STATIC_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inference/cct.h"
#include "inference/infer.h"
#include "schema/report_store.h"

struct static_calls;
struct cfi_cache;

struct static_calls_stats {
	unsigned modules;	/* read */
	unsigned unreadable;	/* gone, unreadable, or another build now */
	unsigned over_budget;	/* not read: over static_calls__limit() */
	uint64_t calls;		/* edges given to the engine */
	char unreadable_path[256];	/* one of them */
	char unreadable_why[64];	/* and why: strerror, or "another build now" */
};

/* Functions are defined into @t, which it borrows, named as the
 * store's are (demangled unless @mangled); provisional ids lie above
 * every id given to static_calls__function(), which must all come
 * first.  A build's calls are read from @st (may be NULL) when it
 * keeps them, else from the file, and then kept there
 * (profile/build_calls.h).  NULL when out of memory. */
struct static_calls *static_calls__new(struct cct *t, struct store *st,
				       bool mangled);
void static_calls__delete(struct static_calls *sc);

/* Every static_calls of the process also keeps builds' calls in @c, a
 * cache directory of the machine's (binary/cfi_cache.h, CACHE_CALLS,
 * by build-id), which it borrows: read where neither the process nor
 * the store has a build's, written where one is decoded from its file,
 * so that a fresh database's first report does not decode a compiler
 * again.  NULL: none (the default). */
void static_calls__use_cache(struct cfi_cache *c);

/* Reads no binary whose code would take the bytes decoded past
 * @bytes: such binaries are counted as over budget, not read.  Builds
 * the store keeps, or this process read before, cost nothing.
 * Default: no limit. */
void static_calls__limit(struct static_calls *sc, uint64_t bytes);

/* The store's function @id is (@module_id, @address).  0 or -ENOMEM. */
int static_calls__function(struct static_calls *sc, int64_t id,
			   int64_t module_id, uint64_t address);

/*
 * Gives @inf the calls of modules @mods[0, n) (the store's, no
 * two alike) for program @program_id; @mods[0] is the program's own
 * executable, the first looked in for an imported symbol.  Each module
 * is read once per object.  0 or -ENOMEM.
 */
int static_calls__program(struct static_calls *sc, struct infer *inf,
			  int64_t program_id,
			  const struct store_module *const *mods, size_t n);

/* The store's id for frame @id: itself unless provisional, else a new
 * row of the functions table.  0 or -1 (store__error()). */
int static_calls__store_id(struct static_calls *sc, struct store *st,
			   int64_t id, int64_t *out);

const struct static_calls_stats *static_calls__stats(
	const struct static_calls *sc);

/* What a report says of the binaries whose calls could not be read
 * (@c->unreadable > 0), into @buf. */
const char *static_calls__unreadable(const struct static_calls_stats *c,
				     char *buf, size_t len);

#endif
