/*
 * lines.c - DWARF line tables as sorted arrays of (address, file, line)
 * rows per module; a lookup is a binary search for the last row at or
 * below the address, within its sequence.
 *
 * A unit's line table is read only when a lookup first falls in its
 * address ranges (.debug_aranges, or, where the file has none as clang
 * leaves it, the ranges its DIE gives): a profile asks for a few dozen
 * addresses of libc, whose debug file's line tables took most of a
 * pprof export's time to read whole.  A unit with no range at all is
 * read at once.
 *
 * libdwarf runs in a worker process, forked on first use, that answers
 * one lookup per message over a socket pair.  A recorded module is any
 * local user's to craft, and libdwarf 20210528 (Debian 12) has memory
 * errors on crafted DWARF that no error handler catches:
 * tests/fuzz/fuzz_lines found a context freed twice when a
 * .debug_rnglists header is malformed (loaded with .debug_info, before
 * any line) and a wild string read in dwarf_linesrc().  A worker that
 * dies, or takes longer than LINES_TIMEOUT_MS over one lookup, costs
 * the report that module's lines: the module is not read again and the
 * next lookup forks a new worker.  One socket round trip a lookup (a few
 * microseconds) is small beside reading a unit's line table.
 */
#include "binary/lines.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/debuginfo.h"
#include "binary/module.h"
#include "common/grow.h"
#include "common/hindex.h"
#include "common/search.h"
#include "common/sys.h"

/* The longest one lookup may take (reading a unit's line table, or a
 * whole file's without aranges), and the workers a reader may lose
 * before it gives no more lines. */
#define LINES_TIMEOUT_MS 30000
#define LINES_MAX_DEATHS 4
#define LINES_PATH_MAX 4096
#define LINES_ID_MAX 128
/* An answer's most bytes (an inline chain of LINES_MAX_INLINED frames,
 * each name and file cut to INL_NAME_MAX). */
#define LINES_REPLY_MAX 16384
#define INL_NAME_MAX LINES_NAME_MAX
/* DIEs nest at most this deep in a walk; inlined frames and the ranges
 * kept per module are bounded likewise (a file is anyone's to craft). */
#define INL_MAX_NEST 64
#define INL_MAX_RANGES (1u << 20)
#define INL_NONE UINT32_MAX
#define LINES_MAX_INLINED 16

struct line_row {
	uint64_t addr;
	uint32_t file;		/* index into files */
	uint32_t line;		/* 0: end of a sequence */
};

/* A function inlined somewhere: its name, and where the code it was
 * inlined into called it (indexes into the module's strings). */
struct inl_entry {
	uint32_t name, file, line;
	uint32_t parent;	/* the entry it sits in; INL_NONE: none */
};

/* Addresses [lo, hi) whose innermost inlined function is @entry. */
struct inl_seg {
	uint64_t lo, hi;
	uint32_t entry;
};

struct line_module {
	char *path;
	struct line_row *rows;
	size_t nrows, rows_cap;
	char **files;		/* file and function names */
	size_t nfiles, files_cap;
	struct hindex files_index;
	struct inl_entry *inl;
	size_t ninl, inl_cap;
	struct inl_seg *segs;	/* sorted, disjoint */
	size_t nsegs, segs_cap;
	/* units still to read, by address (aranges), and the file open
	 * for them; ncus 0: every unit read */
	struct cu_range {
		uint64_t lo, hi;
		Dwarf_Off die;
		bool read;	/* its line rows */
		bool walked;	/* its inlined subroutines */
	} *cus;
	size_t ncus, cus_cap;
	int fd;
	Elf *elf;
	Dwarf_Debug dbg;
};

/* The worker's modules. */
struct reader {
	struct line_module *mods;
	size_t n, cap;
};


enum request_kind { ASK_LINE, ASK_INLINED, ASK_DEBUG_FILE,
		    ASK_DEBUG_FILE_NET };

/* One lookup, then the path and build-id (no terminating NULs). */
struct request {
	uint64_t vaddr;
	uint32_t path_len, id_len;
	uint32_t kind;		/* enum request_kind */
};

/* Its answer: ASK_LINE, the line then the file name (no terminating
 * NUL); ASK_INLINED, ret frames, each an inl_wire then its name and
 * file; ASK_DEBUG_FILE(_NET), the debug file's path.  ret -ENODATA: the
 * module has no DWARF at all. */
struct reply {
	int32_t ret;
	uint32_t line;
};

struct inl_wire {
	uint32_t line;
	uint16_t name_len, file_len;
};

struct lines {
	pid_t pid;		/* the worker; 0: none */
	int sock;
	unsigned deaths;	/* workers lost */
	char **bad;		/* modules a worker was lost on */
	size_t nbad, bad_cap;
	char **names;		/* file names handed out, by names_index */
	size_t nnames, names_cap;
	struct hindex names_index;
	char in[sizeof(struct reply) + LINES_REPLY_MAX];	/* an answer */
};

struct lines *lines__new(void)
{
	struct lines *l = calloc(1, sizeof(struct lines));

	if (l)
		l->sock = -1;
	return l;
}

static void close_dwarf(struct line_module *m)
{
	if (m->dbg)
		dwarf_finish(m->dbg, NULL);
	if (m->elf)
		elf_end(m->elf);
	if (m->fd >= 0)
		close(m->fd);
	m->dbg = NULL;
	m->elf = NULL;
	m->fd = -1;
}

static void module_free(struct line_module *m)
{
	close_dwarf(m);
	for (size_t i = 0; i < m->nfiles; i++)
		free(m->files[i]);
	free(m->files);
	hindex__exit(&m->files_index);
	free(m->inl);
	free(m->segs);
	free(m->rows);
	free(m->cus);
	free(m->path);
}

