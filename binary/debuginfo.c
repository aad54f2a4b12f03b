/*
 * debuginfo.c - a binary's separate debug file (debuginfo.h).
 *
 * The reads are bounded as the module's are: the debuglink section is
 * read up to 4 KiB, and every file is opened as a recorded path is (no
 * symlink anywhere in the path, a regular file, never blocking:
 * module.h).  A debuglink candidate is anyone's to place beside a
 * program a root daemon watches (an 8 GiB sparse file made a report
 * CRC 16 GiB: 40 s for one module), so it is judged by the cheapest
 * evidence first: a candidate that is no ELF file is none; one with a
 * build-id note is the module's debug file exactly when the notes
 * agree, with no CRC; only where either has no build-id is it CRC'd,
 * and then only up to DEBUGINFO_CRC_MAX bytes a file and
 * DEBUGINFO_CRC_BUDGET a process.  Each lookup's answer is kept for the
 * life of the process, by (directory, name, CRC, build-id).  Callers
 * run the lookup where a timeout bounds it (lines.h's worker).
 */
#define _GNU_SOURCE
#include "binary/debuginfo.h"

#include <elfutils/debuginfod.h>
#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "binary/module.h"
#include "common/dynlib.h"

#define DEBUGLINK_MAX_BYTES 4096
/* module.c keeps 20 bytes of build-id, as hex */
#define BUILD_ID_HEX 40
/* The most bytes CRC'd of one candidate, and by one process in all.  A
 * file CRC'd is one without a build-id note, which a current
 * toolchain's debug file does not lack (Debian's -dbgsym files have
 * one: they are never CRC'd). */
#define DEBUGINFO_CRC_MAX ((off_t)512 << 20)
#define DEBUGINFO_CRC_BUDGET ((off_t)2 << 30)
/* Debuglink lookups whose answers are kept (the oldest goes first). */
#define DEBUGINFO_CACHE 128

/* Whether the file at @path is a regular file with build-id @id. */
static bool has_build_id(const char *path, const char *id)
{
	char got[BUILD_ID_HEX + 1];

	return !module__file_build_id(path, got, sizeof(got), NULL) &&
	       !strcmp(got, id);
}

/* The .gnu_debuglink of the ELF file open at @fd: the file name into
 * @name, its CRC into *@crc.  0, or -1 when it has none. */
static int read_debuglink(int fd, char *name, size_t len, uint32_t *crc)
{
	Elf *elf = module__elf_begin(fd);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int ret = -1;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) ||
		    !(sname = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(sname, ".gnu_debuglink") ||
		    sh.sh_size > DEBUGLINK_MAX_BYTES ||
		    !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		n = strnlen(d->d_buf, d->d_size);
		/* the name, NUL, padding to 4, then the CRC */
		if (!n || n >= len || ((n + 4) & ~(size_t)3) + 4 > d->d_size ||
		    memchr(d->d_buf, '/', n))
			continue;
		memcpy(name, d->d_buf, n);
		name[n] = '\0';
		memcpy(crc, (const char *)d->d_buf + ((n + 4) & ~(size_t)3), 4);
		ret = 0;
		break;
	}
out:
	if (elf)
		elf_end(elf);
	return ret;
}

static off_t crc_spent;		/* bytes CRC'd by this process */

/* Whether the file at @path has CRC32 @crc (gdb's check of a debuglink
 * target whose build-id cannot be compared), within the bounds above. */
static bool has_crc(const char *path, uint32_t crc)
{
	int fd = module__open_recorded_fd(path, NULL);
	static unsigned char buf[1 << 16];
	uLong c = crc32(0, Z_NULL, 0);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) || st.st_size > DEBUGINFO_CRC_MAX ||
	    st.st_size > DEBUGINFO_CRC_BUDGET - crc_spent) {
		close(fd);
		return false;
	}
	crc_spent += st.st_size;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		c = crc32(c, buf, (uInt)n);
	close(fd);
	return n == 0 && (uint32_t)c == crc;
}

/* Whether @cand is the debug file of a binary with build-id @build_id
 * ("": unknown) whose debuglink says CRC @crc: an ELF file whose
 * build-id is the binary's, or, where either has none, whose CRC is the
 * link's. */
static bool is_debug_file(const char *cand, const char *build_id,
			  uint32_t crc)
{
	char got[BUILD_ID_HEX + 1];

	if (module__file_build_id(cand, got, sizeof(got), NULL))
		return false;	/* no regular ELF file, or a link */
	if (*build_id && *got)
		return !strcmp(got, build_id);
	return has_crc(cand, crc);
}

/* The debuglink lookups answered: @found "" for none. */
static struct link_answer {
	char *dir, *name, *build_id, *found;
	uint32_t crc;
} answers[DEBUGINFO_CACHE];
static size_t answers_next;

static struct link_answer *answer_of(const char *dir, const char *name,
				     uint32_t crc, const char *build_id)
{
	for (size_t i = 0; i < DEBUGINFO_CACHE; i++) {
		struct link_answer *a = &answers[i];

		if (a->dir && a->crc == crc && !strcmp(a->dir, dir) &&
		    !strcmp(a->name, name) && !strcmp(a->build_id, build_id))
			return a;
	}
	return NULL;
}

