/*
 * cfi.c - CFA rules from .eh_frame/.debug_frame: libdwarf finds and
 * parses the CIEs and FDEs; each FDE's rows are built here, in one pass
 * over its instructions, on first use.
 *
 * Invariants: fdes[] is sorted by lo and ranges do not overlap (when a
 * broken producer emits overlapping FDEs, the later one is dropped); a
 * row array, once built, is sorted by pc and covers [fde.lo, fde.hi).
 * Every instruction range an entry names lies inside the section, which
 * is libelf's data of the ELF (or, where libelf's differs, libdwarf's
 * copy, kept open); expression rules point into it.
 *
 * libdwarf's lists are read once into plain entries (where each FDE's
 * and CIE's instructions lie), and with libelf's section it is then let
 * go: a cfi_cache keeps those entries, and a later open of the same
 * bytes reads them back without libdwarf (see cfi_cache.h).
 */
#include "binary/cfi_int.h"
#include "binary/cfi_cache.h"
#include "common/pageindex.h"
#include "common/search.h"

#include <errno.h>
#include <gelf.h>
#include <libdwarf/libdwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* .eh_frame plus .debug_frame read at most: no binary Debian ships comes
 * near (cc1plus: 2.6 MB; libLLVM-14: 5.0 MB). */
#define CFI_MAX_SECTION_BYTES (64u << 20)
/* Their CIEs and FDEs at most.  libdwarf allocates about 300 bytes per
 * FDE: 64 MiB of 20-byte FDEs cost 1.2 GB, where real code has a few
 * (libLLVM-14: 94,994 in 5.0 MB; cc1plus: 49,002).  At this bound, 190
 * MB at worst. */
#define CFI_MAX_ENTRIES (1u << 19)

/* A CIE: its factors, and where its initial instructions lie in the
 * frame section. */
struct cie_entry {
	uint64_t code_align;
	int64_t data_align;
	uint32_t init_off, init_len;
	uint16_t ra_reg;
	bool signal;		/* augmentation has 'S' */
	bool broken;		/* instructions outside it or the section */
};

/* An FDE: as the cache file holds it (to_image() writes the array
 * whole, from_image() checks it where it was read), its rows apart. */
struct fde_entry {
	uint64_t lo, hi;
	uint32_t ins_off, ins_len;	/* its instructions, in the section */
	uint32_t cie;		/* index into cies[] */
	uint32_t broken;	/* 1: rows could not be built */
};

/* An FDE's rows, built at its first use. */
struct fde_rows {
	struct cfa_row *rows;	/* NULL until then */
	uint32_t nrows;
	uint32_t built_before;	/* the FDE built before it, + 1; 0: none */
};

/* Recent FDE lookups, by pc, and the row each found, in modules with
 * more FDEs than this: a sample's return addresses are mostly ones the
 * samples before it walked, and a search of libLLVM's 95k FDEs misses
 * the data cache at most of its 17 steps (two per frame: the function,
 * then its row), as does the search of a large function's rows. */
#define MEMO_MIN_FDES 4096
#define MEMO_BITS 12

struct memo {
	uint64_t pc;
	struct fde_entry *f;	/* NULL: an empty slot */
	const struct cfa_row *row;	/* pc's row; NULL: not searched yet */
};

struct cfi {
	/* The frame section: libelf's data of the ELF (which outlives the
	 * table), or libdwarf's copy where the two differ (a compressed
	 * .debug_frame), kept with dbg and the lists. */
	const uint8_t *sec;
	size_t sec_len;
	Dwarf_Debug dbg;	/* NULL once the section is libelf's */
	Dwarf_Cie *cie_data;
	Dwarf_Fde *fde_data;
	Dwarf_Signed cie_count, fde_count;
	struct cie_entry *cies;
	size_t ncies;
	struct memo *memo;	/* 1 << MEMO_BITS slots, or NULL */
	/* With the memo, a page index of the FDEs (common/pageindex.h):
	 * a search that missed the memo looks at a few, not at all of
	 * libLLVM's 95k (34 of 973 recorder samples on clang++). */
	struct page_index pages;
	struct fde_entry *fdes;	/* in image where read from a cache */
	struct fde_rows *rows;	/* one per FDE; pages untouched till used */
	size_t nfdes;
	struct cache_table image;	/* a cache file's bytes, held */
	size_t row_bytes;	/* of the rows built so far */
	uint32_t last_built;	/* the FDE whose rows were built last, + 1:
				 * a list through fde_rows, so that closing
				 * touches no page of rows[] a walk did not */
	size_t section_bytes;	/* of the CFI sections read */
	bool cached;		/* read from a cfi_cache */
	struct cfa_row *scratch;	/* build_rows()'s, reused */
	size_t scratch_cap;
};

/* build_rows() keeps a scratch array of up to this many rows between
 * builds; one that a long FDE grew past it goes. */
