/*
 * checked.c - what a writer's opening knows of the file's damage
 * without reading it whole: the state in which a writer of this user's
 * last left it whole (store__use_check_cache()).
 *
 * A writer reads every page for damage before a command runs under it
 * (PRAGMA quick_check, store.c's check_writable()), so that a record
 * into a damaged database fails before the command, not at its first
 * flush with the run lost.  That read costs about 3.5 ms of CPU a
 * megabyte (a 14 MB database of two g++ records: 45 ms of the 0.5 s a
 * 10 kHz record costs the recorder), so every record cost more as the
 * database grew: the records after the first paid for what the first
 * stored.
 *
 * A file's state is its device, inode, size, and modification and
 * change times (the change time no one but the kernel sets: any write,
 * by SQLite or not, moves it).  A store that found the file whole when
 * it opened it (read whole, or in the state kept) and closes it with no
 * error, its WAL folded into the file (no -wal left: no other
 * connection open), keeps the state it leaves in the cache directory,
 * one file a database (named by the keyed hash of its device and
 * inode); the next writer whose file is still in that state, its -wal
 * empty, skips the read.  A report's store, which writes what it
 * derives, keeps it too when it found it so: record, report, record
 * reads the file once.  What is not caught so: a page the disk itself
 * damaged since, which a read that meets it reports, as for a report;
 * and a write within the file system's timestamp granularity of the
 * close, of the same size, by a writer that is not SQLite.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "binary/cfi_cache.h"
#include "schema/store_int.h"

static struct cfi_cache *check_cache;

void store__use_check_cache(struct cfi_cache *cache)
{
	check_cache = cache;
}

struct file_state {
	uint64_t dev, ino, size;
	int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
};

/* @path's state (0), or -1 when it cannot be read. */
static int file_state(const char *path, struct file_state *fs)
{
	struct stat s;

	if (lstat(path, &s) || !S_ISREG(s.st_mode))
		return -1;
	*fs = (struct file_state){ (uint64_t)s.st_dev, (uint64_t)s.st_ino,
		(uint64_t)s.st_size, s.st_mtim.tv_sec, s.st_mtim.tv_nsec,
		s.st_ctim.tv_sec, s.st_ctim.tv_nsec };
	return 0;
}

/* Whether @path's WAL holds nothing: absent or empty. */
static bool wal_empty(const char *path)
{
	char wal[4200];
	struct stat s;

	if ((size_t)snprintf(wal, sizeof(wal), "%s-wal", path) >= sizeof(wal))
		return false;
	if (lstat(wal, &s))
		return errno == ENOENT;
	return S_ISREG(s.st_mode) && s.st_size == 0;
}

static uint64_t state_key(const struct cfi_cache *c,
			  const struct file_state *fs)
{
	uint64_t id[2] = { fs->dev, fs->ino };

	return cfi_cache__key(c, id, sizeof(id));
}

bool store__found_whole(const struct store *st)
{
	return st->left_whole;
}

bool store__checked_before(struct store *st)
{
	struct file_state now;
	struct cache_table t;
	bool same;

	if (!check_cache || file_state(st->path, &now) ||
	    !wal_empty(st->path) ||
	    cfi_cache__load(check_cache, CACHE_CHECKED,
			    state_key(check_cache, &now), &t))
		return false;
	/* the cache's file is read as untrusted: its length checked, and
	 * all it can say is "this state": a state it makes up matches
	 * no file but one in that state */
	same = t.len == sizeof(now) && !memcmp(t.buf, &now, sizeof(now));
	cfi_cache__checked(check_cache, CACHE_CHECKED, same);
	cfi_cache__release(&t);
	return same;
}

void store__keep_checked(struct store *st)
{
	struct file_state now, none = { 0 };
	bool whole;

	if (!check_cache || st->readonly || file_state(st->path, &now))
		return;
	/* a store that met an error (a damaged page among them) forgets
	 * the state kept before: the file may be in it still */
	whole = !st->err[0] && (st->left_whole || st->read_whole) &&
		wal_empty(st->path);
	if (!whole && !st->left_whole)
		return;		/* what was kept is not this state */
	/* a cache that cannot take it costs the next writer the read */
	(void)cfi_cache__store(check_cache, CACHE_CHECKED,
			       state_key(check_cache, &now),
			       whole ? &now : &none, sizeof(now));
}
