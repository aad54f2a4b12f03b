/*
 * module.h - one mapped ELF image (executable, shared library, vDSO) and
 * what sampling needs of it: file offset -> link-time address, the
 * function containing an address, the CFA rule at an address, build-id.
 *
 * Modules are created once per (path, device, inode) by the cache below
 * and live until the cache is freed; pointers to a module and to the
 * names it returns stay valid that long (the cache may release and
 * rebuild a module's CFI in between, never its names).  Function identity is (module,
 * start address): the symbol from .symtab, .dynsym or a separate debug
 * file when one covers the address, else the start of the .eh_frame FDE,
 * so a stripped function still gets a stable identity ("libfoo.so+0x1a30").
 */
#ifndef ICPPD_BINARY_MODULE_H
#define ICPPD_BINARY_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "binary/cfi.h"

struct module;

struct module_func {
	uint64_t start;		/* link-time address of the function */
	const char *name;	/* symbol, or NULL; owned by the module */
};

/*
 * Opens and analyses the ELF file at @path.  Never returns NULL except on
 * allocation failure: a file that cannot be read or is not ELF yields a
 * module whose module__error() is non-zero, so samples in it are counted
 * under a reason instead of being retried for every sample.
 */
struct module *module__open(const char *path);
/*
 * A file a database recorded, reopened by report and the exporter
 * (often as root, on a path a user may since have swapped): no symlink
 * anywhere in @path, a regular file, opened without blocking, and with
 * @build_id (not empty) the build-id recorded, else -ESTALE.  The
 * module, its error set on failure (NULL only when memory is short);
 * or the file descriptor (the caller's), or -errno.
 */
struct module *module__open_recorded(const char *path, const char *build_id);
int module__open_recorded_fd(const char *path, const char *build_id);
/* libelf on @fd (ELF_C_READ), or NULL when the file is not a
 * little-endian ELF64 file or declares more than 65,535 sections or
 * program headers: libelf allocates state for each declared section at
 * elf_begin(), and a file's extended numbering declares billions.
 * Every file icppd opens goes through here. */
Elf *module__elf_begin(int fd);
/* The span of a file's code, as module__code_span() gives it. */
struct module_span {
	bool found;
	uint64_t start, limit, offset;
};
/* The build-id of the ELF file at @path (hex; "" when it has none) into
 * @out, and with @span (may be NULL) the span of its code, without
 * analysing the rest of the file (symbols, CFI): what a reader of
 * another part checks first.  0, or what module__error() would say. */
int module__file_build_id(const char *path, char *out, size_t len,
			  struct module_span *span);
/* The vDSO of the running kernel (the same image in every process). */
struct module *module__open_vdso(void);
/* An ELF image in memory; @img is copied. */
struct module *module__open_memory(const char *name, const void *img,
				   size_t size);
void module__delete(struct module *m);

const char *module__path(const struct module *m);
/* Last path component, for display ("libc.so.6"). */
const char *module__name(const struct module *m);
/* The name the function at @addr is shown by: its symbol @sym, or
 * "MODULE+0xADDR" when it has none (stripped code). */
void module__func_label(const struct module *m, uint64_t addr,
			const char *sym, char *buf, size_t len);
/* Lower-case hex GNU build-id, or "" when the image has none. */
const char *module__build_id(const struct module *m);
/* 0, or -errno / -ENOEXEC (not ELF) / -EPROTO (not x86-64) */
int module__error(const struct module *m);
size_t module__nr_symbols(const struct module *m);
bool module__has_cfi(const struct module *m);
/* Go code: its goroutines run on stacks the Go runtime allocates in heap
 * arenas and moves as they grow, so no thread stack base holds there. */
