/*
 * test_resize.c - resize__run() (arr/resize.h), icppd arr's whole job,
 * with no perf: this test program's own functions, written in assembly
 * with known prologues, and a training map written with SQL in which
 * leaf's samples under rz_a and rz_b collide at one height.  The job
 * pads one caller so that they separate, writes the copy with a new
 * build-id and registers it; the same seed again finds the copy known;
 * a map with nothing to gain, a binary with no training and OUT =
 * BINARY are refused with nothing written.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <link.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arr/resize.h"
#include "binary/module.h"
#include "schema/arr_store.h"
#include "schema/store.h"
#include "tests/tap.h"

/* Each: push %rbp; mov %rsp,%rbp; sub $0x20,%rsp; [call]; leave; ret,
 * a frame binary/frame.c can grow in place. */
#define RZ_FN(name, body)						\
	".globl " #name "\n.hidden " #name "\n.type " #name ",@function\n" \
	#name ":\n\tpush %rbp\n\tmov %rsp,%rbp\n\tsub $0x20,%rsp\n"	\
	body "\tleave\n\tret\n.size " #name ",.-" #name "\n"
__asm__(".text\n"
	RZ_FN(rz_leaf, "")
	RZ_FN(rz_a, "\tcall rz_leaf\n")
	RZ_FN(rz_b, "\tcall rz_leaf\n")
	RZ_FN(rz_top, "\tcall rz_a\n\tcall rz_b\n"));
void rz_leaf(void), rz_a(void), rz_b(void), rz_top(void);

static char dir[] = "/tmp/icppd-resize-XXXXXX";
static char db[PATH_MAX], out[PATH_MAX], self[PATH_MAX];
static uintptr_t bias;

static int main_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	bias = info->dlpi_addr;	/* the first object: the program */
	return 1;
}

static unsigned long long vaddr(void (*fn)(void))
{
	return (unsigned long long)((uintptr_t)fn - bias);
}

/* The training: rz_top -> rz_a -> rz_leaf and rz_top -> rz_b -> rz_leaf,
 * leaf at height 96 under both (@collide), or at 96 and 128; 10 samples
 * each. */
static int write_store(const char *build_id, bool collide)
{
	char err[256], sql[8192], *msg = NULL;
	struct store *st = store__open(db, err, sizeof(err));
	sqlite3 *h;
	int ret;

	if (!st)
		return -1;
	store__close(st);
	snprintf(sql, sizeof(sql),
		 "DELETE FROM path_nodes; DELETE FROM contexts;"
		 "DELETE FROM path_maps; DELETE FROM functions;"
		 "DELETE FROM modules;"
		 "INSERT INTO modules (id, path, build_id) VALUES (1, '%s', '%s');"
		 "INSERT INTO functions VALUES (21, 1, %llu, 'rz_top', 'rz_top'),"
		 " (22, 1, %llu, 'rz_a', 'rz_a'), (23, 1, %llu, 'rz_b', 'rz_b'),"
		 " (24, 1, %llu, 'rz_leaf', 'rz_leaf');"
		 "INSERT INTO path_maps (id, program_id, run_id) VALUES (1, 1, 0);"
		 "INSERT INTO contexts VALUES (1, 0, 21), (2, 1, 22), (3, 1, 23),"
		 " (4, 2, 24), (5, 3, 24);"
		 "INSERT INTO path_nodes VALUES (1, 1, 0, 21, 1, 0, 16, 1, 0, 20),"
		 " (2, 1, 1, 22, 2, 4101, 64, 2, 0, 10),"
		 " (3, 1, 1, 23, 3, 4106, 64, 2, 0, 10),"
		 " (4, 1, 2, 24, 4, 8201, 96, 3, 10, 10),"
		 " (5, 1, 3, 24, 5, 8301, %d, 3, 10, 10);",
		 self, build_id, vaddr(rz_top), vaddr(rz_a), vaddr(rz_b),
		 vaddr(rz_leaf), collide ? 96 : 128);
	ret = sqlite3_open(db, &h) || sqlite3_exec(h, sql, NULL, NULL, &msg);
	if (ret)
		fprintf(stderr, "# %s\n", msg ? msg : sqlite3_errmsg(h));
	sqlite3_free(msg);
	sqlite3_close(h);
	return ret ? -1 : 0;
}

static bool exists(const char *path)
{
	struct stat sb;

	return !stat(path, &sb);
}

static void test_resize(const char *build_id)
{
	struct resize_request q = { .db = db, .binary = self, .output = out,
				    .growth = 1.25, .target = 0.97, .seed = 1 };
	struct resize_outcome o;
	struct module *m;
	int64_t padded = 0, id;
	char err[256];
	struct store *st;

	is_int(resize__run(&q, &o), 0, "a collision to separate: resized");
	ok(!o.known, "... a new build");
	ok(o.res.precise_before < 1e-9 && o.res.precise_after > 19.9,
	   "... leaf's 20 samples go from ambiguous to precise (%g -> %g)",
	   o.res.precise_before, o.res.precise_after);
	for (size_t i = 0; i < o.nfuncs; i++)
		if (o.res.pads[i] && (!strcmp(o.funcs[i].name, "rz_a") ||
				      !strcmp(o.funcs[i].name, "rz_b")))
			padded++;
	is_int(padded, 1, "... one of the two callers is padded");
	m = module__open(out);
	ok(m && !strcmp(module__build_id(m), o.build_id) &&
	   strcmp(o.build_id, build_id),
	   "... the copy is written, with the new build-id %s", o.build_id);
	module__delete(m);
	st = store__open(db, err, sizeof(err));
	ok(st && !store__module_by_build(st, o.build_id, &id) && id > 1,
	   "... and registered in the store");
	store__close(st);
	resize__exit(&o);

	is_int(resize__run(&q, &o), 0, "the same seed again: 0");
	ok(o.known, "... the copy is known already");
	resize__exit(&o);
	unlink(out);

	q.output = self;
	is_int(resize__run(&q, &o), -1, "OUT = BINARY: refused");
	resize__exit(&o);

	q.output = out;
	q.binary = "/bin/sh";
	is_int(resize__run(&q, &o), -1, "a binary with no training: refused");
	ok(!exists(out), "... nothing written");
	resize__exit(&o);
}

int main(void)
{
	struct module *m;
	char build_id[2 * ELF_IMAGE_BUILD_ID_MAX + 1] = "";

	dl_iterate_phdr(main_bias, NULL);
	if (!mkdtemp(dir) || !realpath("/proc/self/exe", self))
		return 1;
	snprintf(db, sizeof(db), "%s/t.db", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	m = module__open(self);
	if (m)
		snprintf(build_id, sizeof(build_id), "%s", module__build_id(m));
	module__delete(m);
	if (!build_id[0]) {
		skip("this test program has no GNU build-id", "resize");
		rmdir(dir);
		return tap_done();
	}
	ok(!write_store(build_id, true), "a training map where leaf collides");
	test_resize(build_id);

	ok(!write_store(build_id, false), "a training map with no collision");
	{
		struct resize_request q = { .db = db, .binary = self,
			.output = out, .growth = 1.25, .target = 0.97 };
		struct resize_outcome o;

		is_int(resize__run(&q, &o), -1, "nothing to gain: refused");
		ok(!exists(out), "... nothing written");
		resize__exit(&o);
	}
	unlink(db);
	rmdir(dir);
	return tap_done();
}