static void forget(struct link_answer *a)
{
	free(a->dir);
	free(a->name);
	free(a->build_id);
	free(a->found);
	*a = (struct link_answer){ 0 };
}

void debuginfo__forget(void)
{
	for (size_t i = 0; i < DEBUGINFO_CACHE; i++)
		forget(&answers[i]);
	answers_next = 0;
	crc_spent = 0;
}

static void keep_answer(const char *dir, const char *name, uint32_t crc,
			const char *build_id, const char *found)
{
	struct link_answer *a = &answers[answers_next];

	forget(a);
	*a = (struct link_answer){ strdup(dir), strdup(name),
		strdup(build_id), strdup(found), crc };
	if (!a->dir || !a->name || !a->build_id || !a->found) {
		forget(a);
		return;
	}
	answers_next = (answers_next + 1) % DEBUGINFO_CACHE;
}

/* The debuglink target, in gdb's folders: the binary's own, its .debug,
 * and /usr/lib/debug under its path. */
static bool by_link(const char *path, const char *build_id, char *out,
		    size_t len)
{
	char name[256], dir[4096];
	const char *slash = strrchr(path, '/');
	const struct link_answer *a;
	uint32_t crc;
	int fd = module__open_recorded_fd(path, build_id);
	int r;

	if (fd < 0)
		return false;
	r = read_debuglink(fd, name, sizeof(name), &crc);
	close(fd);
	if (r || !slash || (size_t)(slash - path) >= sizeof(dir))
		return false;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if ((a = answer_of(dir, name, crc, build_id))) {
		snprintf(out, len, "%s", a->found);
		return *out;
	}
	for (int i = 0; i < 3; i++) {
		int n = snprintf(out, len, i == 0 ? "%s/%s" : i == 1 ?
				 "%s/.debug/%s" : "/usr/lib/debug%s/%s", dir,
				 name);

		if (n > 0 && (size_t)n < len && strcmp(out, path) &&
		    is_debug_file(out, build_id, crc)) {
			keep_answer(dir, name, crc, build_id, out);
			return true;
		}
	}
	keep_answer(dir, name, crc, build_id, "");
	*out = '\0';
	return false;
}

/* libdebuginfod, loaded when a server is named (common/dynlib.h) */
static struct debuginfod_fns {
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
	__typeof__(debuginfod_end) *end;
} dbgd;
static const struct dynlib_fn dbgd_names[] = {
	DYNLIB_FN(struct debuginfod_fns, begin, debuginfod_begin),
	DYNLIB_FN(struct debuginfod_fns, find_debuginfo,
		  debuginfod_find_debuginfo),
	DYNLIB_FN(struct debuginfod_fns, end, debuginfod_end),
};
static struct dynlib dbgd_lib = {
	"libdebuginfod.so.1", "libdebuginfod1", dbgd_names,
	sizeof(dbgd_names) / sizeof(dbgd_names[0]), &dbgd,
};

/* debuginfod, when DEBUGINFOD_URLS names servers: the file it fetched
 * (or had cached) for @build_id. */
static bool by_debuginfod(const char *build_id, char *out, size_t len)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	debuginfod_client *client;
	char *path = NULL;
	int fd;

	if (!urls || !*urls || !*build_id || dynlib__load(&dbgd_lib))
		return false;
	client = dbgd.begin();
	if (!client)
		return false;
	fd = dbgd.find_debuginfo(client, (const unsigned char *)build_id, 0,
				 &path);
	dbgd.end(client);
	/* a server that did not answer (as opposed to one that has no such
	 * file) is not asked again by this process or its children (the
	 * lines worker): one DEBUGINFOD_TIMEOUT in all, not one a module */
	if (fd < 0 && fd != -ENOENT)
		unsetenv("DEBUGINFOD_URLS");
	if (fd < 0)
		return false;
	close(fd);
	snprintf(out, len, "%s", path ? path : "");
	free(path);
	return *out && has_build_id(out, build_id);
}

enum debuginfo_via debuginfo__find(const char *path, const char *build_id,
				   bool network, char *out, size_t len)
{
	size_t idlen = strlen(build_id);

	if (idlen >= 4 && idlen <= BUILD_ID_HEX &&
	    strspn(build_id, "0123456789abcdef") == idlen) {
		int n = snprintf(out, len, "/usr/lib/debug/.build-id/%.2s/%s.debug",
				 build_id, build_id + 2);

		if (n > 0 && (size_t)n < len && has_build_id(out, build_id))
			return DEBUGINFO_BUILD_ID;
	} else {
		build_id = "";
	}
	if (by_link(path, build_id, out, len))
		return DEBUGINFO_LINK;
	if (network && by_debuginfod(build_id, out, len))
		return DEBUGINFO_DEBUGINFOD;
	*out = '\0';
	return DEBUGINFO_NONE;
}