bool module__is_go(const struct module *m);
/*
 * Whether a walk up a stack copy ends at the function starting at
 * @func: Go's runtime functions that start a stack (runtime.goexit,
 * mstart, rt0_go) or leave the one they were called on for another
 * (systemstack, mcall, morestack, asmcgocall, and nanotime1 and
 * walltime, which call the vDSO on the thread's system stack).  The
 * caller of a switching function lives on the other stack, which the
 * copy does not hold: what lies above it in the copy is stale, and Go's
 * own tracebacks stop there too.  False for every function of other
 * code.
 */
bool module__ends_walk(const struct module *m, uint64_t func);
/* Whether @m is loaded at its link-time addresses (ET_EXEC): only then
 * can code hold a function's address as an absolute immediate. */
bool module__fixed(const struct module *m);

/* File offset (as in a mapping's pgoff) -> link-time address. */
int module__vaddr(const struct module *m, uint64_t file_off, uint64_t *vaddr);
/* The span of the executable PT_LOAD segments, as link-time addresses
 * [*@start, *@limit), and the file offset of *@start: what a profile's
 * mapping of the module's code is.  0, or -ENOENT when there is none. */
int module__code_span(const struct module *m, uint64_t *start,
		      uint64_t *limit, uint64_t *offset);
/* The function containing @vaddr: 0, or -ENOENT when none is known. */
int module__function(const struct module *m, uint64_t vaddr,
		     struct module_func *out);
/* Where the function starting at @start ends (its symbol's size, else
 * its FDE's range) into *@end: 0, or -ENOENT when neither says. */
int module__function_end(const struct module *m, uint64_t start,
			 uint64_t *end);
/* See cfi__cfa(); -ENOENT also when the module has no CFI at all. */
int module__cfa(struct module *m, uint64_t vaddr, const struct cfi_regs *regs,
		uint64_t *cfa);

/* See cfi__step(); -ENOENT also when the module has no CFI at all. */
int module__step(struct module *m, uint64_t vaddr, struct cfi_regs *regs,
		 const struct cfi_mem *mem, struct cfi_step *out);

/*
 * Calls @fn with the bytes of each executable section (SHT_PROGBITS with
 * SHF_EXECINSTR) and its link-time address, read again from the file
 * the module was analysed from (no descriptor is kept: see module.c)
 * and let go when this returns.  0, the first non-zero value @fn
 * returns, or -errno: -ESTALE when the file is no longer the module's
 * (another build-id, or for a cached module another inode).
 */
typedef int (*module_code_fn)(void *arg, uint64_t vaddr, const uint8_t *code,
			      size_t size);
int module__code(struct module *m, module_code_fn fn, void *arg);
/* module__code() for each allocated section that holds data in the file
 * (SHT_PROGBITS without SHF_EXECINSTR, the init and fini arrays): where
 * function pointers are, vtables and callback tables. */
int module__data(struct module *m, module_code_fn fn, void *arg);

/*
 * The dynamic linking of @m, read again from the file as module__code()
 * does: each function it exports (@addr: its link-time address) and each
 * GOT slot it imports a symbol through (@addr: the slot's address; the
 * PLT stubs jump through these), with the symbol's name (valid during
 * the call).  IFUNC symbols are not exports: their value is a resolver.
 * And each pointer to code the dynamic linker writes (MODULE_POINTER:
 * @addr the link-time address written, @name NULL): a relative
 * relocation's addend, or an absolute one to a function @m defines.
 */
enum module_dyn { MODULE_EXPORT, MODULE_IMPORT, MODULE_POINTER };
typedef int (*module_dynamic_fn)(void *arg, enum module_dyn kind,
				 uint64_t addr, const char *name);
int module__dynamic(struct module *m, module_dynamic_fn fn, void *arg);

