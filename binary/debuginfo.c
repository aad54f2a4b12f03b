/*
 * debuginfo.c - a binary's separate debug file (debuginfo.h).
 *
 * The reads are bounded as the module's are: the debuglink section is
 * read up to 4 KiB, a candidate's CRC over at most DEBUGINFO_MAX_BYTES,
 * and every file is opened as a recorded path is (no symlink anywhere
 * in the path, a regular file, never blocking: module.h).
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
/* A debug file CRC'd whole: gdb's largest, chromium's, are some GB. */
#define DEBUGINFO_MAX_BYTES ((off_t)8 << 30)

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

/* Whether the file at @path has CRC32 @crc (gdb's check of a debuglink
 * target: the file's build-id may be absent). */
static bool has_crc(const char *path, uint32_t crc)
{
	int fd = module__open_recorded_fd(path, NULL);
	static unsigned char buf[1 << 16];
	uLong c = crc32(0, Z_NULL, 0);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) || st.st_size > DEBUGINFO_MAX_BYTES) {
		close(fd);
		return false;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		c = crc32(c, buf, (uInt)n);
	close(fd);
	return n == 0 && (uint32_t)c == crc;
}

/* The debuglink target, in gdb's folders: the binary's own, its .debug,
 * and /usr/lib/debug under its path. */
static bool by_link(const char *path, const char *build_id, char *out,
		    size_t len)
{
	char name[256], dir[4096];
	const char *slash = strrchr(path, '/');
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
	for (int i = 0; i < 3; i++) {
		int n = snprintf(out, len, i == 0 ? "%s/%s" : i == 1 ?
				 "%s/.debug/%s" : "/usr/lib/debug%s/%s", dir,
				 name);

		if (n > 0 && (size_t)n < len && strcmp(out, path) &&
		    has_crc(out, crc))
			return true;
	}
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
