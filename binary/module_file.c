/*
 * module_file.c - a mapping's file opened the way the kernel mapped it
 * (module__open_recorded()), and a module's code and dynamic sections
 * read again from its file (module__code(), module__dynamic()).
 */
#define _GNU_SOURCE
#include "binary/module_int.h"
#include "common/grow.h"
#include "common/search.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sys.h"

/* ---- opening a mapping's file as the kernel mapped it ---------------- */

/* The file behind @fd is the mapping's: a regular file with its inode
 * (and device, when @want_dev: a path we resolved ourselves, unlike a
 * map_files link, which the kernel resolves to the mapped file; btrfs
 * and overlayfs report another st_dev there than in the MMAP2 record). */
static int same_file(int fd, const struct module_origin *o, bool want_dev)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_ino != o->ino ||
	    (want_dev && st.st_dev != o->dev))
		return -ESTALE;
	return 0;
}

/* @pfd is an O_PATH descriptor: checked, then reopened for reading
 * through /proc/self/fd, so that nothing but the checked regular file is
 * ever opened (opening a FIFO blocks; opening a device can act). */
static int reopen_checked(int pfd, const struct module_origin *o,
			  bool want_dev)
{
	char self[64];
	int fd = -1, ret = same_file(pfd, o, want_dev);

	if (!ret) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
		fd = sys__open(self, O_RDONLY | O_NONBLOCK, 0);
		ret = fd < 0 ? -errno : same_file(fd, o, want_dev);
	}
	close(pfd);
	if (ret && fd >= 0)
		close(fd);
	return ret ? ret : fd;
}

/* @path under @dirfd with no symlink anywhere in it: the kernel's
 * mapping paths have none, so one is a swap.  RESOLVE_IN_ROOT when
 * @dirfd is a process's root. */
int module__open_path(int dirfd, const char *path, bool in_root)
{
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   (in_root ? RESOLVE_IN_ROOT : 0) };
	long fd = icppd_sys.openat2(dirfd, path, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)	/* before Linux 5.6 */
		fd = icppd_sys.openat(dirfd, in_root ? path + 1 : path,
				      O_PATH | O_NOFOLLOW, 0);
	return fd < 0 ? (errno == ELOOP ? -ESTALE : -errno) : (int)fd;
}

/*
 * In order: /proc/PID/map_files/START-END (the mapped file itself; root
 * only), the path inside /proc/PID/root (the process's mount namespace
 * and chroot), and the path as this process sees it, only when the
 * process is gone.  Each is checked against the mapping's inode.
 */
int module__open_mapped(const char *path, const struct module_origin *o)
{
	char p[96];
	int pfd, root;

	if (o->pid > 0 && o->end > o->start) {
		snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", o->pid,
			 (unsigned long long)o->start,
			 (unsigned long long)o->end);
		pfd = sys__open(p, O_PATH, 0);
		if (pfd >= 0)
			return reopen_checked(pfd, o, false);
	}
	if (o->pid > 0) {
		snprintf(p, sizeof(p), "/proc/%d/root", o->pid);
		root = sys__open(p, O_PATH | O_DIRECTORY, 0);
		if (root >= 0) {
			pfd = module__open_path(root, path, true);
			close(root);
			return pfd < 0 ? pfd : reopen_checked(pfd, o, true);
		}
	}
	pfd = module__open_path(AT_FDCWD, path, false);
	return pfd < 0 ? pfd : reopen_checked(pfd, o, true);
}

/*
 * A file a database recorded (a path the kernel reported as mapped), as
 * report and the exporter reopen it, often as root: with no symlink
 * anywhere in the path (the kernel's paths have none, so one is a
 * swap, to a root-only file say), a regular file, never blocking; and
 * with @build_id (not empty) the build-id recorded, or -ESTALE.
 */
