/*
 * fuzz_cfi.c - call frame information (binary/cfi.h) from any bytes:
 * the CFA and one unwinding step at addresses of the image, over a
 * stack copy that is the input's own bytes, and the register-only
 * DWARF expression evaluator.
 */
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "binary/cfi.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t probe[FUZZ_MAX_PROBES], value;
	struct cfi_regs regs = { 0x7ffd0000, 0x7ffd0100, 0x401000 };
	char *copy = malloc(size ? size : 1);
	struct cfi *cfi;
	Elf *elf;
	size_t n;

	if (!copy)
		return 0;
	(void)cfi__eval_expr(data, size < 64 ? size : 64, &regs, &value);
	memcpy(copy, data, size);
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, size);
	cfi = elf ? cfi__open(elf, NULL, NULL) : NULL;
	n = cfi ? fuzz_probes(data, size, probe) : 0;
	for (size_t i = 0; i < n; i++) {
		/* the stack: 512 bytes of the input from SP - 64 on */
		struct cfi_mem mem = { regs.sp - 64, data,
				       size < 512 ? size : 512 };
		struct cfi_regs r = regs;
		struct cfi_step step;
		uint64_t lo, hi, cfa;

		if (cfi__fde_range(cfi, probe[i], &lo, &hi))
			continue;
		if (probe[i] < lo || probe[i] >= hi)
			__builtin_trap();
		(void)cfi__cfa(cfi, probe[i], &regs, &cfa);
		(void)cfi__step(cfi, probe[i], &r, &mem, &step);
	}
	(void)cfi__bytes(cfi);
	cfi__close(cfi);
	if (elf)
		elf_end(elf);
	free(copy);
	return 0;
}
