/*
 * dynlib.h - a shared library loaded at its first use.
 *
 * libcurl, libdebuginfod and capstone serve export, debuginfod lookups
 * and call decoding, not what most commands do, yet linked they were
 * loaded by every icppd, record included: libdebuginfod brings the
 * GnuTLS build of libcurl beside the OpenSSL one that export uses, with
 * their TLS, Kerberos and LDAP libraries, 40 objects and 159,000
 * relocations in all.  `icppd --version` took 8.0 ms of CPU and 1,231
 * page faults so, 1.5 ms and 406 with the three loaded at first use
 * (perf stat -r 50).  So each module that uses one fills a table of the
 * functions it calls, typed by the library's own header, through
 * dynlib__load(), as elfutils' libdw loads libdebuginfod.
 */
#ifndef ICPPD_COMMON_DYNLIB_H
#define ICPPD_COMMON_DYNLIB_H

#include <stdbool.h>
#include <stddef.h>

struct dynlib_fn {
	const char *name;	/* the function's symbol */
	size_t off;		/* where its address goes in the table */
};

/* One library; define it static, with the first five fields. */
struct dynlib {
	const char *soname;	/* "libcurl.so.4": the ABI compiled for */
	const char *package;	/* the Debian package that holds it */
	const struct dynlib_fn *fns;
	size_t nfns;
	void *table;		/* a struct of function pointers */
	/* dynlib__load()'s */
	bool tried;
	int ret;
	char why[256];		/* why it failed: kept, one line */
};

#define DYNLIB_FN(type, field, symbol) { #symbol, offsetof(type, field) }

/*
 * Opens @l's library the first time (it stays open: its functions are
 * the table's) and stores each of its functions' addresses at its
 * offset in @l->table.  0, or -ENOENT with dlerror()'s line and
 * "(apt-get install PACKAGE)" in @l->why; every later call gives the
 * same answer.  Thread-safe.
 */
int dynlib__load(struct dynlib *l);

#endif