static void reader_free(struct reader *r)
{
	for (size_t i = 0; i < r->n; i++)
		module_free(&r->mods[i]);
	free(r->mods);
}

/* The index of string @name (a file or a function) among @m's, added
 * if new; UINT32_MAX when out of memory. */
static uint32_t file_index(struct line_module *m, const char *name)
{
	uint64_t h = hindex__string(name);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&m->files_index, &p, h)) != HINDEX_NONE)
		if (!strcmp(m->files[i], name))
			return i;
	if (m->nfiles >= UINT32_MAX - 1 ||
	    grow(&m->files, &m->files_cap, m->nfiles + 1, sizeof(*m->files), 16) ||
	    !(m->files[m->nfiles] = strdup(name)))
		return UINT32_MAX;
	if (hindex__insert(&m->files_index, h, (uint32_t)m->nfiles)) {
		free(m->files[m->nfiles]);
		return UINT32_MAX;
	}
	return (uint32_t)m->nfiles++;
}

/* The rows of one compilation unit's line table. */
static void read_cu(Dwarf_Debug dbg, Dwarf_Die cu, struct line_module *m)
{
	Dwarf_Line_Context ctx;
	Dwarf_Unsigned version;
	Dwarf_Small count;
	Dwarf_Line *lines;
	Dwarf_Signed n;

	if (dwarf_srclines_b(cu, &version, &count, &ctx, NULL) != DW_DLV_OK)
		return;
	if (dwarf_srclines_from_linecontext(ctx, &lines, &n, NULL) ==
	    DW_DLV_OK) {
		for (Dwarf_Signed i = 0; i < n; i++) {
			Dwarf_Addr addr;
			Dwarf_Unsigned no;
			Dwarf_Bool end = 0;
			char *src = NULL;
			uint32_t f = 0;

			if (dwarf_lineaddr(lines[i], &addr, NULL) != DW_DLV_OK ||
			    dwarf_lineno(lines[i], &no, NULL) != DW_DLV_OK)
				continue;
			dwarf_lineendsequence(lines[i], &end, NULL);
			if (!end && dwarf_linesrc(lines[i], &src, NULL) ==
			    DW_DLV_OK) {
				f = file_index(m, src);
				dwarf_dealloc(dbg, src, DW_DLA_STRING);
			}
			if (f == UINT32_MAX ||
			    grow(&m->rows, &m->rows_cap, m->nrows + 1,
				 sizeof(*m->rows), 1024))
				break;
			m->rows[m->nrows++] = (struct line_row){ addr, f,
				end ? 0 : (uint32_t)no };
		}
	}
	dwarf_srclines_dealloc_b(ctx);
}

/*
 * Inlined functions.  A unit's DIE tree is walked once, when its lines
 * are read: each DW_TAG_inlined_subroutine becomes an entry (its
 * function's name, the file and line that called it, the entry it sits
 * in), and its address ranges (low/high pc, or DW_AT_ranges from
 * .debug_ranges or DWARF 5's .debug_rnglists) are flattened into
 * disjoint segments, each naming its innermost entry: a lookup is one
 * binary search, then the parent links.
 */

/* A range of an entry, before flattening. */
struct inl_range {
	uint64_t lo, hi;
	uint32_t entry, depth;
};

/* One unit's walk. */
struct walk {
	struct line_module *m;
	Dwarf_Debug dbg;
	char **src;		/* the unit's file names */
	Dwarf_Signed nsrc;
	uint32_t *src_index;	/* src[i] among m's strings; 0: not yet */
	Dwarf_Half version;
	uint64_t base;		/* the unit's low pc (DWARF 4 ranges) */
	struct inl_range *ranges;
	size_t nranges, ranges_cap;
};

static void add_range(struct walk *w, uint64_t lo, uint64_t hi,
		      uint32_t entry, uint32_t depth)
{
	if (lo >= hi || w->m->nsegs + w->nranges >= INL_MAX_RANGES ||
	    grow(&w->ranges, &w->ranges_cap, w->nranges + 1,
		 sizeof(*w->ranges), 64))
		return;
	w->ranges[w->nranges++] = (struct inl_range){ lo, hi, entry, depth };
}

/* DW_AT_ranges of @die: DWARF 5 range lists, or DWARF 4 .debug_ranges
 * (offsets from the unit's base address, which an entry may change). */
