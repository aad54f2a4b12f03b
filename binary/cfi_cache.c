/*
 * cfi_cache.c - the directory of CFI tables (see cfi_cache.h): its key,
 * SipHash-2-4 over section bytes, and whole-file reads and atomic
 * writes that trust nothing they find there.
 *
 * Tuned for a few dozen files of up to a few MB, read once per run each:
 * a lookup is one open and one read; a store scans the directory to keep
 * it in its bound.
 */
#include "binary/cfi_cache.h"
#include "common/grow.h"
#include "common/sys.h"

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY_FILE "key"
/* Each kind's file names end so: trim() removes only such files. */
static const char *const suffixes[CACHE_NR_KINDS] = {
	[CACHE_CFI] = ".cfi",
	[CACHE_SYMBOLS] = ".sym",
	[CACHE_CALLS] = ".cal",
	[CACHE_CHECKED] = ".chk",
};
#define SUFFIX_LEN 4

struct cfi_cache {
	int dirfd;
	bool map;		/* cfi_cache__set_map() */
	uint64_t k0, k1;
	struct cfi_cache_stats stats[CACHE_NR_KINDS];
};

static uint64_t rotl(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

static void sip_round(uint64_t v[4])
{
	v[0] += v[1]; v[1] = rotl(v[1], 13); v[1] ^= v[0];
	v[0] = rotl(v[0], 32);
	v[2] += v[3]; v[3] = rotl(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = rotl(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = rotl(v[1], 17); v[1] ^= v[2];
	v[2] = rotl(v[2], 32);
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t x;

	memcpy(&x, p, sizeof(x));
	return le64toh(x);
}

/* SipHash-2-4 (Aumasson and Bernstein, 2012) of @len bytes at @data. */
static uint64_t siphash(uint64_t k0, uint64_t k1, const uint8_t *data,
			size_t len)
{
	uint64_t v[4] = { k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
			  k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL };
	uint64_t last = (uint64_t)len << 56;
	size_t i, whole = len & ~(size_t)7;

	for (i = 0; i < whole; i += 8) {
		uint64_t m = le64(data + i);

		v[3] ^= m;
		sip_round(v);
		sip_round(v);
		v[0] ^= m;
	}
	for (size_t j = 0; i + j < len; j++)
		last |= (uint64_t)data[i + j] << (8 * j);
	v[3] ^= last;
	sip_round(v);
	sip_round(v);
	v[0] ^= last;
	v[2] ^= 0xff;
	for (int r = 0; r < 4; r++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

uint64_t cfi_cache__key(const struct cfi_cache *c, const void *data,
			size_t len)
{
	return siphash(c->k0, c->k1, data, len);
}

/* A directory or file of ours alone: owned by the effective user,
 * writable by no one else. */
static bool ours(const struct stat *st)
{
	return st->st_uid == geteuid() && !(st->st_mode & 022);
}

/* mkdir -p @dir, mode 0700 for what it creates.  0 or -errno. */
static int make_dirs(const char *dir)
{
	char *p = strdup(dir), *s;
	int ret = 0;

	if (!p)
		return -ENOMEM;
	for (s = p + 1; ; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, 0700) && errno != EEXIST) {
			ret = -errno;
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return ret;
}

/* Reads exactly @len bytes from @fd.  0 or -errno (-EIO: short). */
static int read_all(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, (char *)buf + got, len - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		got += (size_t)r;
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		done += (size_t)w;
	}
	return 0;
}

/* Opens @name in the cache for reading: a regular file of ours, of at
 * most @max bytes (what fstat() said of it in *@st).  The descriptor, or
 * -errno. */
static int open_ours(int dirfd, const char *name, size_t max,
		     struct stat *st)
{
	int fd = icppd_sys.openat(dirfd, name, O_RDONLY | O_NOFOLLOW |
				  O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0);

	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	if (fstat(fd, st)) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	if (!S_ISREG(st->st_mode) || !ours(st)) {
		close(fd);
		return -EPERM;
	}
	if ((uint64_t)st->st_size > max) {
		close(fd);
		return -EFBIG;
	}
	return fd;
}

/* Writes @len bytes as @name, through a private temporary file: renamed
 * over @name, or linked to it when @exclusive (another writer's file
 * then stays: -EEXIST).  0 or -errno. */
static int publish(int dirfd, const char *name, const void *buf, size_t len,
		   bool exclusive)
{
	char tmp[64];
	int fd, ret;

	snprintf(tmp, sizeof(tmp), ".tmp.%ld.%s", (long)getpid(), name);
	unlinkat(dirfd, tmp, 0);	/* one a killed run of this pid left */
	fd = icppd_sys.openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL |
			      O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ret = write_all(fd, buf, len);
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && exclusive && linkat(dirfd, tmp, dirfd, name, 0))
		ret = -errno;
	if (!ret && !exclusive && renameat(dirfd, tmp, dirfd, name))
		ret = -errno;
	if (ret || exclusive)
		unlinkat(dirfd, tmp, 0);
	return ret;
}

/* The key: read, or made and published when absent. */
static int load_key(struct cfi_cache *c)
{
	uint8_t k[16];
	struct stat st;
	int ret, fd;

	for (int tries = 0; tries < 2; tries++) {
		fd = open_ours(c->dirfd, KEY_FILE, sizeof(k), &st);
		if (fd >= 0) {
			ret = (size_t)st.st_size == sizeof(k) ?
			      read_all(fd, k, sizeof(k)) : -EINVAL;
			close(fd);
			if (ret)
				return ret;
			c->k0 = le64(k);
			c->k1 = le64(k + 8);
			return 0;
		}
		if (fd != -ENOENT)
			return fd;
		if (getrandom(k, sizeof(k), 0) != (ssize_t)sizeof(k))
			return -EIO;
		ret = publish(c->dirfd, KEY_FILE, k, sizeof(k), true);
		if (ret && ret != -EEXIST)	/* EEXIST: another run's */
			return ret;
	}
	return -EIO;
}

int cfi_cache__open(const char *dir, struct cfi_cache **out)
{
	struct cfi_cache *c;
	struct stat st;
	int ret;

	if (!dir || !*dir)
		return -EINVAL;
	if ((ret = make_dirs(dir)))
		return ret;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->dirfd = sys__open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, 0);
	if (c->dirfd < 0) {
		ret = errno == ELOOP || errno == ENOTDIR ? -EPERM : -errno;
		goto out_free;
	}
	if (fstat(c->dirfd, &st)) {
		ret = -errno;
		goto out_close;
	}
	if (!ours(&st)) {
		ret = -EPERM;
		goto out_close;
	}
	if ((ret = load_key(c)))
		goto out_close;
	*out = c;
	return 0;

out_close:
	close(c->dirfd);
out_free:
	free(c);
	return ret;
}

void cfi_cache__close(struct cfi_cache *c)
{
	if (!c)
		return;
	close(c->dirfd);
	free(c);
}

static void file_name(enum cache_kind kind, uint64_t key, char name[32])
{
	snprintf(name, 32, "%016llx%s", (unsigned long long)key,
		 suffixes[kind]);
}

/* Whether @name (of @len bytes) is a file name of any kind's. */
static bool table_name(const char *name, size_t len)
{
	for (int k = 0; k < CACHE_NR_KINDS; k++)
		if (len > SUFFIX_LEN &&
		    !strcmp(name + len - SUFFIX_LEN, suffixes[k]))
			return true;
	return false;
}

void cfi_cache__set_map(struct cfi_cache *c, bool map)
{
	if (c)
		c->map = map;
}

int cfi_cache__load(struct cfi_cache *c, enum cache_kind kind, uint64_t key,
		    struct cache_table *t)
{
	char name[32];
	struct stat st;
	size_t size;
	void *b;
	int fd, ret;

	*t = (struct cache_table){ 0 };
	file_name(kind, key, name);
	fd = open_ours(c->dirfd, name, CFI_CACHE_MAX_FILE, &st);
	if (fd < 0)
		return fd;
	size = (size_t)st.st_size;
	if (size && c->map && sys__may_map(fd, &st)) {
		b = icppd_sys.mmap(NULL, size, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE, fd, 0);
		ret = b == MAP_FAILED ? -errno : 0;
		if (!ret)
			*t = (struct cache_table){ b, size, true };
	} else {	/* empty: read, for the caller's checks to refuse */
		b = malloc(size ? size : 1);
		ret = b ? read_all(fd, b, size) : -ENOMEM;
		if (!ret)
			*t = (struct cache_table){ b, size, false };
		else
			free(b);
	}
	if (!ret)
		futimens(fd, NULL);	/* used now: trimmed last */
	close(fd);
	return ret;
}

void cfi_cache__release(struct cache_table *t)
{
	if (t->buf && t->mapped)
		icppd_sys.munmap(t->buf, t->len);
	else
		free(t->buf);
	*t = (struct cache_table){ 0 };
}

/* Tables trim() lists at most. */
#define TRIM_MAX_LISTED ((size_t)1 << 20)

struct entry {
	struct timespec mtime;
	uint64_t size;
	char name[32];
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	return (x->mtime.tv_nsec > y->mtime.tv_nsec) -
	       (x->mtime.tv_nsec < y->mtime.tv_nsec);
}

/* Removes the tables used least recently while the directory's tables
 * hold more than CFI_CACHE_MAX_BYTES. */
static void trim(struct cfi_cache *c)
{
	int fd = dup(c->dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct entry *e = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		size_t nl = strlen(de->d_name);
		struct stat st;

		if (nl >= sizeof(e->name) || !table_name(de->d_name, nl) ||
		    fstatat(c->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		/* a directory of more tables than that is trimmed from
		 * the ones listed */
		if (n == TRIM_MAX_LISTED || grow(&e, &cap, n + 1, sizeof(*e), 64))
			break;
		e[n] = (struct entry){ st.st_mtim, (uint64_t)st.st_size, "" };
		memcpy(e[n++].name, de->d_name, nl + 1);
		total += (uint64_t)st.st_size;
	}
	closedir(d);
	if (total > CFI_CACHE_MAX_BYTES) {
		qsort(e, n, sizeof(*e), cmp_entry);
		for (size_t i = 0; i < n && total > CFI_CACHE_MAX_BYTES; i++)
			if (!unlinkat(c->dirfd, e[i].name, 0))
				total -= e[i].size;
	}
	free(e);
}

int cfi_cache__store(struct cfi_cache *c, enum cache_kind kind, uint64_t key,
		     const void *buf, size_t len)
{
	char name[32];
	int ret;

	if (len > CFI_CACHE_MAX_FILE)
		return -EFBIG;
	file_name(kind, key, name);
	ret = publish(c->dirfd, name, buf, len, false);
	if (ret)
		return ret;
	c->stats[kind].stores++;
	trim(c);
	return 0;
}

void cfi_cache__checked(struct cfi_cache *c, enum cache_kind kind, bool valid)
{
	if (valid)
		c->stats[kind].hits++;
	else
		c->stats[kind].rejected++;
}

void cfi_cache__stats(const struct cfi_cache *c, enum cache_kind kind,
		      struct cfi_cache_stats *s)
{
	*s = c ? c->stats[kind] : (struct cfi_cache_stats){ 0 };
}