int module__open_recorded_fd(const char *path, const char *build_id)
{
	struct module probe = { .path = (char *)path };
	char self[64];
	struct stat st;
	int pfd = module__open_path(AT_FDCWD, path, false), fd, ret = 0;

	if (pfd < 0)
		return pfd;
	/* not even opened unless a regular file: opening a device has
	 * effects of its own */
	if (fstat(pfd, &st) || !S_ISREG(st.st_mode)) {
		close(pfd);
		return -EINVAL;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = sys__open(self, O_RDONLY | O_NONBLOCK, 0);
	close(pfd);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		ret = -EINVAL;
	if (!ret && build_id && build_id[0]) {
		elf_version(EV_CURRENT);
		probe.elf = module__elf_begin(fd);
		ret = module__is_elf64(probe.elf);
		if (!ret) {
			module__read_build_id(&probe);
			if (strcmp(probe.build_id, build_id))
				ret = -ESTALE;
		}
		if (probe.elf)
			elf_end(probe.elf);
	}
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

struct module *module__open_recorded(const char *path, const char *build_id)
{
	struct module *m = module__alloc(path);
	int fd;

	if (!m)
		return NULL;
	fd = module__open_recorded_fd(path, build_id);
	if (fd < 0)
		m->error = fd;
	else
		module__analyse_fd(m, fd, true);
	return m;
}

/* A code section's bytes in the file, clipped to the executable
 * segment that loads them. */
struct code_range {
	uint64_t off, end, addr;
};

static int by_offset(const void *a, const void *b)
{
	const struct code_range *x = a, *y = b;

	return (x->off > y->off) - (x->off < y->off);
}

/*
 * The file bytes @elf's executable segments load, as disjoint ranges
 * sorted by offset in *@out (the caller frees it), so that each code
 * section finds its segment by binary search: a crafted file may have
 * as many segments as sections.  How many, or -ENOMEM.
 */
static long exec_ranges(Elf *elf, struct code_range **out)
{
	struct code_range *v = NULL;
	size_t n = 0, cap = 0, nph = 0, u = 0;

	*out = NULL;
	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || !ph.p_filesz ||
		    ph.p_offset + ph.p_filesz < ph.p_offset)
			continue;
		if (grow(&v, &cap, n + 1, sizeof(*v), 8)) {
			free(v);
			return -ENOMEM;
		}
		v[n++] = (struct code_range){ ph.p_offset,
					      ph.p_offset + ph.p_filesz, 0 };
	}
	if (n)
		qsort(v, n, sizeof(*v), by_offset);
	for (size_t i = 0; i < n; i++)	/* merged where they overlap */
		if (u && v[i].off <= v[u - 1].end)
			v[u - 1].end = v[i].end > v[u - 1].end ? v[i].end :
				       v[u - 1].end;
		else
			v[u++] = v[i];
	*out = v;
	return (long)u;
}

/* The end of the range of @segs (@n, from exec_ranges()) that holds
 * file offset @off; 0: none does. */
static uint64_t exec_segment_end(const struct code_range *segs, size_t n,
				 uint64_t off)
{
	/* the first range starting above @off */
	size_t lo = LOWER_BOUND((size_t)0, n, i, segs[i].off <= off);

	return lo && off < segs[lo - 1].end ? segs[lo - 1].end : 0;
}

/* Whether section @sh is one module__data() hands out. */
static bool is_data(const GElf_Shdr *sh)
{
	return (sh->sh_flags & SHF_ALLOC) && !(sh->sh_flags & SHF_EXECINSTR) &&
	       (sh->sh_type == SHT_PROGBITS || sh->sh_type == SHT_INIT_ARRAY ||
		sh->sh_type == SHT_FINI_ARRAY ||
		sh->sh_type == SHT_PREINIT_ARRAY);
}

/*
 * Each code section's bytes, once: only what an executable segment
 * loads (a section the program never maps is no code of it), and a
 * byte that overlapping sections share only the first time.  A crafted
 * file of 32 code sections over one 32 MiB hole was decoded 32 times
 * over, a gigabyte of copies; now at most its segments' bytes are read.
 * With @data, the data sections instead (is_data()), each byte once
 * alike, within the file.
 */
static int each_section(Elf *elf, bool data, module_code_fn fn, void *arg)
{
	struct code_range *v = NULL, *segs;
	size_t n = 0, cap = 0;
	long nsegs = exec_ranges(elf, &segs);
	Elf_Scn *scn = NULL;
	uint64_t done = 0;
	int ret = 0;

	if (nsegs < 0)
		return (int)nsegs;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		uint64_t end;

		if (!gelf_getshdr(scn, &sh) || !sh.sh_size)
			continue;
		if (data) {
			if (!is_data(&sh) ||
			    sh.sh_offset + sh.sh_size < sh.sh_offset)
				continue;
			end = sh.sh_offset + sh.sh_size;
		} else {
			if (sh.sh_type != SHT_PROGBITS ||
			    !(sh.sh_flags & SHF_EXECINSTR) ||
			    !(end = exec_segment_end(segs, (size_t)nsegs,
						     sh.sh_offset)))
				continue;
			if (sh.sh_size < end - sh.sh_offset)
				end = sh.sh_offset + sh.sh_size;
		}
		if (grow(&v, &cap, n + 1, sizeof(*v), 16)) {
			free(v);
			free(segs);
			return -ENOMEM;
		}
		v[n++] = (struct code_range){ sh.sh_offset, end, sh.sh_addr };
	}
	free(segs);
	if (n)
		qsort(v, n, sizeof(*v), by_offset);
	for (size_t i = 0; i < n && !ret; i++) {
		uint64_t from = v[i].off > done ? v[i].off : done;
		Elf_Data *d;

		if (from >= v[i].end)
			continue;
		done = v[i].end;
		/* libelf checks the range lies within the file */
		d = elf_getdata_rawchunk(elf, (int64_t)from, v[i].end - from,
					 ELF_T_BYTE);
		if (d && d->d_buf && d->d_size == v[i].end - from)
			ret = fn(arg, v[i].addr + (from - v[i].off),
				 d->d_buf, d->d_size);
	}
	free(v);
	return ret;
}