#define SCRATCH_ROWS 512

static int cmp_fde(const void *a, const void *b)
{
	const struct fde_entry *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The entries (CIEs and FDEs) of a frame section's @n bytes at @p, up
 * to @max: each starts with its length. */
static size_t count_entries(const uint8_t *p, size_t n, size_t max)
{
	size_t at = 0, count = 0;

	while (n - at >= 4 && count <= max) {
		uint32_t len32;
		uint64_t len;
		size_t hdr = 4;

		memcpy(&len32, p + at, 4);
		len = len32;
		if (len32 == 0xffffffff) {	/* 64-bit DWARF */
			if (n - at < 12)
				break;
			memcpy(&len, p + at + 4, 8);
			hdr = 12;
		}
		if (len > n - at - hdr)
			break;
		count += len != 0;	/* a zero length ends .eh_frame */
		at += hdr + len;
	}
	return count;
}

/* Whether the frame sections hold more than CFI_MAX_ENTRIES entries.
 * Reads them as libdwarf will (libelf keeps the data for it). */
static bool too_many_entries(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, entries = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    (strcmp(name, ".eh_frame") && strcmp(name, ".debug_frame")) ||
		    !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		entries += count_entries(d->d_buf, d->d_size,
					 CFI_MAX_ENTRIES - entries);
		if (entries > CFI_MAX_ENTRIES)
			return true;
	}
	return false;
}

/* The first section of @elf named @name, its header in *@sh; NULL when
 * there is none. */
static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, sh) &&
		    (n = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    !strcmp(n, name))
			return scn;
	return NULL;
}

/*
 * The bytes libdwarf holds of frame section @name of @elf: its size, or
 * for a compressed one (Go's .debug_frame is SHF_COMPRESSED; older
 * toolchains wrote .zdebug_frame, "ZLIB" and a big-endian size) the
 * size it inflates to, which libdwarf's reported size is not.  0 when
 * absent; UINT64_MAX for a compressed one whose size cannot be told.
 */
static uint64_t held_size(Elf *elf, const char *name)
{
	char zname[32];
	GElf_Shdr sh;
	GElf_Chdr ch;
	Elf_Scn *scn = find_section(elf, name, &sh);
	Elf_Data *raw;
	uint64_t size = 0;

	if (scn)
		return !(sh.sh_flags & SHF_COMPRESSED) ? sh.sh_size :
		       gelf_getchdr(scn, &ch) ? ch.ch_size : UINT64_MAX;
	snprintf(zname, sizeof(zname), ".z%s", name + 1);
	if (!(scn = find_section(elf, zname, &sh)))
		return 0;
	raw = elf_rawdata(scn, NULL);
	if (!raw || raw->d_size < 12 || memcmp(raw->d_buf, "ZLIB", 4))
		return UINT64_MAX;
	for (int i = 0; i < 8; i++)
		size = size << 8 | ((const uint8_t *)raw->d_buf)[4 + i];
	return size;
}

/* The bytes of the sections libdwarf copies (and inflates) for the FDE
 * list: a compressed section's inflated size, so that a small crafted
 * one cannot make libdwarf allocate what it claims. */
static uint64_t frame_section_bytes(Elf *elf)
{
	uint64_t eh = held_size(elf, ".eh_frame"),
		 debug = held_size(elf, ".debug_frame");

	return eh < UINT64_MAX - debug ? eh + debug : UINT64_MAX;
}

/* The data of section @name of @elf, or NULL (absent, empty, NOBITS);
 * its header in *@sh. */
static Elf_Data *section_data(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = find_section(elf, name, sh);
	Elf_Data *d;

	if (!scn || sh->sh_type == SHT_NOBITS)
		return NULL;
	d = elf_getdata(scn, NULL);
	return d && d->d_buf && d->d_size ? d : NULL;
}

static void drop_dwarf(struct cfi *cfi)
{
	if (cfi->fde_data)
		dwarf_fde_cie_list_dealloc(cfi->dbg, cfi->cie_data,
					   cfi->cie_count, cfi->fde_data,
					   cfi->fde_count);
	cfi->fde_data = NULL;
	cfi->cie_data = NULL;
	if (cfi->dbg)
		dwarf_finish(cfi->dbg, NULL);
	cfi->dbg = NULL;
}

/* Whether [@p, @p + @len) lies inside the section; its offset in *@off. */
static bool in_section(const struct cfi *cfi, const void *p, uint64_t len,
		       uint32_t *off)
{
	uintptr_t at = (uintptr_t)p, base = (uintptr_t)cfi->sec;

	if (at < base || at - base > cfi->sec_len ||
	    len > cfi->sec_len - (at - base))
		return false;
	*off = (uint32_t)(at - base);
	return true;
}

