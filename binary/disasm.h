/*
 * disasm.h - Capstone, loaded at its first use (common/dynlib.h says
 * why): the functions the call-site scan and the frame analysis call.
 */
#ifndef ICPPD_BINARY_DISASM_H
#define ICPPD_BINARY_DISASM_H

#include <capstone/capstone.h>

struct disasm {
	__typeof__(cs_open) *open;
	__typeof__(cs_option) *option;
	__typeof__(cs_malloc) *malloc;
	__typeof__(cs_disasm) *disasm;
	__typeof__(cs_disasm_iter) *disasm_iter;
	__typeof__(cs_free) *free;
	__typeof__(cs_close) *close;
};

/* Capstone's functions, or NULL with why (one line, kept for the
 * process) in *@why. */
const struct disasm *disasm__capstone(const char **why);

#endif
