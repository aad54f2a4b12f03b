/*
 * cfi_cache.h - a directory of CFI tables already read, so that a
 * module's frame section is listed by libdwarf once per build, not once
 * per run.
 *
 * Listing .eh_frame through libdwarf is the largest part of what a
 * record of a big C++ program costs the recorder (libLLVM-14: 95k FDEs,
 * 60 ms and 20 MB), and what it yields depends on the section's bytes
 * alone.  cfi.c keeps what it needs of that listing (each FDE's range
 * and where its instructions lie in the section, each CIE's factors) in
 * a file here, named by a keyed hash of the file the section was read
 * from (struct cfi_file: any change to a file moves its change time) and
 * of the section's place in it, and reads it in place of the listing the
 * next time the same file is opened.
 *
 * module.c keeps a module's symbols here too (CACHE_SYMBOLS): reading
 * libLLVM-14's and libclang-cpp's symbol tables, sorting them by address
 * and copying out the names took 12 to 18 ms of every clang++ record.
 * And profile/static_calls.c a build's direct calls (CACHE_CALLS, named
 * by the build-id): decoding cc1's and cc1plus's took a third of a
 * fresh database's first report of a 10 kHz record.  And the store the
 * state a database was left whole in (CACHE_CHECKED, schema/checked.c),
 * so that a record does not read a grown database whole for damage.
 *
 * Trust: the directory must be the caller's own (owned by the effective
 * user, writable by no one else); the hash is keyed with 16 random bytes
 * kept in it (file "key", mode 0600), so no one who cannot read the key
 * can name a file another binary's table would be looked up by, and two
 * files whose build-ids agree but whose sections differ never share
 * one.  Files are still read as untrusted: regular files owned by the
 * effective user, of at most CFI_CACHE_MAX_FILE bytes, opened without
 * following links or blocking, and every offset in them is checked by
 * cfi.c against the section before use.  The directory is kept under
 * CFI_CACHE_MAX_BYTES by removing the files used least recently.
 */
#ifndef ICPPD_BINARY_CFI_CACHE_H
#define ICPPD_BINARY_CFI_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A table larger than this is not cached (CFI_MAX_ENTRIES FDEs of 32
 * bytes each fit). */
#define CFI_CACHE_MAX_FILE ((size_t)24 << 20)
/* All the cache's tables together: about a hundred large libraries. */
#define CFI_CACHE_MAX_BYTES ((uint64_t)256 << 20)

struct cfi_cache;

/* What a file holds: each kind has its own file names and counts. */
enum cache_kind {
	CACHE_CFI,		/* cfi.c's tables of FDEs */
	CACHE_SYMBOLS,		/* module.c's sorted symbols and names */
	CACHE_CALLS,		/* profile/build_calls.h's blobs, by
				 * build-id */
	CACHE_CHECKED,		/* schema/checked.c's states of databases
				 * left whole, by device and inode */
	CACHE_NR_KINDS
};

struct cfi_cache_stats {
	uint64_t hits;		/* tables read from the cache */
	uint64_t stores;	/* tables written to it */
	uint64_t rejected;	/* files found but not valid for their
				 * section (cfi.c's checks): replaced */
};

/*
 * Opens the cache in directory @dir, creating it (and its missing
 * parents, mode 0700) and its key when absent.  0 and *@out, or -errno
 * (-EPERM: the directory or key is not the effective user's alone); the
 * caller goes on without a cache.
 */
int cfi_cache__open(const char *dir, struct cfi_cache **out);
void cfi_cache__close(struct cfi_cache *c);

/* The cache's name for the @len bytes at @data (cfi.c gives a file's
 * identity and its section's place). */
uint64_t cfi_cache__key(const struct cfi_cache *c, const void *data,
			size_t len);

/* A file's bytes as cfi_cache__load() gives them: mapped (copy on
 * write) or read into memory; either way writable, and the caller's
 * until cfi_cache__release(). */
struct cache_table {
	void *buf;		/* NULL: none */
	size_t len;
	bool mapped;
};

/*
 * Files are mapped in place of read where cfi_cache__set_map() allowed
 * it and the file may be (sys__may_map(): ours, on a local file system,
 * so that nobody else can shrink it under the mapping); a table's pages
 * are then faulted in as used, not copied whole (libLLVM-14's FDEs and
 * symbols: 6.5 MB).
 */
void cfi_cache__set_map(struct cfi_cache *c, bool map);

/*
 * The file of @key, whole, into *@t: 0, or -errno (-ENOENT: none;
 * -EPERM: not a regular file of ours; -EFBIG: over CFI_CACHE_MAX_FILE).
 */
int cfi_cache__load(struct cfi_cache *c, enum cache_kind kind, uint64_t key,
		    struct cache_table *t);
/* Unmaps or frees @t's bytes (none: nothing); @t is empty after. */
void cfi_cache__release(struct cache_table *t);

/* Writes @len bytes as the file of @key (atomically: readers see the
 * old file or the whole new one), then trims the directory to
 * CFI_CACHE_MAX_BYTES.  0 or -errno. */
int cfi_cache__store(struct cfi_cache *c, enum cache_kind kind, uint64_t key,
		     const void *buf, size_t len);

/* Counts a loaded file as used (@valid) or as rejected by cfi.c's checks
 * (it is replaced by the next store). */
void cfi_cache__checked(struct cfi_cache *c, enum cache_kind kind, bool valid);

void cfi_cache__stats(const struct cfi_cache *c, enum cache_kind kind,
		      struct cfi_cache_stats *s);

#endif