/* Each dynamic symbol of @elf's table @dynsym that names a function it
 * defines (not an IFUNC: its value is the resolver, not the code that
 * runs), then each relocation of a GOT slot to a named symbol. */
static int each_dynamic(Elf *elf, module_dynamic_fn fn, void *arg)
{
	Elf_Scn *scn = NULL;
	int ret = 0;

	while (!ret && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, link;
		Elf_Scn *ls;
		Elf_Data *d, *syms;
		size_t count;

		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_RELA))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		/* as in add_symbols: what the data holds, whatever the
		 * header claims */
		count = d->d_size / (sh.sh_type == SHT_RELA ?
				     sizeof(Elf64_Rela) : sizeof(Elf64_Sym));
		if (sh.sh_size / sh.sh_entsize < count)
			count = sh.sh_size / sh.sh_entsize;
		if (sh.sh_type == SHT_DYNSYM) {
			for (size_t i = 0; i < count && !ret; i++) {
				GElf_Sym s;
				const char *name;

				if (!gelf_getsym(d, (int)i, &s))
					break;
				if (GELF_ST_TYPE(s.st_info) != STT_FUNC ||
				    s.st_shndx == SHN_UNDEF || !s.st_value)
					continue;
				name = elf_strptr(elf, sh.sh_link, s.st_name);
				if (name && *name)
					ret = fn(arg, MODULE_EXPORT, s.st_value,
						 name);
			}
			continue;
		}
		/* a RELA section's symbols: the table its sh_link names */
		ls = elf_getscn(elf, sh.sh_link);
		if (!ls || !gelf_getshdr(ls, &link) ||
		    link.sh_type != SHT_DYNSYM ||
		    !(syms = elf_getdata(ls, NULL)))
			continue;
		for (size_t i = 0; i < count && !ret; i++) {
			GElf_Rela r;
			GElf_Sym s;
			const char *name;
			uint64_t type;

			if (!gelf_getrela(d, (int)i, &r))
				break;
			type = GELF_R_TYPE(r.r_info);
			if (type == R_X86_64_RELATIVE) {
				ret = fn(arg, MODULE_POINTER,
					 (uint64_t)r.r_addend, NULL);
				continue;
			}
			if ((type != R_X86_64_JUMP_SLOT &&
			     type != R_X86_64_GLOB_DAT &&
			     type != R_X86_64_64) ||
			    !GELF_R_SYM(r.r_info) ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s))
				continue;
			if (type == R_X86_64_64) {
				if (GELF_ST_TYPE(s.st_info) == STT_FUNC &&
				    s.st_shndx != SHN_UNDEF)
					ret = fn(arg, MODULE_POINTER,
						 s.st_value +
						 (uint64_t)r.r_addend, NULL);
				continue;
			}
			name = elf_strptr(elf, link.sh_link, s.st_name);
			if (name && *name)
				ret = fn(arg, MODULE_IMPORT, r.r_offset, name);
		}
	}
	return ret;
}

enum reread_what { REREAD_CODE, REREAD_DATA, REREAD_DYNAMIC };

/* Opens the module's file again (build-id checked), for @what: @code's
 * sections or @dynamic's. */
static int reread(struct module *m, enum reread_what what,
		  module_code_fn code, module_dynamic_fn dynamic, void *arg)
{
	struct module again = { .path = m->path };
	Elf *elf = m->elf;
	int fd = -1, ret = 0;

	if (m->error)
		return m->error;
	if (!m->image) {	/* in memory: every section is there */
		fd = m->cache ? module__open_mapped(m->path, &m->origin) :
				module__open_regular(m->path);
		if (fd < 0)
			return fd;
		elf = again.elf = module__elf_begin(fd);
		ret = module__is_elf64(elf);
		if (!ret) {
			module__read_build_id(&again);
			if (strcmp(again.build_id, m->build_id))
				ret = -ESTALE;
		}
	}
	if (!ret)
		ret = what == REREAD_DYNAMIC ? each_dynamic(elf, dynamic, arg) :
		      each_section(elf, what == REREAD_DATA, code, arg);
	if (again.elf)
		elf_end(again.elf);
	if (fd >= 0)
		close(fd);
	return ret;
}

int module__code(struct module *m, module_code_fn fn, void *arg)
{
	return reread(m, REREAD_CODE, fn, NULL, arg);
}

int module__data(struct module *m, module_code_fn fn, void *arg)
{
	return reread(m, REREAD_DATA, fn, NULL, arg);
}

int module__dynamic(struct module *m, module_dynamic_fn fn, void *arg)
{
	return reread(m, REREAD_DYNAMIC, NULL, fn, arg);
}