/*
 * Cache of modules by path and inode.
 *
 * A mapping's file is opened as the kernel mapped it, through
 * /proc/PID/map_files, else inside /proc/PID/root (the process's mount
 * namespace), else at @path once the process is gone; never following a
 * symlink, never opening anything but a regular file, and used only when
 * its inode (and device) are the mapping's.  A file that is not yields a
 * module whose error is -ESTALE: its samples are counted, never guessed.
 *
 * No file descriptor is kept open.  The CFI of modules beyond the
 * budget is released least recently used first and rebuilt from the
 * file on demand (-ESTALE then if it has changed); names, symbols and
 * build-ids stay while the module is held.
 *
 * Whole modules go only when no one holds them: module_cache__get()
 * returns a module held once for the caller, who releases it when done
 * (the collector holds one per mapping and per process executable).
 * module_cache__evict() then frees the least recently used of those
 * nobody holds, beyond MODULE_CACHE_IDLE of them or the byte budget, so
 * a user who maps file after file cannot grow the daemon without bound.
 */
struct module_origin {
	int pid;		/* the process that mapped it; 0: none */
	uint64_t start, end;	/* its mapping, for /proc/PID/map_files */
	uint64_t dev, ino;	/* as the kernel reported them (makedev) */
	uint32_t uid;		/* the process's owner (MODULE_UID_UNKNOWN),
				 * charged for a new module; 0 (root):
				 * never refused short of the bound */
	bool exe;		/* the process's executable */
};
#define MODULE_UID_UNKNOWN UINT32_MAX

/* Default budget for built CFI, and for modules nobody holds: a few
 * large C++ programs' worth. */
#define MODULE_CACHE_BYTES ((size_t)256 << 20)
/* Modules kept while nobody holds them: the libraries of short-lived
 * processes are parsed once, not once per process. */
#define MODULE_CACHE_IDLE 256
/* Modules a cache opens at most, held or not: past it, a file mapped
 * anew gets one shared module that reads nothing, named "[too many
 * modules]", with error -EMFILE (module_cache__refused() counts them).
 * A desktop's processes map about 2,000 distinct libraries together; a
 * user mapping file after file (each a module held while mapped) would
 * otherwise grow a root daemon by a module each.
 *
 * So that users who fill it do not blind the daemon to everyone else
 * (eight users mapping 2,500 distinct builds each left a watched
 * program's samples all "[too many modules]"), a user other than root
 * opens at most a quarter of it (MODULE_CACHE_MAX / 4, counted by
 * module_origin.uid, the user whose process mapped a module first):
 * one user cannot fill it, and a process's executable may go a quarter
 * past the bound, so that a program started once users filled it still
 * has its own code named. */
#define MODULE_CACHE_MAX 16384
/* Symbols and their names of every module a cache holds together: a
 * module opened past it keeps none (module_cache__symbols_dropped()).
 * Debian's largest symbol tables take tens of MB. */
#define MODULE_CACHE_SYMBOL_BYTES ((size_t)512 << 20)

struct module_cache;
struct module_cache *module_cache__new(void);
/* Frees the cache and every module in it. */
void module_cache__delete(struct module_cache *c);
/* The CFI tables of the modules it opens are looked up in and stored to
 * @cc (borrowed, until the cache is freed or this is called again;
 * NULL: none), see cfi.h. */
struct cfi_cache;
void module_cache__set_cfi_cache(struct module_cache *c, struct cfi_cache *cc);
/* The modules it opens map their files (ELF_C_READ_MMAP: sections read
 * in place, not copied) where no one but root and the effective user
 * can shrink them: files of theirs that no one else may write, on a
 * local file system (ext4, XFS, Btrfs, F2FS, tmpfs, overlayfs,
 * squashfs; not FUSE, whose files claim any owner).  A mapped
 * file that shrinks raises SIGBUS, so this is for a process that
 * profiles the caller's own programs, never the daemon, which reads
 * others' files. */
void module_cache__set_map_files(struct module_cache *c, bool map);
/* How many times they opened a file mapped. */
uint64_t module_cache__files_mapped(const struct module_cache *c);
/* The module for a mapping of @path (dev/ino as the kernel reported them),
 * held for the caller; "[vdso]" gives the vDSO.  NULL only on allocation
 * failure. */
