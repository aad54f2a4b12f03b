/*
 * module_int.h - private to binary/: what module.c (open, symbols,
 * lookups), module_file.c (a mapping's file opened as the kernel mapped
 * it; code and dynamic sections re-read) and module_cache.c (the cache,
 * perf maps) share of a module.  Nothing outside binary/ includes it:
 * binary/module.h is the contract.
 */
#ifndef ICPPD_BINARY_MODULE_INT_H
#define ICPPD_BINARY_MODULE_INT_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "binary/cfi_cache.h"
#include "binary/module.h"
#include "common/pageindex.h"

/* Work and memory per module are bounded: no x86-64 binary Debian ships
 * comes near these (libc: 3,000 symbols; chromium: 400,000). */
#define MODULE_MAX_SYMBOLS (4u << 20)
#define MODULE_MAX_NAME_BYTES (128u << 20)
/* Symbol and string tables libelf copies for one module, together
 * (node's are 18 MB, libclickhouse's .dynstr alone 13 MB): a crafted
 * .symtab claiming 800 MB of a sparse file's hole cost 788 MB and 2.5 s
 * per open.  A table past what is left is not read. */
#define MODULE_MAX_TABLE_BYTES ((size_t)128 << 20)
/* Sections and program headers a file may declare: libelf allocates
 * state for every section at elf_begin(), and an 8 KB sparse file whose
 * section 0 declared 20 million (ELF's extended numbering) cost 10 GB
 * and 43 s there.  The largest linked binaries have a few hundred. */
#define MODULE_MAX_SECTIONS 65535
/* Loadable segments kept: linkers emit two to six. */
#define MODULE_MAX_SEGMENTS 64
/* Names copied beyond twice their tables' bytes (sort_symbols()). */
#define NAMES_SLACK ((size_t)64 << 10)
/* libelf's own state for an open image, beside the CFI it holds. */
#define MODULE_ELF_BYTES 4096
/* A build-id note is 36 bytes; libelf copies a section whole when it is
 * read, so a note section is read only up to this size, and only this
 * many of them (a crafted file's 32 notes over one 32 MiB hole cost the
 * daemon a gigabyte). */
#define NOTE_MAX_BYTES 4096
#define NOTE_MAX_SECTIONS 16

/* Symbol tables this large get a page index (common/pageindex.h). */
#define SYM_INDEX_MIN 4096

struct segment {
	uint64_t offset, filesz, vaddr, memsz;
	bool exec;
};

/* Go's runtime functions past which no walk of a stack copy goes (see
 * module__ends_walk()), as its symbol table names them; assembly ones
 * carry an ".abi0" suffix there. */
static const char *const go_end_names[] = {
	"runtime.goexit", "runtime.mstart", "runtime.rt0_go",
	"runtime.systemstack", "runtime.mcall", "runtime.morestack",
	"runtime.asmcgocall", "runtime.nanotime1", "runtime.walltime",
};
#define GO_ENDS (sizeof(go_end_names) / sizeof(go_end_names[0]))

/* A symbol is also the cache file's entry (symbols_from_image() uses a
 * mapped file's where they lie, written never: no page is copied), so
 * its name is an offset into the module's names once they are copied
 * there (sort_symbols()); before, the name read in the table. */
struct symbol {
	uint64_t addr, size;
	union {
		const char *at;	/* read: in the ELF's (or perf map's) text */
		uint64_t off;	/* sorted: into names */
	} name;
	uint8_t bind, pad[7];
};

/* Recent answers of module__function() by address, in a module with an
 * index of its symbols: a deep stack's frames return to the same call
 * sites sample after sample, and each search costs cache misses in the
 * index, the symbols and the FDEs.  Empty slot: vaddr + 1 == 0. */
#define FUNC_MEMO_BITS 12
struct func_memo {
	uint64_t vaddr1;	/* vaddr + 1 */
	uint64_t start;
	const char *name;
};

struct module {
	char *path;
	const char *name;
	char build_id[41];
	int error;
	Elf *elf, *debug_elf;	/* NULL once released (see above) */
	void *image;		/* in-memory images (vDSO) */
	struct segment *segs;
	size_t nsegs;
	struct symbol *syms;
	size_t nsyms;
	/* of the symbols, where there are more than SYM_INDEX_MIN */
	struct page_index sym_pages;
	struct func_memo *memo;	/* 1 << FUNC_MEMO_BITS slots, or NULL */
	char *names;		/* the symbols' names, NUL-separated */
	struct cache_table sym_image;	/* a cache file holding syms and
					 * names; none: each is its own
					 * allocation */
	size_t names_bytes;
	size_t string_bytes;	/* of the tables the names come from */
	size_t table_bytes;	/* symbol and string tables read */
	struct cfi *cfi;
	bool go;		/* Go code (see module__is_go) */
	bool fixed;		/* see module__fixed() */
	uint64_t go_ends[2 * GO_ENDS];	/* see module__ends_walk() */
	size_t ngo_ends;
	bool cfi_released;	/* no cfi held: built on first use (a cached
				 * module's, and one the cache released) */
	struct module_origin origin;	/* cache key and where to reopen */
	struct module_cache *cache;	/* NULL: not in a cache */
	uint64_t last_use;	/* the cache's clock at the last lookup */
	uint32_t refs;		/* holders (module_cache__get, module__hold) */
};


/* Shared by the three files; each is defined, and said, where its work
 * is done. */

/* module.c: allocation, reading and analysing a file, the symbols */
struct module *module__alloc(const char *path);
int module__open_regular(const char *path);
Elf *module__elf_begin_checked(int fd, Elf_Cmd cmd);
int module__is_elf64(Elf *elf);
void module__read_build_id(struct module *m);
int module__analyse_fd(struct module *m, int fd, bool cfi);
const struct stat *module__stat_of(int fd, struct stat *st);
const struct cfi_file *module__file_of(const struct stat *st,
				       struct cfi_file *f);
int module__sort_symbols(struct module *m);
void module__drop_symbols(struct module *m);
void module__release_cfi(struct module *m);

/* module_file.c: opening a mapping's file as the kernel mapped it */
int module__open_path(int dirfd, const char *path, bool in_root);
int module__open_mapped(const char *path, const struct module_origin *o);

/* module_cache.c: what the cache a module is in decides */
struct cfi_cache *module__cfi_cache_of(const struct module *m);
struct cfi *module__cfi_of(struct module *m);
Elf *module__elf_open(const struct module *m, int fd, const struct stat *st);

#endif