static void list_ranges(struct walk *w, Dwarf_Die die, Dwarf_Attribute attr,
			uint32_t entry, uint32_t depth)
{
	Dwarf_Unsigned val = 0, count = 0, global;
	Dwarf_Half form = 0;
	Dwarf_Off off = 0, real;

	if (dwarf_whatform(attr, &form, NULL) != DW_DLV_OK)
		return;
	if (w->version >= 5) {
		Dwarf_Rnglists_Head head;

		if ((form == DW_FORM_rnglistx ?
		     dwarf_formudata(attr, &val, NULL) :
		     dwarf_global_formref(attr, &off, NULL)) != DW_DLV_OK)
			return;
		if (form != DW_FORM_rnglistx)
			val = off;
		if (dwarf_rnglists_get_rle_head(attr, form, val, &head, &count,
						&global, NULL) != DW_DLV_OK)
			return;
		for (Dwarf_Unsigned i = 0; i < count && i < 4096; i++) {
			Dwarf_Unsigned r1, r2, lo, hi;
			Dwarf_Bool unavailable = 0;
			unsigned len, code;

			if (dwarf_get_rnglists_entry_fields_a(head, i, &len, &code,
							      &r1, &r2, &unavailable,
							      &lo, &hi, NULL) !=
			    DW_DLV_OK || code == DW_RLE_end_of_list)
				break;
			if (!unavailable && code != DW_RLE_base_addressx &&
			    code != DW_RLE_base_address)
				add_range(w, lo, hi, entry, depth);
		}
		dwarf_dealloc_rnglists_head(head);
	} else {
		Dwarf_Ranges *r;
		Dwarf_Signed n;
		uint64_t base = w->base;

		if (dwarf_global_formref(attr, &off, NULL) != DW_DLV_OK ||
		    dwarf_get_ranges_b(w->dbg, off, die, &real, &r, &n, &count,
				       NULL) != DW_DLV_OK)
			return;
		for (Dwarf_Signed i = 0; i < n && i < 4096; i++) {
			if (r[i].dwr_type == DW_RANGES_END)
				break;
			if (r[i].dwr_type == DW_RANGES_ADDRESS_SELECTION)
				base = r[i].dwr_addr2;
			else
				add_range(w, base + r[i].dwr_addr1,
					  base + r[i].dwr_addr2, entry, depth);
		}
		dwarf_ranges_dealloc(w->dbg, r, n);
	}
}

/* The address ranges of @die. */
static void die_ranges(struct walk *w, Dwarf_Die die, uint32_t entry,
		       uint32_t depth)
{
	enum Dwarf_Form_Class cls;
	Dwarf_Attribute attr;
	Dwarf_Addr lo, hi;
	Dwarf_Half form;

	if (dwarf_lowpc(die, &lo, NULL) == DW_DLV_OK &&
	    dwarf_highpc_b(die, &hi, &form, &cls, NULL) == DW_DLV_OK) {
		add_range(w, lo, cls == DW_FORM_CLASS_CONSTANT ? lo + hi : hi,
			  entry, depth);
		return;
	}
	if (dwarf_attr(die, DW_AT_ranges, &attr, NULL) != DW_DLV_OK)
		return;
	list_ranges(w, die, attr, entry, depth);
	dwarf_dealloc_attribute(attr);
}

static bool die_number(Dwarf_Die die, Dwarf_Half at, Dwarf_Unsigned *v)
{
	Dwarf_Attribute attr;
	int ret;

	if (dwarf_attr(die, at, &attr, NULL) != DW_DLV_OK)
		return false;
	ret = dwarf_formudata(attr, v, NULL);
	dwarf_dealloc_attribute(attr);
	return ret == DW_DLV_OK;
}

/* The DIE that attribute @at of @die refers to, or NULL. */
static Dwarf_Die die_ref(struct walk *w, Dwarf_Die die, Dwarf_Half at)
{
	Dwarf_Attribute attr;
	Dwarf_Off off;
	Dwarf_Die to = NULL;

	if (dwarf_attr(die, at, &attr, NULL) != DW_DLV_OK)
		return NULL;
	if (dwarf_global_formref(attr, &off, NULL) != DW_DLV_OK ||
	    dwarf_offdie_b(w->dbg, off, true, &to, NULL) != DW_DLV_OK)
		to = NULL;
	dwarf_dealloc_attribute(attr);
	return to;
}

/* The name of the function inlined by @die: its origin's linkage name
 * (C++, demangled by the reader) or name, through at most a few
 * abstract origins and specifications.  Index among m's strings, or
 * UINT32_MAX. */
static uint32_t inlined_name(struct walk *w, Dwarf_Die die)
{
	static const Dwarf_Half names[] = { DW_AT_linkage_name,
		DW_AT_MIPS_linkage_name, DW_AT_name };
	Dwarf_Die d = die_ref(w, die, DW_AT_abstract_origin);
	uint32_t ret = UINT32_MAX;

	for (int hop = 0; d && ret == UINT32_MAX && hop < 4; hop++) {
		Dwarf_Die next;
		char *s = NULL;

		for (size_t i = 0; !s && i < sizeof(names) / sizeof(*names); i++)
			if (dwarf_die_text(d, names[i], &s, NULL) != DW_DLV_OK)
				s = NULL;
		if (s) {
			char cut[INL_NAME_MAX + 1];

			snprintf(cut, sizeof(cut), "%s", s);
			ret = file_index(w->m, cut);
			dwarf_dealloc(w->dbg, s, DW_DLA_STRING);
			break;
		}
		next = die_ref(w, d, DW_AT_abstract_origin);
		if (!next)
			next = die_ref(w, d, DW_AT_specification);
		dwarf_dealloc_die(d);
		d = next;
	}
	if (d)
		dwarf_dealloc_die(d);
	return ret;
}

/* The entry of inlined subroutine @die, inside entry @parent; its ranges
 * at @depth.  The new entry's index, or @parent when it has no name or
 * memory ran out. */
static uint32_t add_inlined(struct walk *w, Dwarf_Die die, uint32_t parent,
			    uint32_t depth)
{
	struct line_module *m = w->m;
	Dwarf_Unsigned file = 0, line = 0;
	uint32_t name = inlined_name(w, die), f = UINT32_MAX;

	if (name == UINT32_MAX || m->ninl >= INL_MAX_RANGES ||
	    grow(&m->inl, &m->inl_cap, m->ninl + 1, sizeof(*m->inl), 64))
		return parent;
	if (die_number(die, DW_AT_call_file, &file)) {
		/* DWARF 5 numbers files from 0, earlier versions from 1 */
		Dwarf_Unsigned i = w->version >= 5 ? file : file - 1;

		if (file >= (w->version < 5) && i < (Dwarf_Unsigned)w->nsrc) {
			if (!w->src_index[i])
				w->src_index[i] = file_index(m, w->src[i]) + 1;
			f = w->src_index[i] - 1;
		}
	}
	die_number(die, DW_AT_call_line, &line);
	m->inl[m->ninl] = (struct inl_entry){ name, f,
		line <= UINT32_MAX ? (uint32_t)line : 0, parent };
	die_ranges(w, die, (uint32_t)m->ninl, depth);
	return (uint32_t)m->ninl++;
}

