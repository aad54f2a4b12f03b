/*
 * test_dynlib.c - common/dynlib.h: a library and its functions loaded
 * at the first call, a missing library or function named in one line
 * with the package to install, and binary/disasm.h's Capstone.  This
 * program links what icppd links, so its own map says that capstone,
 * libcurl and libdebuginfod are not loaded before their first use.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "binary/disasm.h"
#include "common/dynlib.h"
#include "tests/tap.h"

struct libm_fns {
	double (*cos)(double);
	double (*sqrt)(double);
};

/* Whether a mapping of this process names @lib. */
static int mapped(const char *lib)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, lib))
			found = 1;
	fclose(f);
	return found;
}

static void test_not_linked(void)
{
	static const char *const libs[] = { "libcapstone", "libcurl",
					    "libdebuginfod" };

	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		is_int(mapped(libs[i]), 0, "%s is not loaded at start",
		       libs[i]);
}

static void test_load(void)
{
	static struct libm_fns m;
	static const struct dynlib_fn names[] = {
		DYNLIB_FN(struct libm_fns, cos, cos),
		DYNLIB_FN(struct libm_fns, sqrt, sqrt),
	};
	static struct dynlib lib = { "libm.so.6", "libc6", names, 2, &m };

	is_int(dynlib__load(&lib), 0, "libm loads");
	ok(m.cos && m.cos(0.0) == 1.0 && m.sqrt(16.0) == 4.0,
	   "its functions are the table's");
	m.cos = NULL;
	is_int(dynlib__load(&lib), 0, "a second call answers the same");
	ok(!m.cos, "without loading again");
}

static void test_missing(void)
{
	static struct libm_fns m;
	static const struct dynlib_fn names[] = {
		DYNLIB_FN(struct libm_fns, cos, cos),
		DYNLIB_FN(struct libm_fns, sqrt, icppd_no_such_function),
	};
	static struct dynlib none = { "libicppd-none.so.9", "icppd-none",
				      names, 2, &m };
	static struct dynlib nofn = { "libm.so.6", "libc6", names, 2, &m };

	is_int(dynlib__load(&none), -ENOENT, "a missing library: -ENOENT");
	ok(strstr(none.why, "libicppd-none.so.9") &&
	   strstr(none.why, "(apt-get install icppd-none)") &&
	   !strchr(none.why, '\n'), "named in one line with its package: %s",
	   none.why);
	is_int(dynlib__load(&none), -ENOENT, "and again");
	is_int(dynlib__load(&nofn), -ENOENT, "a missing function: -ENOENT");
	ok(strstr(nofn.why, "icppd_no_such_function") != NULL,
	   "named: %s", nofn.why);
}

static void test_capstone(void)
{
	static const uint8_t code[] = { 0x55, 0xc3 };	/* push %rbp; ret */
	const struct disasm *d;
	const char *why = NULL;
	cs_insn *ins = NULL;
	size_t n = 0;
	csh h;

	d = disasm__capstone(&why);
	ok(d != NULL, "capstone loads%s%s", why ? ": " : "", why ? why : "");
	if (!d)
		return;
	is_int(mapped("libcapstone"), 1, "and is mapped now");
	if (d->open(CS_ARCH_X86, CS_MODE_64, &h) == CS_ERR_OK) {
		n = d->disasm(h, code, sizeof(code), 0x1000, 0, &ins);
		ok(n == 2 && ins[0].id == X86_INS_PUSH &&
		   ins[1].id == X86_INS_RET && ins[1].address == 0x1001,
		   "it decodes push and ret through the table");
		if (n)
			d->free(ins, n);
		d->close(&h);
	} else {
		ok(0, "cs_open");
	}
}

int main(void)
{
	test_not_linked();
	test_load();
	test_missing();
	test_capstone();
	return tap_done();
}
