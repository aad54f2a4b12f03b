/*
 * lines.c - DWARF line tables as sorted arrays of (address, file, line)
 * rows per module; a lookup is a binary search for the last row at or
 * below the address, within its sequence.
 *
 * Where the file has .debug_aranges (the address ranges of each
 * compilation unit), a unit's line table is read only when a lookup
 * first falls in it: a profile asks for a few dozen addresses of libc,
 * whose debug file's line tables took most of a pprof export's time to
 * read whole.  Without aranges every unit is read at once.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/debuginfo.h"
#include "binary/module.h"
#include "common/grow.h"
#include "common/hindex.h"
#include "common/sys.h"

/* The longest one lookup may take (reading a unit's line table, or a
 * whole file's without aranges), and the workers a reader may lose
 * before it gives no more lines. */
#define LINES_TIMEOUT_MS 30000
#define LINES_MAX_DEATHS 4
#define LINES_PATH_MAX 4096
#define LINES_ID_MAX 128

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
	/* units still to read, by address (aranges), and the file open
	 * for them; ncus 0: every unit read */
	struct cu_range {
		uint64_t lo, hi;
		Dwarf_Off die;
		bool read;
	} *cus;
	size_t ncus;
	int fd;
	Elf *elf;
	Dwarf_Debug dbg;
};

/* The worker's modules. */
struct reader {
	struct line_module *mods;
	size_t n, cap;
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
};

/* One lookup, then the path and build-id (no terminating NULs). */
struct request {
	uint64_t vaddr;
	uint32_t path_len, id_len;
};

/* Its answer, then the file name (no terminating NUL). */
struct reply {
	int32_t ret;
	uint32_t line;
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
				start + len, die, false };
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

/* Opens the DWARF of the ELF file at @path, if it is the build
 * @build_id (module__open_recorded_fd()): its units' ranges kept for
 * reading on demand, or, without aranges, every unit's rows read now.
 * 0, or -ENOENT when it has no DWARF or is not that file. */
static int open_file(const char *path, const char *build_id,
		     struct line_module *m)
{
	Dwarf_Error err = NULL;
	Dwarf_Unsigned next;
	Dwarf_Half type;

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
	if (!read_aranges(m))
		return 0;
	while (dwarf_next_cu_header_d(m->dbg, true, NULL, NULL, NULL, NULL,
				      NULL, NULL, NULL, NULL, &next, &type,
				      NULL) == DW_DLV_OK) {
		Dwarf_Die cu;

		if (dwarf_siblingof_b(m->dbg, NULL, true, &cu, NULL) !=
		    DW_DLV_OK)
			continue;
		read_cu(m->dbg, cu, m);
		dwarf_dealloc(m->dbg, cu, DW_DLA_DIE);
	}
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
	if (m->nrows)
		qsort(m->rows, m->nrows, sizeof(*m->rows), cmp_row);
	return m;
}

/* Reads the rows of the unit whose range holds @vaddr, when there is
 * one not read yet, and sorts the rows again. */