/* Reads the CIEs' factors and instructions from libdwarf's list. */
static int read_cies(struct cfi *cfi)
{
	Dwarf_Error err = NULL;

	cfi->cies = calloc((size_t)cfi->cie_count, sizeof(*cfi->cies));
	if (!cfi->cies)
		return -ENOMEM;
	cfi->ncies = (size_t)cfi->cie_count;
	for (size_t i = 0; i < cfi->ncies; i++) {
		struct cie_entry *c = &cfi->cies[i];
		Dwarf_Unsigned bytes, caf, ilen;
		Dwarf_Small version;
		Dwarf_Signed daf;
		Dwarf_Half ra, offsz;
		Dwarf_Ptr init;
		char *aug = NULL;

		c->broken = true;
		if (dwarf_get_cie_info_b(cfi->cie_data[i], &bytes, &version,
					 &aug, &caf, &daf, &ra, &init, &ilen,
					 &offsz, &err) != DW_DLV_OK) {
			if (err)
				dwarf_dealloc(cfi->dbg, err, DW_DLA_ERROR);
			err = NULL;
			continue;
		}
		/* libdwarf 20210528 derives the instruction length without
		 * checking it: a crafted CIE gives one that wraps around.
		 * The CIE's instructions lie inside the CIE. */
		c->broken = ilen > bytes ||
			    !in_section(cfi, init, ilen, &c->init_off);
		c->init_len = (uint32_t)ilen;
		c->code_align = caf ? caf : 1;
		c->data_align = daf;
		c->ra_reg = ra;
		c->signal = aug && aug[0] == 'z' && strchr(aug, 'S');
	}
	return 0;
}

/* One FDE of libdwarf's list as an entry: 0, or 1 to leave it out (no
 * range). */
static int read_fde(struct cfi *cfi, Dwarf_Fde fde, struct fde_entry *f)
{
	Dwarf_Addr lo;
	Dwarf_Unsigned len, fde_len, ilen;
	Dwarf_Ptr fde_bytes, ins;
	Dwarf_Off fde_off;
	Dwarf_Signed cie;
	Dwarf_Error err = NULL;
	uint32_t len32, at;
	int rc;

	rc = dwarf_get_fde_range(fde, &lo, &len, &fde_bytes, &fde_len, NULL,
				 &cie, &fde_off, &err);
	if (rc == DW_DLV_ERROR)
		dwarf_dealloc(cfi->dbg, err, DW_DLA_ERROR);
	if (rc != DW_DLV_OK || len == 0 || lo + len < lo)
		return 1;
	*f = (struct fde_entry){ .lo = lo, .hi = lo + len, .broken = 1 };
	err = NULL;
	if (dwarf_get_fde_instr_bytes(fde, &ins, &ilen, &err) != DW_DLV_OK) {
		if (err)
			dwarf_dealloc(cfi->dbg, err, DW_DLA_ERROR);
		return 0;
	}
	/* The FDE's instructions lie inside the FDE (its length field
	 * included), which lies inside the section. */
	if (!in_section(cfi, fde_bytes, 4, &at))
		return 0;
	memcpy(&len32, fde_bytes, sizeof(len32));
	fde_len += len32 == 0xffffffff ? 12 : 4;
	if (cie < 0 || (size_t)cie >= cfi->ncies || cfi->cies[cie].broken ||
	    !in_section(cfi, fde_bytes, fde_len, &at) ||
	    !in_section(cfi, ins, ilen, &f->ins_off) ||
	    f->ins_off < at || ilen > fde_len - (f->ins_off - at))
		return 0;
	f->ins_len = (uint32_t)ilen;
	f->cie = (uint32_t)cie;
	f->broken = 0;
	return 0;
}

/* Sorts the entries by address and drops overlapping ones (a broken
 * producer's: the later one goes).  0, or -ENOENT with none left. */
static int sort_fdes(struct cfi *cfi, bool sorted)
{
	size_t kept = 0;

	if (!sorted)	/* libdwarf's list comes sorted */
		qsort(cfi->fdes, cfi->nfdes, sizeof(*cfi->fdes), cmp_fde);
	for (size_t i = 0; i < cfi->nfdes; i++) {
		if (kept && cfi->fdes[i].lo < cfi->fdes[kept - 1].hi)
			continue;
		/* a mapped cache table has no overlaps: writing each entry
		 * in place would copy each of its pages */
		if (kept != i)
			cfi->fdes[kept] = cfi->fdes[i];
		kept++;
	}
	cfi->nfdes = kept;
	if (!kept)
		return -ENOENT;
	cfi->rows = calloc(kept, sizeof(*cfi->rows));
	if (!cfi->rows)
		return -ENOMEM;
	if (kept > MEMO_MIN_FDES) {	/* none: the search without them */
		cfi->memo = calloc((size_t)1 << MEMO_BITS, sizeof(*cfi->memo));
		page_index__build(&cfi->pages, cfi->fdes, kept,
				  sizeof(*cfi->fdes), cfi->fdes[kept - 1].hi);
	}
	return 0;
}

