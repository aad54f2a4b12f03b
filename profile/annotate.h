/*
 * annotate.h - a function's samples by instruction and source line, as
 * perf annotate shows them: the run's sampled instructions (pc_samples)
 * over the function's code, read from its binary and decoded with
 * Capstone, each instruction with its line where DWARF has one.
 *
 * The binary is reopened as a report reopens it (module__open_recorded:
 * no symlink, the build-id recorded), its function read within
 * ANNOTATE_MAX_BYTES: a symbol's size is the file's to claim.
 */
#ifndef ICPPD_PROFILE_ANNOTATE_H
#define ICPPD_PROFILE_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schema/report_store.h"
#include "schema/store.h"

struct lines;

#define ANNOTATE_MAX_BYTES ((size_t)1 << 20)
/* The text of one decoded instruction, "mov    %rsp,%rbp". */
#define ANNOTATE_INSN_TEXT 200

struct annotate_insn {
	uint64_t addr;		/* link-time address */
	uint32_t size;
	char text[ANNOTATE_INSN_TEXT];
	double samples;
	const char *file;	/* source file (owned by the annotation's
				 * lines), or NULL */
	unsigned line;
};

/* One function annotated. */
struct annotation {
	char *name;		/* as reports show it (demangled) */
	char *module;		/* the binary's path */
	uint64_t start, end;	/* [start, end): the code annotated */
	bool cut;		/* the function is longer than that */
	bool lines;		/* DWARF gave lines */
	double samples;		/* the function's samples in the runs */
	double outside;		/* of them, at no instruction start (past
				 * the code annotated, or inside one) */
	struct annotate_insn *insns;
	size_t ninsns;
	char why[160];		/* no instructions: why ("" when some) */
	struct lines *dwarf;	/* owns the file names of @insns */
};

struct annotate_request {
	struct store_selection sel;	/* run_id 0: the latest run */
	const char *symbol;	/* a name as reports show it (with or
				 * without its parameters), mangled, or
				 * an address label ("prog+0x1130") */
	bool no_lines;		/* no DWARF lookups */
};

/*
 * The functions named @r->symbol with samples in @r's selection, the
 * heaviest first, into *@out (*@n of them; the caller frees them with
 * annotate__free()), the run chosen into *@run_id.  0; 1 (logged, a
 * line saying what the run does have) when no such function has
 * samples; -1 after logging why.
 */
int annotate__load(struct store *st, const struct annotate_request *r,
		   int64_t *run_id, struct annotation **out, size_t *n);
void annotate__free(struct annotation *a, size_t n);

#endif