static void read_unit_of(struct line_module *m, uint64_t vaddr)
{
	size_t lo = 0, hi = m->ncus;
	Dwarf_Die cu;

	while (lo < hi) {		/* the first range starting above */
		size_t mid = (lo + hi) / 2;

		if (m->cus[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges may nest or overlap (a unit's several ranges): look back
	 * over those that start at or below @vaddr */
	while (lo-- > 0) {
		struct cu_range *c = &m->cus[lo];

		if (vaddr >= c->hi)
			continue;
		if (c->read)
			return;
		c->read = true;
		if (dwarf_offdie_b(m->dbg, c->die, true, &cu, NULL) !=
		    DW_DLV_OK)
			continue;
		read_cu(m->dbg, cu, m);
		dwarf_dealloc(m->dbg, cu, DW_DLA_DIE);
		if (m->nrows)
			qsort(m->rows, m->nrows, sizeof(*m->rows), cmp_row);
		return;
	}
}

static int reader_find(struct reader *l, const char *path,
		       const char *build_id, uint64_t vaddr, const char **file,
		       unsigned *line)
{
	struct line_module *m = load(l, path, build_id);
	size_t lo = 0, hi;

	if (m && m->ncus)
		read_unit_of(m, vaddr);
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

/* The worker: answers each request on @sock until the socket closes. */
static void serve(int sock)
{
	char in[sizeof(struct request) + LINES_PATH_MAX + LINES_ID_MAX + 2];
	char out[sizeof(struct reply) + LINES_PATH_MAX];
	struct reader r = { 0 };
	ssize_t n;

	while ((n = recv(sock, in, sizeof(in) - 2, 0)) > 0) {
		struct request q;
		struct reply a = { -ENOENT, 0 };
		const char *file = NULL;
		size_t flen = 0;

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
			a.ret = reader_find(&r, path, id, q.vaddr, &file,
					    &a.line);
		}
		if (!a.ret) {
			flen = strnlen(file, LINES_PATH_MAX);
			memcpy(out + sizeof(a), file, flen);
		}
		memcpy(out, &a, sizeof(a));
		if (send(sock, out, sizeof(a) + flen, MSG_NOSIGNAL) < 0)
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
		close(sv[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		serve(sv[1]);
		_exit(0);
	}
	close(sv[1]);
	l->sock = sv[0];
	return 0;
}

/* The worker's answer to one request: 0 with the reply in @a and the
 * name in @name, -ENOENT, or -EPIPE when the worker is lost. */
static int ask(struct lines *l, const char *path, const char *build_id,
	       uint64_t vaddr, struct reply *a, char *name)
{
	char buf[sizeof(struct request) + LINES_PATH_MAX + LINES_ID_MAX];
	char in[sizeof(struct reply) + LINES_PATH_MAX];
	struct request q = { vaddr, (uint32_t)strlen(path),
			     (uint32_t)strlen(build_id) };
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
	    (n = recv(l->sock, in, sizeof(in), 0)) < (ssize_t)sizeof(*a))
		return -EPIPE;
	memcpy(a, in, sizeof(*a));
	n -= (ssize_t)sizeof(*a);
	memcpy(name, in + sizeof(*a), (size_t)n);
	name[n] = '\0';
	return a->ret ? -ENOENT : 0;
}

static bool is_bad(const struct lines *l, const char *path)
{
	for (size_t i = 0; i < l->nbad; i++)
		if (!strcmp(l->bad[i], path))
			return true;
	return false;
}

/* @name as a string @l keeps, one copy per name. */
static const char *keep_name(struct lines *l, const char *name)
{
	uint64_t h = hindex__string(name);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&l->names_index, &p, h)) != HINDEX_NONE)
		if (!strcmp(l->names[i], name))
			return l->names[i];
	if (l->nnames >= UINT32_MAX - 1 ||
	    grow(&l->names, &l->names_cap, l->nnames + 1, sizeof(*l->names),
		 64) ||
	    !(l->names[l->nnames] = strdup(name)))
		return NULL;
	if (hindex__insert(&l->names_index, h, (uint32_t)l->nnames)) {
		free(l->names[l->nnames]);
		return NULL;
	}
	return l->names[l->nnames++];
}

int lines__find(struct lines *l, const char *path, const char *build_id,
		uint64_t vaddr, const char **file, unsigned *line)
{
	char name[LINES_PATH_MAX + 1];
	struct reply a;
	int ret;

	if (l->deaths >= LINES_MAX_DEATHS || is_bad(l, path))
		return -ENOENT;
	ret = ask(l, path, build_id, vaddr, &a, name);
	if (ret == -EPIPE) {
		stop_worker(l);
		l->deaths++;
		if (!grow(&l->bad, &l->bad_cap, l->nbad + 1, sizeof(*l->bad),
			  8) && (l->bad[l->nbad] = strdup(path)))
			l->nbad++;
		return -ENOENT;
	}
	if (ret || !(*file = keep_name(l, name)))
		return -ENOENT;
	*line = a.line;
	return 0;
}

void lines__free(struct lines *l)
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
	hindex__free(&l->names_index);
	free(l);
}