void cfi__set_leak_tracking(bool on)
{
	dwarf_set_de_alloc_flag(on);
}

/* The table from libdwarf's lists of @elf's .eh_frame, or of its
 * .debug_frame when that has none. */
static struct cfi *list_fdes(Elf *elf)
{
	Dwarf_Error err = NULL;
	uint64_t sec_len;
	const char *name = ".eh_frame";
	struct cfi *cfi = calloc(1, sizeof(*cfi));
	bool sorted = true;
	Elf_Data *d;
	GElf_Shdr sh;
	int rc;

	if (!cfi)
		return NULL;
	if (dwarf_elf_init(elf, DW_DLC_READ, NULL, NULL, &cfi->dbg, &err) !=
	    DW_DLV_OK) {
		/* Documented: an error from a failed init is freed with a
		 * NULL Dwarf_Debug (duplicate sections give one). */
		if (err)
			dwarf_dealloc(NULL, err, DW_DLA_ERROR);
		free(cfi);
		return NULL;
	}
	/* libdwarf files each allocation in a search tree, so that
	 * dwarf_finish() can free what a caller forgot: over a quarter of
	 * this call's time for libLLVM's 95k FDEs.  It is on unless a
	 * command turned it off (cfi__set_leak_tracking): with it off,
	 * fuzz_cfi found a crafted section whose list call leaks an
	 * allocation of libdwarf's own (40 bytes), which only the tree
	 * frees, and the daemon reads such files for as long as it runs. */
	rc = dwarf_get_fde_list_eh(cfi->dbg, &cfi->cie_data, &cfi->cie_count,
				   &cfi->fde_data, &cfi->fde_count, &err);
	if (rc != DW_DLV_OK) {
		if (rc == DW_DLV_ERROR)
			dwarf_dealloc(cfi->dbg, err, DW_DLA_ERROR);
		err = NULL;
		name = ".debug_frame";
		rc = dwarf_get_fde_list(cfi->dbg, &cfi->cie_data,
					&cfi->cie_count, &cfi->fde_data,
					&cfi->fde_count, &err);
		if (rc == DW_DLV_ERROR)
			dwarf_dealloc(cfi->dbg, err, DW_DLA_ERROR);
	}
	if (rc != DW_DLV_OK || cfi->fde_count <= 0 || cfi->cie_count <= 0)
		goto out_close;
	/* The section as libdwarf holds it: where the first FDE says it
	 * starts, of the size libdwarf read (or inflated it to). */
	{
		Dwarf_Ptr bytes;
		Dwarf_Unsigned blen;
		Dwarf_Off off;

		sec_len = held_size(elf, name);
		if (!sec_len ||
		    sec_len > CFI_MAX_SECTION_BYTES ||
		    dwarf_get_fde_range(cfi->fde_data[0], NULL, NULL, &bytes,
					&blen, NULL, NULL, &off, &err) !=
		    DW_DLV_OK || off > sec_len) {
			if (err)
				dwarf_dealloc(cfi->dbg, err, DW_DLA_ERROR);
			goto out_close;
		}
		cfi->sec = (const uint8_t *)bytes - off;
		cfi->sec_len = sec_len;
	}
	if (read_cies(cfi))
		goto out_close;
	cfi->fdes = calloc((size_t)cfi->fde_count, sizeof(*cfi->fdes));
	if (!cfi->fdes)
		goto out_close;
	for (Dwarf_Signed i = 0; i < cfi->fde_count; i++) {
		struct fde_entry *f = &cfi->fdes[cfi->nfdes];

		if (read_fde(cfi, cfi->fde_data[i], f))
			continue;
		sorted = sorted && (!cfi->nfdes || f[-1].lo <= f->lo);
		cfi->nfdes++;
	}
	if (sort_fdes(cfi, sorted))
		goto out_close;
	/* Where libelf's section holds the same bytes (no compression),
	 * the table needs nothing more of libdwarf: its lists and copy
	 * (about 200 bytes an FDE) go now. */
	d = section_data(elf, name, &sh);
	if (d && d->d_size == cfi->sec_len &&
	    !memcmp(d->d_buf, cfi->sec, cfi->sec_len)) {
		drop_dwarf(cfi);
		cfi->sec = d->d_buf;
	}
	return cfi;

out_close:
	cfi__close(cfi);
	return NULL;
}

/*
 * The table as a cfi_cache file: a header, the CIEs, the FDEs, in the
 * byte order of the machine that wrote it (the cache is the machine's
 * own).  Offsets are into the section the file is named after.
 */
#define IMAGE_MAGIC "ICPPDCFI"
#define IMAGE_VERSION 1