/* The inlined subroutines below @die, in entry @parent at @depth. */
static void walk_die(struct walk *w, Dwarf_Die die, uint32_t parent,
		     uint32_t depth, uint32_t nest)
{
	Dwarf_Die child, next;

	if (nest >= INL_MAX_NEST ||
	    dwarf_child(die, &child, NULL) != DW_DLV_OK)
		return;
	for (;;) {
		Dwarf_Half tag = 0;
		int ret;

		dwarf_tag(child, &tag, NULL);
		switch (tag) {	/* where code is; not types */
		case DW_TAG_inlined_subroutine: {
			uint32_t e = add_inlined(w, child, parent, depth);

			walk_die(w, child, e, depth + (e != parent), nest + 1);
			break;
		}
		case DW_TAG_subprogram:
		case DW_TAG_lexical_block:
		case DW_TAG_namespace:
		case DW_TAG_module:
			walk_die(w, child, parent, depth, nest + 1);
			break;
		default:
			break;
		}
		ret = dwarf_siblingof_b(w->dbg, child, true, &next, NULL);
		dwarf_dealloc_die(child);
		if (ret != DW_DLV_OK)
			return;
		child = next;
	}
}

static int cmp_range(const void *a, const void *b)
{
	const struct inl_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->depth != y->depth)	/* the outer one first */
		return x->depth < y->depth ? -1 : 1;
	return (x->hi < y->hi) - (x->hi > y->hi);
}

static void add_seg(struct line_module *m, uint64_t lo, uint64_t hi,
		    uint32_t entry)
{
	if (lo < hi && !grow(&m->segs, &m->segs_cap, m->nsegs + 1,
			     sizeof(*m->segs), 256))
		m->segs[m->nsegs++] = (struct inl_seg){ lo, hi, entry };
}

/* The walk's ranges as disjoint segments of m, each naming the
 * innermost entry that covers it.  Ranges nest in well-formed DWARF; a
 * range that sticks out of the one it is in is cut to it. */
static void flatten(struct walk *w)
{
	struct inl_range *stack = NULL;
	size_t sp = 0, cap = 0;
	uint64_t cur = 0;

	qsort(w->ranges, w->nranges, sizeof(*w->ranges), cmp_range);
	for (size_t i = 0; i < w->nranges; i++) {
		struct inl_range r = w->ranges[i];

		while (sp && stack[sp - 1].hi <= r.lo) {
			struct inl_range *t = &stack[--sp];

			if (cur < t->hi) {
				add_seg(w->m, cur, t->hi, t->entry);
				cur = t->hi;
			}
		}
		if (sp && cur < r.lo)
			add_seg(w->m, cur, r.lo, stack[sp - 1].entry);
		if (cur < r.lo)
			cur = r.lo;
		if (sp && r.hi > stack[sp - 1].hi)
			r.hi = stack[sp - 1].hi;
		if (r.hi <= cur ||
		    grow(&stack, &cap, sp + 1, sizeof(*stack), 16))
			continue;
		stack[sp++] = r;
	}
	while (sp) {
		struct inl_range *t = &stack[--sp];

		if (cur < t->hi) {
			add_seg(w->m, cur, t->hi, t->entry);
			cur = t->hi;
		}
	}
	free(stack);
}