struct module *module_cache__get(struct module_cache *c, const char *path,
				 const struct module_origin *o);
/* One more holder of @m, or one fewer (NULL: nothing). */
void module__hold(struct module *m);
void module__release(struct module *m);
/*
 * Frees modules nobody holds, least recently used first, while more
 * than MODULE_CACHE_IDLE are idle or the cache exceeds its byte budget.
 * @forget (may be NULL) is called once with them before they are freed,
 * for the caller to drop whatever it keyed by their address.  Returns
 * how many were freed.
 */
size_t module_cache__evict(struct module_cache *c,
			   void (*forget)(void *arg, const struct module *const *m,
					  size_t n),
			   void *arg);
/*
 * JIT code: the symbols a JIT compiler wrote for process @pid to
 * /tmp/perf-PID.map ("START SIZE NAME" lines, hex, as perf reads them),
 * as a module of the cache, held for the caller: named by that path,
 * no build-id, no CFI, its symbols at the absolute addresses of the
 * process (module__function() takes them as they are).
 *
 * The file is anyone's to craft in /tmp, so it is read only when it is
 * a regular file with one link, owned by @uid (the process's owner),
 * opened without following a symlink or blocking, and of at most
 * PERFMAP_MAX_BYTES, and while the cache with it stays in its byte
 * budget (a user with many processes cannot grow a root daemon without
 * bound); lines longer than PERFMAP_MAX_LINE, malformed ones and empty
 * ranges are skipped.  A new module only when the file is
 * new or changed since @prev (NULL: none) was read from it; NULL when
 * it is not (keep @prev), is missing or refused, or memory is short.
 * @prev stays in the cache while held or counted.
 */
#define PERFMAP_MAX_BYTES ((size_t)64 << 20)
#define PERFMAP_MAX_LINE 4096
struct module *module_cache__perfmap(struct module_cache *c, int pid,
				     uint32_t uid, const struct module *prev);
/*
 * The same in three steps, so that a large map is parsed off the sample
 * loop (a 4-million-line map takes a second): the file checked as above
 * and left open in @f (0, or -ENOENT where module_cache__perfmap() gives
 * NULL); read and parsed by perfmap__read(), which touches no cache and
 * may run on any thread (it closes the file; NULL when it cannot be
 * read); and the module put in the cache, held for the caller, by
 * module_cache__adopt() (NULL, the module freed, when memory is short
 * or the cache holds MODULE_CACHE_MAX modules).
 */
struct perfmap_file {
	int fd;
	size_t size;
	struct module_origin origin;	/* what identifies this version */
};
int module_cache__perfmap_open(struct module_cache *c, int pid, uint32_t uid,
			       const struct module *prev,
			       struct perfmap_file *f);
struct module *perfmap__read(struct perfmap_file *f);
struct module *module_cache__adopt(struct module_cache *c, struct module *m);
/* Whether module_cache__evict() would free some module now. */
bool module_cache__over(const struct module_cache *c);
/* Modules opened past MODULE_CACHE_SYMBOL_BYTES, kept without symbols. */
uint64_t module_cache__symbols_dropped(const struct module_cache *c);
/* Modules in the cache, held or not. */
size_t module_cache__count(const struct module_cache *c);
/* Files given the shared module past MODULE_CACHE_MAX or a user's
 * quarter of it (or the bound module_cache__set_max() set, for
 * tests). */
uint64_t module_cache__refused(const struct module_cache *c);
void module_cache__set_max(struct module_cache *c, size_t max_modules);
void module_cache__set_budget(struct module_cache *c, size_t max_bytes);
/* The symbol budget (default MODULE_CACHE_SYMBOL_BYTES). */
void module_cache__set_symbol_budget(struct module_cache *c, size_t bytes);
/* Bytes of CFI built now, and in how many modules (@built, or NULL). */
size_t module_cache__bytes(const struct module_cache *c, size_t *built);

#endif