struct image_header {
	char magic[8];
	uint32_t version;
	uint32_t ncies;
	uint64_t nfdes;
	uint64_t sec_len;
};

struct image_cie {
	uint64_t code_align;
	int64_t data_align;
	uint32_t init_off, init_len;
	uint16_t ra_reg;
	uint8_t signal, broken;
	uint8_t pad[4];
};

_Static_assert(sizeof(struct fde_entry) == 32 &&
	       offsetof(struct fde_entry, ins_off) == 16 &&
	       offsetof(struct fde_entry, broken) == 28,
	       "fde_entry is the image's FDE, in the file as in memory");

static void *to_image(const struct cfi *cfi, size_t *len)
{
	size_t n = sizeof(struct image_header) +
		   cfi->ncies * sizeof(struct image_cie) +
		   cfi->nfdes * sizeof(struct fde_entry);
	uint8_t *img = calloc(1, n);
	struct image_header *h = (void *)img;
	struct image_cie *c = (void *)(h + 1);

	if (!img)
		return NULL;
	*h = (struct image_header){ .version = IMAGE_VERSION,
		.ncies = (uint32_t)cfi->ncies, .nfdes = cfi->nfdes,
		.sec_len = cfi->sec_len };
	memcpy(h->magic, IMAGE_MAGIC, sizeof(h->magic));
	for (size_t i = 0; i < cfi->ncies; i++) {
		const struct cie_entry *e = &cfi->cies[i];

		c[i] = (struct image_cie){ e->code_align, e->data_align,
			e->init_off, e->init_len, e->ra_reg, e->signal,
			e->broken, { 0 } };
	}
	memcpy(c + cfi->ncies, cfi->fdes, cfi->nfdes * sizeof(*cfi->fdes));
	*len = n;
	return img;
}

/* The table from cfi_cache file @t (held by the table, which checks its
 * FDEs where they lie and uses them there), for the @sec_len bytes at
 * @sec; NULL when the file is not a valid table of that section (every
 * count, order and offset in it is checked, as anything read from a
 * file), and @t is the caller's again. */
static struct cfi *from_image(struct cache_table *t, const uint8_t *sec,
			      size_t sec_len)
{
	uint8_t *img = t->buf;
	size_t len = t->len;
	struct image_header h;
	const struct image_cie *ic;
	struct fde_entry *fdes;
	struct cfi *cfi;

	if (len < sizeof(h))
		return NULL;
	memcpy(&h, img, sizeof(h));
	if (memcmp(h.magic, IMAGE_MAGIC, sizeof(h.magic)) ||
	    h.version != IMAGE_VERSION || h.sec_len != sec_len ||
	    !h.ncies || h.ncies > CFI_MAX_ENTRIES ||
	    !h.nfdes || h.nfdes > CFI_MAX_ENTRIES ||
	    len != sizeof(h) + h.ncies * sizeof(*ic) + h.nfdes * sizeof(*fdes))
		return NULL;
	ic = (const void *)(img + sizeof(h));
	/* 8-aligned: a mapping or malloc's buffer, a 32-byte header,
	 * 32-byte CIEs */
	fdes = (void *)(img + sizeof(h) + h.ncies * sizeof(*ic));
	cfi = calloc(1, sizeof(*cfi));
	if (!cfi)
		return NULL;
	cfi->sec = sec;
	cfi->sec_len = sec_len;
	cfi->cies = calloc(h.ncies, sizeof(*cfi->cies));
	if (!cfi->cies)
		goto out_close;
	cfi->ncies = h.ncies;
	for (size_t i = 0; i < h.ncies; i++) {
		struct image_cie c;

		memcpy(&c, &ic[i], sizeof(c));
		if (c.signal > 1 || c.broken > 1 || !c.code_align ||
		    c.init_off > sec_len || c.init_len > sec_len - c.init_off)
			goto out_close;
		cfi->cies[i] = (struct cie_entry){ c.code_align, c.data_align,
			c.init_off, c.init_len, c.ra_reg, c.signal, c.broken };
	}
	for (size_t i = 0; i < h.nfdes; i++) {
		const struct fde_entry *f = &fdes[i];

		if (f->lo >= f->hi || (i && f->lo < fdes[i - 1].hi) ||
		    f->broken > 1 || f->cie >= h.ncies ||
		    f->ins_off > sec_len || f->ins_len > sec_len - f->ins_off ||
		    (!f->broken && cfi->cies[f->cie].broken))
			goto out_close;
	}
	cfi->fdes = fdes;
	cfi->nfdes = h.nfdes;
	if (sort_fdes(cfi, true)) {
		cfi->fdes = NULL;	/* the image stays the caller's */
		goto out_close;
	}
	cfi->image = *t;
	cfi->cached = true;
	return cfi;

out_close:
	cfi__close(cfi);
	return NULL;
}