static int cmp_seg(const void *a, const void *b)
{
	const struct inl_seg *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The inlined functions of unit @cu into m's entries and segments. */
static void read_inlined(Dwarf_Debug dbg, Dwarf_Die cu, struct line_module *m)
{
	struct walk w = { .m = m, .dbg = dbg };
	Dwarf_Half offset_size;
	Dwarf_Addr base;

	if (dwarf_get_version_of_die(cu, &w.version, &offset_size) !=
	    DW_DLV_OK)
		return;
	if (dwarf_lowpc(cu, &base, NULL) == DW_DLV_OK)
		w.base = base;
	if (dwarf_srcfiles(cu, &w.src, &w.nsrc, NULL) != DW_DLV_OK) {
		w.src = NULL;
		w.nsrc = 0;
	}
	w.src_index = calloc(w.nsrc > 0 ? (size_t)w.nsrc : 1,
			     sizeof(*w.src_index));
	if (w.src_index)
		walk_die(&w, cu, INL_NONE, 0, 0);
	if (w.nranges)
		flatten(&w);	/* the reader sorts the segments */
	for (Dwarf_Signed i = 0; i < w.nsrc; i++)
		dwarf_dealloc(dbg, w.src[i], DW_DLA_STRING);
	if (w.src)
		dwarf_dealloc(dbg, w.src, DW_DLA_LIST);
	free(w.src_index);
	free(w.ranges);
}

static int cmp_cu(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The units' address ranges from .debug_aranges into m->cus.  0, or
 * -ENOENT when the file has none (every unit is then read). */
static int read_aranges(struct line_module *m)
{
	Dwarf_Arange *ar;
	Dwarf_Signed n;

	if (dwarf_get_aranges(m->dbg, &ar, &n, NULL) != DW_DLV_OK || n <= 0)
		return -ENOENT;
	m->cus = calloc((size_t)n, sizeof(*m->cus));
	for (Dwarf_Signed i = 0; m->cus && i < n; i++) {
		Dwarf_Unsigned seg, seg_size, len;
		Dwarf_Addr start;
		Dwarf_Off die;

		if (dwarf_get_arange_info_b(ar[i], &seg, &seg_size, &start, &len,
					    &die, NULL) == DW_DLV_OK &&
		    len && start + len > start)
			m->cus[m->ncus++] = (struct cu_range){ start,
				start + len, die, false, false };
	}
	for (Dwarf_Signed i = 0; i < n; i++)
		dwarf_dealloc(m->dbg, ar[i], DW_DLA_ARANGE);
	dwarf_dealloc(m->dbg, ar, DW_DLA_LIST);
	if (!m->ncus) {
		free(m->cus);
		m->cus = NULL;
		return -ENOENT;
	}
	qsort(m->cus, m->ncus, sizeof(*m->cus), cmp_cu);
	return 0;
}

/* libdwarf calls abort() on an error of a call given no Dwarf_Error to
 * fill, unless the Dwarf_Debug has a handler: with this one, such a call
 * returns DW_DLV_ERROR, and dwarf_finish() frees the error.  A file's
 * DWARF is a local user's to craft. */
static void dwarf_failed(Dwarf_Error err, Dwarf_Ptr arg)
{
	(void)err;
	(void)arg;
}

/* Without .debug_aranges (clang emits none), the units' ranges from
 * their DIEs (low/high pc or DW_AT_ranges), so that a unit is read when
 * a lookup first falls in it, as with aranges; a unit that gives no
 * range is read now.  0 when some unit is left to read on demand, or
 * -ENOENT. */
static int unit_ranges(struct line_module *m)
{
	Dwarf_Unsigned next;
	Dwarf_Half type;

	while (dwarf_next_cu_header_d(m->dbg, true, NULL, NULL, NULL, NULL,
				      NULL, NULL, NULL, NULL, &next, &type,
				      NULL) == DW_DLV_OK) {
		struct walk w = { .m = m, .dbg = m->dbg };
		Dwarf_Half offset_size;
		Dwarf_Addr base;
		Dwarf_Off off;
		Dwarf_Die cu;
		bool kept = true;

		if (dwarf_siblingof_b(m->dbg, NULL, true, &cu, NULL) !=
		    DW_DLV_OK)
			continue;
		if (dwarf_get_version_of_die(cu, &w.version, &offset_size) ==
		    DW_DLV_OK && dwarf_dieoffset(cu, &off, NULL) == DW_DLV_OK) {
			if (dwarf_lowpc(cu, &base, NULL) == DW_DLV_OK)
				w.base = base;
			die_ranges(&w, cu, 0, 0);
		}
		for (size_t i = 0; kept && i < w.nranges; i++) {
			kept = !grow(&m->cus, &m->cus_cap, m->ncus + 1,
				     sizeof(*m->cus), 64);
			if (kept)
				m->cus[m->ncus++] = (struct cu_range){
					w.ranges[i].lo, w.ranges[i].hi, off,
					false, false };
		}
		if (!w.nranges || !kept) {
			read_cu(m->dbg, cu, m);
			read_inlined(m->dbg, cu, m);
		}
		free(w.ranges);
		dwarf_dealloc(m->dbg, cu, DW_DLA_DIE);
	}
	if (!m->ncus) {
		close_dwarf(m);
		return m->nrows ? 0 : -ENOENT;
	}
	qsort(m->cus, m->ncus, sizeof(*m->cus), cmp_cu);
	return 0;
}

/* Opens the DWARF of the ELF file at @path, if it is the build
 * @build_id (module__open_recorded_fd()): its units' ranges (from
 * .debug_aranges, else from their DIEs) kept for reading on demand.
 * 0, or -ENOENT when it has no DWARF or is not that file. */
static int open_file(const char *path, const char *build_id,
		     struct line_module *m)
{
	Dwarf_Error err = NULL;

	m->fd = module__open_recorded_fd(path, build_id);
	if (m->fd < 0)
		return -ENOENT;
	m->elf = module__elf_begin(m->fd);
	/* init itself takes an error to fill: with none, libdwarf hands
	 * the handler an error of the Dwarf_Debug it has not made yet */
	if (!m->elf || dwarf_elf_init(m->elf, DW_DLC_READ, dwarf_failed, NULL,
				      &m->dbg, &err) != DW_DLV_OK) {
		if (err)	/* freed with no Dwarf_Debug, as cfi.c does */
			dwarf_dealloc(NULL, err, DW_DLA_ERROR);
		m->dbg = NULL;
		close_dwarf(m);
		return -ENOENT;
	}
	if (!read_aranges(m) || !unit_ranges(m))
		return 0;
	close_dwarf(m);
	return m->nrows ? 0 : -ENOENT;
}

static int cmp_row(const void *a, const void *b)
{
	const struct line_row *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* at one address, an end of sequence before the next start */
	return (x->line != 0) - (y->line != 0);
}

static void sort_module(struct line_module *m)
{
	if (m->nrows)
		qsort(m->rows, m->nrows, sizeof(*m->rows), cmp_row);
	if (m->nsegs)
		qsort(m->segs, m->nsegs, sizeof(*m->segs), cmp_seg);
}

static struct line_module *load(struct reader *l, const char *path,
				const char *build_id)
{
	struct line_module *m;

	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->mods[i].path, path))
			return &l->mods[i];
	if (grow(&l->mods, &l->cap, l->n + 1, sizeof(*l->mods), 8))
		return NULL;
	m = &l->mods[l->n];
	*m = (struct line_module){ .path = strdup(path), .fd = -1 };
	if (!m->path)
		return NULL;
	l->n++;
	/* no rows from another build (open_file() checks) */
	/* a stripped binary's lines are in its debug file: the build-id
	 * tree, its debuglink, or debuginfod (reports only read lines) */
	if (open_file(path, build_id, m)) {
		char dbg[4096];

		if (debuginfo__find(path, build_id, true, dbg, sizeof(dbg)) !=
		    DEBUGINFO_NONE)
			open_file(dbg, build_id, m);
	}
	sort_module(m);
	return m;
}

