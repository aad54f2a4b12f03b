/*
 * disasm.c - Capstone, loaded at its first use (disasm.h).
 */
#include "binary/disasm.h"

#include "common/dynlib.h"

/* Capstone's soname and package follow its API's major version. */
#define CS_STR(x) #x
#define CS_SONAME(major) "libcapstone.so." CS_STR(major)
#define CS_PACKAGE(major) "libcapstone" CS_STR(major)

static struct disasm fns;
static const struct dynlib_fn names[] = {
	DYNLIB_FN(struct disasm, open, cs_open),
	DYNLIB_FN(struct disasm, option, cs_option),
	DYNLIB_FN(struct disasm, malloc, cs_malloc),
	DYNLIB_FN(struct disasm, disasm, cs_disasm),
	DYNLIB_FN(struct disasm, disasm_iter, cs_disasm_iter),
	DYNLIB_FN(struct disasm, free, cs_free),
	DYNLIB_FN(struct disasm, close, cs_close),
};
static struct dynlib lib = {
	CS_SONAME(CS_API_MAJOR), CS_PACKAGE(CS_API_MAJOR), names,
	sizeof(names) / sizeof(names[0]), &fns,
};

const struct disasm *disasm__capstone(const char **why)
{
	if (dynlib__load(&lib)) {
		*why = lib.why;
		return NULL;
	}
	return &fns;
}