void cfi__file_of(const struct stat *st, struct cfi_file *f)
{
	*f = (struct cfi_file){ (uint64_t)st->st_dev, (uint64_t)st->st_ino,
		(uint64_t)st->st_size, st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
		st->st_ctim.tv_sec, st->st_ctim.tv_nsec };
}

int cfi__file(int fd, struct cfi_file *f)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	cfi__file_of(&st, f);
	return 0;
}

/* The cache's name for @file's section @sh: hashed under the cache's
 * key, so no one without it can name the file another's is read from. */
static uint64_t cache_key(struct cfi_cache *cache, const struct cfi_file *file,
			  const GElf_Shdr *sh)
{
	uint64_t k[10] = { file->dev, file->ino, file->size,
		(uint64_t)file->mtime_sec, (uint64_t)file->mtime_nsec,
		(uint64_t)file->ctime_sec, (uint64_t)file->ctime_nsec,
		sh->sh_offset, sh->sh_size, sh->sh_addr };

	return cfi_cache__key(cache, k, sizeof(k));
}

struct cfi *cfi__open(Elf *elf, struct cfi_cache *cache,
		      const struct cfi_file *file)
{
	uint64_t section_bytes = frame_section_bytes(elf);
	struct cache_table t;
	size_t len;
	Elf_Data *eh = NULL;
	uint64_t key = 0;
	struct cfi *cfi;
	GElf_Shdr sh;
	void *img;

	/* libdwarf copies the frame sections whole: a crafted file's
	 * sparse hole would cost as much memory as it claims */
	if (section_bytes > CFI_MAX_SECTION_BYTES)
		return NULL;
	if (cache && file && (eh = section_data(elf, ".eh_frame", &sh)) &&
	    eh->d_size >= CFI_CACHE_MIN_BYTES) {
		key = cache_key(cache, file, &sh);
		if (!cfi_cache__load(cache, CACHE_CFI, key, &t)) {
			cfi = from_image(&t, eh->d_buf, eh->d_size);
			if (!cfi)
				cfi_cache__release(&t);
			cfi_cache__checked(cache, CACHE_CFI, cfi != NULL);
			if (cfi) {
				cfi->section_bytes = section_bytes;
				return cfi;
			}
		}
	} else {
		eh = NULL;
	}
	/* ... and allocates for each entry (a cached table's counts are
	 * checked as it is read) */
	if (too_many_entries(elf))
		return NULL;
	cfi = list_fdes(elf);
	if (!cfi)
		return NULL;
	cfi->section_bytes = section_bytes;
	/* cached: what libdwarf listed of .eh_frame, read as libelf has
	 * it (the bytes of the file the next open looks it up by) */
	if (eh && cfi->sec == eh->d_buf && (img = to_image(cfi, &len))) {
		cfi_cache__store(cache, CACHE_CFI, key, img, len);
		free(img);
	}
	return cfi;
}

void cfi__close(struct cfi *cfi)
{
	if (!cfi)
		return;
	for (uint32_t i = cfi->last_built; cfi->rows && i;
	     i = cfi->rows[i - 1].built_before)
		free(cfi->rows[i - 1].rows);
	free(cfi->rows);
	free(cfi->scratch);
	if (cfi->image.buf)
		cfi_cache__release(&cfi->image);
	else
		free(cfi->fdes);
	free(cfi->cies);
	free(cfi->memo);
	page_index__exit(&cfi->pages);
	drop_dwarf(cfi);
	free(cfi);
}

bool cfi__cached(const struct cfi *cfi)
{
	return cfi && cfi->cached;
}

/* The section (libelf's, or libdwarf's copy with a Dwarf_Fde of about
 * 200 bytes per FDE), fde_entry, fde_rows and the rows. */
size_t cfi__bytes(const struct cfi *cfi)
{
	if (!cfi)
		return 0;
	return cfi->section_bytes + cfi->row_bytes +
	       cfi->nfdes * (sizeof(struct fde_entry) + sizeof(struct fde_rows) +
			     (cfi->dbg ? 200 : 0)) +
	       cfi->ncies * sizeof(struct cie_entry) +
	       (cfi->memo ? sizeof(struct memo) << MEMO_BITS : 0) +
	       page_index__bytes(&cfi->pages);
}

size_t cfi__nr_fdes(const struct cfi *cfi)
{
	return cfi ? cfi->nfdes : 0;
}

/* The FDE of @vaddr, or NULL; *@slot: the memo's entry that holds it
 * now (NULL: none), where find_row() keeps its row. */
static struct fde_entry *find_fde(struct cfi *cfi, uint64_t vaddr,
				  struct memo **slot)
{
	size_t lo = 0, hi = cfi ? cfi->nfdes : 0;
	struct memo *m = NULL;