/* The index of the first of @n elements of @size bytes at @a, sorted by
 * the address each starts with (line_row, cu_range and inl_seg all do),
 * whose address is above @vaddr: the one before it is the last at or
 * below. */
static size_t above(const void *a, size_t n, size_t size, uint64_t vaddr)
{
	_Static_assert(offsetof(struct line_row, addr) == 0 &&
		       offsetof(struct cu_range, lo) == 0 &&
		       offsetof(struct inl_seg, lo) == 0,
		       "above() reads the address each element starts with");
	uint64_t at;

	return LOWER_BOUND((size_t)0, n, i,
			   (memcpy(&at, (const char *)a + i * size, sizeof(at)),
			    at <= vaddr));
}

/* Reads the rows of the unit whose range holds @vaddr, when there is
 * one not read yet, and sorts the rows again. */
static void read_unit_of(struct line_module *m, uint64_t vaddr, bool inlined)
{
	size_t lo = above(m->cus, m->ncus, sizeof(*m->cus), vaddr);
	Dwarf_Die cu;

	/* ranges may nest or overlap (a unit's several ranges): look back
	 * over those that start at or below @vaddr */
	while (lo-- > 0) {
		struct cu_range *c = &m->cus[lo];

		if (vaddr >= c->hi)
			continue;
		if (c->read && (c->walked || !inlined))
			return;
		if (dwarf_offdie_b(m->dbg, c->die, true, &cu, NULL) !=
		    DW_DLV_OK) {
			c->read = c->walked = true;
			continue;
		}
		if (!c->read)
			read_cu(m->dbg, cu, m);
		/* the DIEs only for what was inlined: line lookups need no
		 * .debug_info, whose decompression is most of the cost */
		if (inlined)
			read_inlined(m->dbg, cu, m);
		c->read = true;
		c->walked |= inlined;
		dwarf_dealloc(m->dbg, cu, DW_DLA_DIE);
		sort_module(m);
		return;
	}
}

static int reader_find(struct reader *l, const char *path,
		       const char *build_id, uint64_t vaddr, const char **file,
		       unsigned *line)
{
	struct line_module *m = load(l, path, build_id);
	size_t lo;

	if (m && m->ncus)
		read_unit_of(m, vaddr, false);
	if (!m || !m->nrows)
		return m && !m->ncus ? -ENODATA : -ENOENT;
	lo = above(m->rows, m->nrows, sizeof(*m->rows), vaddr);
	if (!lo || !m->rows[lo - 1].line)
		return -ENOENT;
	*file = m->files[m->rows[lo - 1].file];
	*line = m->rows[lo - 1].line;
	return 0;
}

/* The inline chain at @vaddr, innermost first, as wire frames into
 * @out (@len bytes): the frame count, or -ENODATA (no DWARF). */
static int reader_inlined(struct reader *l, const char *path,
			  const char *build_id, uint64_t vaddr, char *out,
			  size_t len, size_t *used)
{
	struct line_module *m = load(l, path, build_id);
	size_t lo, at = 0;
	uint32_t e;
	int n = 0;

	*used = 0;
	if (m && m->ncus)
		read_unit_of(m, vaddr, true);
	if (!m || (!m->nrows && !m->nsegs))
		return m && !m->ncus ? -ENODATA : 0;
	lo = above(m->segs, m->nsegs, sizeof(*m->segs), vaddr);
	if (!lo || vaddr >= m->segs[lo - 1].hi)
		return 0;
	for (e = m->segs[lo - 1].entry; e < m->ninl && n < LINES_MAX_INLINED;
	     e = m->inl[e].parent) {
		const struct inl_entry *x = &m->inl[e];
		const char *file = x->file < m->nfiles ? m->files[x->file] : "";
		struct inl_wire wire = { x->line,
			(uint16_t)strnlen(m->files[x->name], INL_NAME_MAX),
			(uint16_t)strnlen(file, INL_NAME_MAX) };

		if (at + sizeof(wire) + wire.name_len + wire.file_len > len)
			break;
		memcpy(out + at, &wire, sizeof(wire));
		memcpy(out + at + sizeof(wire), m->files[x->name], wire.name_len);
		memcpy(out + at + sizeof(wire) + wire.name_len, file,
		       wire.file_len);
		at += sizeof(wire) + wire.name_len + wire.file_len;
		n++;
	}
	*used = at;
	return n;
}

/* The worker: answers each request on @sock until the socket closes. */
/* ASK_LINE: the line, then the file name. */
static void answer_line(struct reader *r, const char *path, const char *id,
			uint64_t vaddr, struct reply *a, char *out,
			size_t *used)
{
	const char *file = NULL;

	a->ret = reader_find(r, path, id, vaddr, &file, &a->line);
	if (!a->ret) {
		*used = strnlen(file, LINES_PATH_MAX);
		memcpy(out, file, *used);
	}
}

/* ASK_INLINED: the number of inlined frames; the wire frame of the
 * address's own line (no name), then theirs. */
