/*
 * cfi.h - canonical frame address (CFA) rules from DWARF call-frame info.
 *
 * A cfi table answers one question for a PC of one ELF image: what is the
 * CFA, given the sampled SP, BP and IP?  It reads .eh_frame (and
 * .debug_frame when .eh_frame is absent) through libdwarf.
 *
 * Tuned for sampling: opening a table only lists and sorts the FDE
 * ranges (or reads the list from a cache); the rows of one FDE are
 * expanded the first time a sample falls in it and kept, so the cost is
 * paid once per sampled function, and a lookup afterwards is two binary
 * searches.  Rows keep the columns an
 * unwinder needs (CFA, RBP, RSP, return address), so the same table
 * serves CID formation and stack unwinding.
 */
#ifndef ICPPD_BINARY_CFI_H
#define ICPPD_BINARY_CFI_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

struct cfi;
struct cfi_cache;

/* Registers a CFA rule may use, in DWARF x86-64 numbering. */
struct cfi_regs {
	uint64_t sp;	/* DWARF 7 */
	uint64_t bp;	/* DWARF 6 */
	uint64_t ip;	/* DWARF 16 */
};

/* .eh_frame sections smaller than this are listed by libdwarf every
 * time (a few hundred FDEs: well under a millisecond), not cached. */
#define CFI_CACHE_MIN_BYTES ((size_t)64 << 10)

/*
 * The file an image was read from, as fstat() gave it: what names its
 * .eh_frame in a cfi_cache.  Any change to a file's bytes sets its ctime
 * to the current time, which only root can set back (utimensat() sets
 * the other two), and a new file is a new inode or ctime: one identity
 * is one content, without reading the content to hash it.
 */
struct cfi_file {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec, ctime_sec, ctime_nsec;
};

/* The identity of the file open at @fd: 0, or -errno.  The same from
 * what fstat() gave, for a caller that has it. */
int cfi__file(int fd, struct cfi_file *f);
void cfi__file_of(const struct stat *st, struct cfi_file *f);

/*
 * Opens the CFI of @elf.  @elf stays owned by the caller and must outlive
 * the table.  Returns NULL when the image has no usable frame section
 * (not an error: such a module simply yields no CFA).
 *
 * With @cache (borrowed; NULL: none) and the @file @elf was read from,
 * an .eh_frame of at least CFI_CACHE_MIN_BYTES is looked up there first
 * (by the file and the section's place in it), and what libdwarf lists
 * of one not found is stored there (cfi_cache.h).  A table read from
 * the cache answers every call below as the listed one would.
 */
struct cfi *cfi__open(Elf *elf, struct cfi_cache *cache,
		      const struct cfi_file *file);
void cfi__close(struct cfi *cfi);

/*
 * Whether libdwarf files each of its allocations in a search tree, so
 * that dwarf_finish() frees what a crafted section made it leak (its
 * default: on).  Listing libLLVM's 95k FDEs spends a quarter of its
 * time there.  Off suits a command that reads the frame sections of
 * one program's binaries and exits (record: 30 ms of a first record of
 * clang++); the daemon, which reads files any user can craft for as
 * long as it runs, keeps it on.  Process-wide; before cfi__open().
 */
void cfi__set_leak_tracking(bool on);

/* Whether the table was read from a cfi_cache. */
bool cfi__cached(const struct cfi *cfi);

/* Memory the table holds now (rows are built as they are used). */
size_t cfi__bytes(const struct cfi *cfi);

/* Number of FDEs (function ranges) in the table. */
size_t cfi__nr_fdes(const struct cfi *cfi);

/*
 * The FDE covering @vaddr: its range [*lo, *hi).  0, or -ENOENT when no
 * FDE covers @vaddr.
 */
int cfi__fde_range(struct cfi *cfi, uint64_t vaddr,
		   uint64_t *lo, uint64_t *hi);

/*
 * The CFA at @vaddr (a link-time address of the image) for the register
 * values @regs.  Returns 0 and sets *cfa; -ENOENT when no FDE covers
 * @vaddr; -ENOTSUP when the rule needs memory or an unsupported register
 * or operation; -EINVAL on malformed CFI.
 */
int cfi__cfa(struct cfi *cfi, uint64_t vaddr, const struct cfi_regs *regs,
	     uint64_t *cfa);

/*
 * What a walk read of the stack copy: each 8-byte read, and a slot
 * below the sampled SP taken as the register's current value (addr
 * CFI_READ_DEAD).  collector/unwind.c reuses the outer frames of a
 * thread's last walk where a later copy repeats every read they made.
 */
#define CFI_READ_DEAD UINT64_MAX
struct cfi_read {
	uint64_t addr, value;
};
struct cfi_log {
	struct cfi_read *v;	/* cap entries, the caller's */
	size_t n, cap;
	bool full;		/* a read found no room: the log is partial */
};

/* A copy of part of the target's memory (the sampled user stack). */
struct cfi_mem {
	uint64_t start;		/* address of data[0] */
	const uint8_t *data;
	size_t size;
	struct cfi_log *log;	/* NULL, or where every read is appended
				 * (borrowed) */
};

/* Reads 8 bytes at @addr from @mem: 0, or -EFAULT outside the copy. */
int cfi__mem_read(const struct cfi_mem *mem, uint64_t addr, uint64_t *value);

struct cfi_step {
	uint64_t cfa;	/* of the frame stepped out of */
	bool signal;	/* that frame is a signal trampoline: the caller's
			 * pc is where it was interrupted, not a return
			 * address */
};

/*
 * One unwinding step: @regs hold the frame at @vaddr (the link-time
 * address to look up: the pc itself for the innermost frame and after a
 * signal frame, the return address minus one otherwise); on success they
 * hold the caller's SP, BP and IP (a return address).  Returns 0;
 * CFI_OUTERMOST when the CFI marks the frame outermost (return address
 * undefined, as glibc's _start and clone3 do); -ENOENT when no FDE
 * covers @vaddr;
 * -EFAULT when a saved value lies outside @mem; -ENOTSUP or -EINVAL for
 * rules it cannot follow.
 */
int cfi__step(struct cfi *cfi, uint64_t vaddr, struct cfi_regs *regs,
	      const struct cfi_mem *mem, struct cfi_step *out);
#define CFI_OUTERMOST 1

/*
 * Evaluates a DWARF expression that computes a value from registers only
 * (the CFA expressions of PLT entries).  Exposed for unit tests.
 * 0, -ENOTSUP (memory access or unknown op), -EINVAL (malformed).
 */
int cfi__eval_expr(const uint8_t *expr, size_t len,
		   const struct cfi_regs *regs, uint64_t *value);

#endif