	*slot = NULL;
	if (cfi && cfi->memo) {
		m = &cfi->memo[(vaddr * 0x9e3779b97f4a7c15ULL) >>
			       (64 - MEMO_BITS)];
		if (m->f && m->pc == vaddr) {
			*slot = m;
			return m->f;
		}
	}
	if (cfi)
		page_index__range(&cfi->pages, cfi->nfdes, vaddr, &lo, &hi);
	/* the ranges are sorted and apart: the first ending above vaddr
	 * is the one that holds it, if any does */
	lo = LOWER_BOUND(lo, hi, i, cfi->fdes[i].hi <= vaddr);
	if (lo < hi && vaddr >= cfi->fdes[lo].lo) {
		struct fde_entry *f = &cfi->fdes[lo];

		if (m)
			*m = (struct memo){ vaddr, f, NULL };
		*slot = m;
		return f;
	}
	return NULL;
}

int cfi__fde_range(struct cfi *cfi, uint64_t vaddr, uint64_t *lo,
		   uint64_t *hi)
{
	struct memo *m;
	const struct fde_entry *f = find_fde(cfi, vaddr, &m);

	if (!f)
		return -ENOENT;
	*lo = f->lo;
	*hi = f->hi;
	return 0;
}

/*
 * The rows of FDE @f, built in a scratch array and copied out to their
 * size.  Grown in place by doubling, they took 1.7 KB an FDE on average
 * where they need 1.1 (0.6 with struct row_rule's columns), and the
 * pages of that growth were touched first here: building every FDE of
 * cc1 took 4.1 us an FDE and left a table of 74 MB, 1.4 us and 29 MB so.
 * A daemon at 99 Hz meets thousands of FDEs for the first time in each
 * few seconds of a build (a tenth of its CPU was here; docs/record.md,
 * "CFI rows expanded per FDE, on first use").
 */
static int build_rows(struct cfi *cfi, struct fde_entry *f)
{
	const struct cie_entry *c = &cfi->cies[f->cie];
	const uint8_t *ins = cfi->sec + f->ins_off;
	struct cie_info ci = { .code_align = c->code_align,
		.data_align = c->data_align, .ra_reg = c->ra_reg,
		.init = cfi->sec + c->init_off, .init_len = c->init_len };
	struct cfa_state initial;
	struct interp in = { .pc = f->lo, .hi = f->hi, .rows = cfi->scratch,
		.cap = cfi->scratch_cap, .base = cfi->sec,
		.base_len = cfi->sec_len };
	struct cfa_row *rows;
	int ret;

	/* Registers no instruction mentions keep their caller's value. */
	in.st = (struct cfa_state){ .cfa = { .kind = RULE_UNSUPPORTED },
		.bp = { .kind = RULE_SAME }, .sp = { .kind = RULE_SAME },
		.ra = { .kind = RULE_SAME } };
	ret = cfi__run_program(&in, &ci, ci.init, ci.init + ci.init_len);
	if (ret)
		goto out;
	initial = in.st;
	in.initial = &initial;
	in.depth = 0;
	ret = cfi__run_program(&in, &ci, ins, ins + f->ins_len);
	if (!ret)
		ret = cfi__emit_row(&in, f->hi);	/* the last row, to hi */
	if (ret == -E2BIG && in.n)	/* a lying table: keep what fits */
		ret = 0;
	/* none: broken, never built again (nor listed twice); the last
	 * row to hi makes at least one where lo < hi, as checked */
	if (!ret && !in.n)
		ret = -EINVAL;
	if (ret)
		goto out;
	if (!(rows = malloc(in.n * sizeof(*rows)))) {
		ret = -ENOMEM;
		goto out;
	}
	memcpy(rows, in.rows, in.n * sizeof(*rows));
	cfi->rows[f - cfi->fdes] = (struct fde_rows){ rows,
		(uint32_t)in.n, cfi->last_built };
	cfi->last_built = (uint32_t)(f - cfi->fdes) + 1;
	cfi->row_bytes += in.n * sizeof(*rows);
out:
	if (in.cap > SCRATCH_ROWS) {
		free(in.rows);
		in.rows = NULL;
		in.cap = 0;
	}
	cfi->scratch = in.rows;
	cfi->scratch_cap = in.cap;
	return ret;
}

/* The row of @vaddr, building the FDE's rows on first use. */
static int find_row(struct cfi *cfi, uint64_t vaddr, const struct cfa_row **row,
		    const struct fde_entry **fde)
{
	struct memo *m;
	struct fde_entry *f = find_fde(cfi, vaddr, &m);
	const struct fde_rows *r;
	size_t lo;

	if (!f)
		return -ENOENT;
	if (fde)
		*fde = f;
	/* the row too: an FDE of a large function has hundreds, and the
	 * search of them missed the cache as the FDEs' did */
	if (m && m->row) {
		*row = m->row;
		return 0;
	}
	r = &cfi->rows[f - cfi->fdes];
	if (!r->rows && !f->broken) {
		int ret = build_rows(cfi, f);

		if (ret == -ENOMEM)
			return ret;
		if (ret)
			f->broken = 1;
	}
	if (f->broken || !r->nrows)
		return -EINVAL;
	/* the last row with pc <= vaddr (the first when none is) */
	lo = LOWER_BOUND((size_t)0, r->nrows, i, r->rows[i].pc <= vaddr);
	*row = &r->rows[lo ? lo - 1 : 0];
	if (m)
		m->row = *row;
	return 0;
}