static void answer_inlined(struct reader *r, const char *path,
			   const char *id, uint64_t vaddr, struct reply *a,
			   char *out, size_t *used)
{
	const char *file = "";
	unsigned line = 0;
	struct inl_wire w;
	size_t more;

	a->ret = reader_inlined(r, path, id, vaddr,
				out + sizeof(w) + LINES_PATH_MAX,
				LINES_REPLY_MAX - sizeof(w) - LINES_PATH_MAX,
				&more);
	if (a->ret < 0)
		return;
	if (reader_find(r, path, id, vaddr, &file, &line))
		file = "", line = 0;
	w = (struct inl_wire){ line, 0,
		(uint16_t)strnlen(file, LINES_PATH_MAX - 1) };
	memcpy(out, &w, sizeof(w));
	memcpy(out + sizeof(w), file, w.file_len);
	memmove(out + sizeof(w) + w.file_len,
		out + sizeof(w) + LINES_PATH_MAX, more);
	*used = sizeof(w) + w.file_len + more;
}

/* ASK_DEBUG_FILE(_NET): the path of the debug file. */
static void answer_debug_file(const char *path, const char *id, bool network,
			      struct reply *a, char *out, size_t *used)
{
	if (debuginfo__find(path, id, network, out, LINES_PATH_MAX) ==
	    DEBUGINFO_NONE)
		return;
	a->ret = 0;
	*used = strnlen(out, LINES_PATH_MAX - 1);
}

static void serve(int sock)
{
	char in[sizeof(struct request) + LINES_PATH_MAX + LINES_ID_MAX + 2];
	char out[sizeof(struct reply) + LINES_REPLY_MAX];
	struct reader r = { 0 };
	ssize_t n;

	while ((n = recv(sock, in, sizeof(in) - 2, 0)) > 0) {
		struct request q;
		struct reply a = { -ENOENT, 0 };
		size_t used = 0;

		if ((size_t)n >= sizeof(q))
			memcpy(&q, in, sizeof(q));
		if ((size_t)n >= sizeof(q) && q.path_len < LINES_PATH_MAX &&
		    q.id_len < LINES_ID_MAX &&
		    sizeof(q) + q.path_len + q.id_len == (size_t)n) {
			char *path = in + sizeof(q), *id;

			/* NUL-terminated in place: the id moves up one */
			id = path + q.path_len + 1;
			memmove(id, path + q.path_len, q.id_len);
			path[q.path_len] = id[q.id_len] = '\0';
			if (q.kind == ASK_INLINED)
				answer_inlined(&r, path, id, q.vaddr, &a,
					       out + sizeof(a), &used);
			else if (q.kind == ASK_DEBUG_FILE ||
				 q.kind == ASK_DEBUG_FILE_NET)
				answer_debug_file(path, id,
						  q.kind == ASK_DEBUG_FILE_NET,
						  &a, out + sizeof(a), &used);
			else
				answer_line(&r, path, id, q.vaddr, &a,
					    out + sizeof(a), &used);
		}
		memcpy(out, &a, sizeof(a));
		if (send(sock, out, sizeof(a) + used, MSG_NOSIGNAL) < 0)
			break;
	}
	reader_free(&r);
}

static void stop_worker(struct lines *l)
{
	if (l->sock >= 0)
		close(l->sock);
	if (l->pid > 0) {
		kill(l->pid, SIGKILL);
		waitpid(l->pid, NULL, 0);
	}
	l->sock = -1;
	l->pid = 0;
}

