/*
 * lines.c - DWARF line tables as sorted arrays of (address, file, line)
 * rows per module; a lookup is a binary search for the last row at or
 * below the address, within its sequence.
 */
#include "binary/lines.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/module.h"
#include "common/grow.h"
#include "common/sys.h"

struct line_row {
	uint64_t addr;
	uint32_t file;		/* index into files */
	uint32_t line;		/* 0: end of a sequence */
};

struct line_module {
	char *path;
	struct line_row *rows;
	size_t nrows, rows_cap;
	char **files;
	size_t nfiles, files_cap;
};

struct lines {
	struct line_module *mods;
	size_t n, cap;
};

struct lines *lines__new(void)
{
	return calloc(1, sizeof(struct lines));
}

static void module_free(struct line_module *m)
{
	for (size_t i = 0; i < m->nfiles; i++)
		free(m->files[i]);
	free(m->files);
	free(m->rows);
	free(m->path);
}

void lines__free(struct lines *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++)
		module_free(&l->mods[i]);
	free(l->mods);
	free(l);
}

static uint32_t file_index(struct line_module *m, const char *name)
{
	for (size_t i = m->nfiles; i-- > 0;)	/* the last file is likely */
		if (!strcmp(m->files[i], name))
			return (uint32_t)i;
	if (grow(&m->files, &m->files_cap, m->nfiles + 1, sizeof(*m->files), 16))
		return UINT32_MAX;
	m->files[m->nfiles] = strdup(name);
	return m->files[m->nfiles] ? (uint32_t)m->nfiles++ : UINT32_MAX;
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

/* Reads the line tables of the ELF file at @path.  0 or -ENOENT. */
static int read_file(const char *path, struct line_module *m)
{
	Dwarf_Debug dbg;
	Dwarf_Unsigned next;
	Dwarf_Half type;
	int fd = sys__open(path, O_RDONLY, 0), ret = -ENOENT;
	Elf *elf;

	if (fd < 0)
		return -ENOENT;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || dwarf_elf_init(elf, DW_DLC_READ, NULL, NULL, &dbg, NULL) !=
	    DW_DLV_OK)
		goto out_elf;
	while (dwarf_next_cu_header_d(dbg, true, NULL, NULL, NULL, NULL, NULL,
				      NULL, NULL, NULL, &next, &type, NULL) ==
	       DW_DLV_OK) {
		Dwarf_Die cu;

		if (dwarf_siblingof_b(dbg, NULL, true, &cu, NULL) != DW_DLV_OK)
			continue;
		read_cu(dbg, cu, m);
		dwarf_dealloc(dbg, cu, DW_DLA_DIE);
	}
	dwarf_finish(dbg, NULL);
	ret = m->nrows ? 0 : -ENOENT;
out_elf:
	elf_end(elf);
	close(fd);
	return ret;
}

static int cmp_row(const void *a, const void *b)
{
	const struct line_row *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* at one address, an end of sequence before the next start */
	return (x->line != 0) - (y->line != 0);
}

static struct line_module *load(struct lines *l, const char *path,
				const char *build_id)
{
	struct line_module *m;
	char id[41];
	bool same;

	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->mods[i].path, path))
			return &l->mods[i];
	if (grow(&l->mods, &l->cap, l->n + 1, sizeof(*l->mods), 8))
		return NULL;
	m = &l->mods[l->n];
	*m = (struct line_module){ .path = strdup(path) };
	if (!m->path)
		return NULL;
	l->n++;
	same = !module__file_build_id(path, id, sizeof(id), NULL) &&
	       !strcmp(id, build_id);
	if (!same)
		return m;	/* no rows: never read another build */
	if (read_file(path, m) && build_id[0] && strlen(build_id) > 2) {
		char dbg[160];

		snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug",
			 build_id, build_id + 2);
		read_file(dbg, m);
	}
	if (m->nrows)
		qsort(m->rows, m->nrows, sizeof(*m->rows), cmp_row);
	return m;
}

int lines__find(struct lines *l, const char *path, const char *build_id,
		uint64_t vaddr, const char **file, unsigned *line)
{
	struct line_module *m = load(l, path, build_id);
	size_t lo = 0, hi;

	if (!m || !m->nrows)
		return -ENOENT;
	hi = m->nrows;
	while (lo < hi) {		/* first row above vaddr */
		size_t mid = (lo + hi) / 2;

		if (m->rows[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || !m->rows[lo - 1].line)
		return -ENOENT;
	*file = m->files[m->rows[lo - 1].file];
	*line = m->rows[lo - 1].line;
	return 0;
}