static int row_cfa(const struct cfi *cfi, const struct cfa_row *r,
		   const struct cfi_regs *regs, const struct cfi_mem *mem,
		   uint64_t *cfa)
{
	switch (r->cfa.kind) {
	case RULE_REG_OFFSET:
		*cfa = (r->cfa.reg == DWARF_REG_SP ? regs->sp : regs->bp) +
		       (uint64_t)(int64_t)r->cfa.offset;
		return 0;
	case RULE_VAL_EXPR:
		return cfi__eval(cfi->sec + r->cfa.expr_off, r->cfa.expr_len,
				 regs, mem, NULL, cfa);
	default:
		return -ENOTSUP;
	}
}

int cfi__cfa(struct cfi *cfi, uint64_t vaddr, const struct cfi_regs *regs,
	     uint64_t *cfa)
{
	const struct cfa_row *r;
	int ret = find_row(cfi, vaddr, &r, NULL);

	return ret ? ret : row_cfa(cfi, r, regs, NULL, cfa);
}

/*
 * A register saved at @addr.  A slot below the sampled SP is dead: GCC
 * emits no .cfi_restore after the epilogue's "pop %rbp", so for the
 * instructions between that pop and the ret the rule still names the
 * slot the pop just read, and the register already holds the caller's
 * value.
 */
static int saved_value(const struct cfi_mem *mem, uint64_t addr,
		       uint64_t current, uint64_t *value)
{
	if (mem && addr < mem->start) {
		*value = current;
		if (mem->log)
			cfi__log_read(mem, CFI_READ_DEAD, 0);
		return 0;
	}
	return cfi__mem_read(mem, addr, value);
}

/* The caller's value of one register under rule @r. */
static int recover(const struct cfi *cfi, const struct row_rule *r,
		   uint64_t cfa, uint64_t current, const struct cfi_regs *regs,
		   const struct cfi_mem *mem, uint64_t *value)
{
	uint64_t addr, offset = (uint64_t)(int64_t)r->offset;
	bool ok = true;
	int ret;

	switch (r->kind) {
	case RULE_SAME:
		*value = current;
		return 0;
	case RULE_OFFSET:
		return saved_value(mem, cfa + offset, current, value);
	case RULE_VAL_OFFSET:
		*value = cfa + offset;
		return 0;
	case RULE_REG_OFFSET:
		*value = cfi__reg_value(regs, r->reg, &ok) + offset;
		return ok ? 0 : -ENOTSUP;
	case RULE_EXPR:
		ret = cfi__eval(cfi->sec + r->expr_off, r->expr_len, regs, mem,
				&cfa, &addr);
		return ret ? ret : saved_value(mem, addr, current, value);
	case RULE_VAL_EXPR:
		return cfi__eval(cfi->sec + r->expr_off, r->expr_len, regs, mem,
				 &cfa, value);
	default:
		return -ENOTSUP;
	}
}

int cfi__step(struct cfi *cfi, uint64_t vaddr, struct cfi_regs *regs,
	      const struct cfi_mem *mem, struct cfi_step *out)
{
	const struct fde_entry *f;
	const struct cfa_row *r;
	struct cfi_regs caller;
	int ret = find_row(cfi, vaddr, &r, &f);

	if (ret)
		return ret;
	out->signal = cfi->cies[f->cie].signal;
	ret = row_cfa(cfi, r, regs, mem, &out->cfa);
	if (ret)
		return ret;
	if (r->ra.kind == RULE_UNDEF)
		return CFI_OUTERMOST;
	/* Without a rule of its own, the caller's SP is the CFA. */
	if (r->sp.kind == RULE_SAME)
		caller.sp = out->cfa;
	else if ((ret = recover(cfi, &r->sp, out->cfa, regs->sp, regs, mem,
				&caller.sp)))
		return ret;
	if ((ret = recover(cfi, &r->bp, out->cfa, regs->bp, regs, mem,
			   &caller.bp)) ||
	    (ret = recover(cfi, &r->ra, out->cfa, regs->ip, regs, mem,
			   &caller.ip)))
		return ret;
	if (r->ra.kind == RULE_SAME)
		return -EINVAL;	/* would loop on the same frame */
	*regs = caller;
	return 0;
}