static int start_worker(struct lines *l)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGABRT, SIGILL,
				     SIGFPE };
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	l->pid = fork();
	if (l->pid < 0) {
		int err = -errno;

		close(sv[0]);
		close(sv[1]);
		l->pid = 0;
		return err;
	}
	if (!l->pid) {
		/* quiet: what libc says as libdwarf crashes is no news to
		 * the report's user */
		int null = sys__open("/dev/null", O_WRONLY, 0);

		if (null >= 0)
			dup2(null, STDERR_FILENO);
		/* a crash here dies plainly, whatever handler the process
		 * set (a fuzzer's would record the input as a crash of the
		 * whole program, which goes on) */
		for (size_t i = 0; i < sizeof(fatal) / sizeof(*fatal); i++)
			signal(fatal[i], SIG_DFL);
		close(sv[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		serve(sv[1]);
		_exit(0);
	}
	close(sv[1]);
	l->sock = sv[0];
	return 0;
}

/* The worker's answer to request @kind: 0 with the reply in @a and its
 * payload, @len bytes, in l->in; -EPIPE when the worker is lost. */
static int ask(struct lines *l, enum request_kind kind, const char *path,
	       const char *build_id, uint64_t vaddr, struct reply *a,
	       size_t *len)
{
	char buf[sizeof(struct request) + LINES_PATH_MAX + LINES_ID_MAX];
	struct request q = { vaddr, (uint32_t)strlen(path),
			     (uint32_t)strlen(build_id), kind };
	struct pollfd p;
	ssize_t n;

	if (q.path_len >= LINES_PATH_MAX || q.id_len >= LINES_ID_MAX)
		return -ENOENT;
	memcpy(buf, &q, sizeof(q));
	memcpy(buf + sizeof(q), path, q.path_len);
	memcpy(buf + sizeof(q) + q.path_len, build_id, q.id_len);
	if (!l->pid && start_worker(l))
		return -ENOENT;
	p = (struct pollfd){ .fd = l->sock, .events = POLLIN };
	if (send(l->sock, buf, sizeof(q) + q.path_len + q.id_len,
		 MSG_NOSIGNAL) < 0 ||
	    poll(&p, 1, LINES_TIMEOUT_MS) != 1 ||
	    (n = recv(l->sock, l->in, sizeof(l->in), 0)) < (ssize_t)sizeof(*a))
		return -EPIPE;
	memcpy(a, l->in, sizeof(*a));
	*len = (size_t)n - sizeof(*a);
	return 0;
}

static bool is_bad(const struct lines *l, const char *path)
{
	for (size_t i = 0; i < l->nbad; i++)
		if (!strcmp(l->bad[i], path))
			return true;
	return false;
}

static void add_bad(struct lines *l, const char *path)
{
	if (!grow(&l->bad, &l->bad_cap, l->nbad + 1, sizeof(*l->bad), 8) &&
	    (l->bad[l->nbad] = strdup(path)))
		l->nbad++;
}

/* @name (@len bytes, not NUL-terminated) as a string @l keeps, one copy
 * per name. */
static const char *keep_name(struct lines *l, const char *name, size_t len)
{
	char s[LINES_PATH_MAX + 1];
	uint64_t h;
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	len = strnlen(name, len < LINES_PATH_MAX ? len : LINES_PATH_MAX);
	memcpy(s, name, len);
	s[len] = '\0';
	h = hindex__string(s);
	while ((i = hindex__next(&l->names_index, &p, h)) != HINDEX_NONE)
		if (!strcmp(l->names[i], s))
			return l->names[i];
	if (l->nnames >= UINT32_MAX - 1 ||
	    grow(&l->names, &l->names_cap, l->nnames + 1, sizeof(*l->names),
		 64) ||
	    !(l->names[l->nnames] = strdup(s)))
		return NULL;
	if (hindex__insert(&l->names_index, h, (uint32_t)l->nnames)) {
		free(l->names[l->nnames]);
		return NULL;
	}
	return l->names[l->nnames++];
}

/* ask(), with a lost worker or a module with no DWARF never asked about
 * again: 0, -ENOENT, or -ENODATA (no DWARF; the module is then done). */
static int ask_module(struct lines *l, enum request_kind kind,
		      const char *path, const char *build_id, uint64_t vaddr,
		      struct reply *a, size_t *len)
{
	int ret;

	if (l->deaths >= LINES_MAX_DEATHS || is_bad(l, path))
		return -ENODATA;
	ret = ask(l, kind, path, build_id, vaddr, a, len);
	if (ret == -EPIPE) {
		stop_worker(l);
		l->deaths++;
	}
	if (ret == -EPIPE || (!ret && a->ret == -ENODATA)) {
		add_bad(l, path);
		return -ENODATA;
	}
	return ret ? ret : a->ret < 0 ? -ENOENT : 0;
}

int lines__find(struct lines *l, const char *path, const char *build_id,
		uint64_t vaddr, const char **file, unsigned *line)
{
	struct reply a;
	size_t len;

	if (ask_module(l, ASK_LINE, path, build_id, vaddr, &a, &len) ||
	    !(*file = keep_name(l, l->in + sizeof(a), len)))
		return -ENOENT;
	*line = a.line;
	return 0;
}

int lines__inlined(struct lines *l, const char *path, const char *build_id,
		   uint64_t vaddr, struct lines_frame *out, size_t cap)
{
	struct reply a;
	size_t len, at = sizeof(a), end;
	int ret = ask_module(l, ASK_INLINED, path, build_id, vaddr, &a, &len);
	size_t n = 0;

	if (ret)
		return ret == -ENODATA ? -ENOENT : 0;
	end = sizeof(a) + len;
	/* wire 0: the address's line; wire i: the i-th function inlined
	 * there, innermost first, and where the next one out called it.
	 * Frame i is wire i + 1's function at wire i's line; the last
	 * frame, the function they are all inlined in, has no name.  Each
	 * wire is checked against the length received. */
	for (int i = 0; i <= a.ret && n < cap; i++) {
		struct inl_wire w;

		if (end - at < sizeof(w))
			break;
		memcpy(&w, l->in + at, sizeof(w));
		at += sizeof(w);
		if (end - at < (size_t)w.name_len + w.file_len)
			break;
		if (i && !(out[n - 1].name = keep_name(l, l->in + at,
						       w.name_len)))
			break;
		out[n].name = NULL;
		out[n].file = w.file_len ? keep_name(l, l->in + at + w.name_len,
						     w.file_len) : NULL;
		out[n].line = w.file_len ? w.line : 0;
		at += (size_t)w.name_len + w.file_len;
		n++;
	}
	/* cut off by @cap or a bad wire: the unnamed frame is not the
	 * outermost one, so none is given */
	return n == (size_t)a.ret + 1 ? (int)n : 0;
}

int lines__debug_file(struct lines *l, const char *path, const char *build_id,
		      bool network, char *out, size_t len)
{
	struct reply a;
	size_t n;
	int ret;

	if (l->deaths >= LINES_MAX_DEATHS)
		return -ENOENT;
	ret = ask(l, network ? ASK_DEBUG_FILE_NET : ASK_DEBUG_FILE, path,
		  build_id, 0, &a, &n);
	if (ret == -EPIPE) {	/* it took too long, or died */
		stop_worker(l);
		l->deaths++;
	}
	if (ret || a.ret || !n || n >= len || memchr(l->in + sizeof(a), 0, n))
		return -ENOENT;
	memcpy(out, l->in + sizeof(a), n);
	out[n] = '\0';
	return 0;
}

void lines__delete(struct lines *l)
{
	if (!l)
		return;
	stop_worker(l);
	for (size_t i = 0; i < l->nbad; i++)
		free(l->bad[i]);
	for (size_t i = 0; i < l->nnames; i++)
		free(l->names[i]);
	free(l->bad);
	free(l->names);
	hindex__exit(&l->names_index);
	free(l);
}
