/*
 * fuzz.h - what the libFuzzer harnesses share: addresses worth probing
 * in an ELF image that may be anything.
 *
 * The probes come from the input itself (entry point, executable
 * sections, symbol values), read with libelf on a copy, and are
 * bounded, so every input costs a bounded number of lookups.
 */
#ifndef ICPPD_TESTS_FUZZ_H
#define ICPPD_TESTS_FUZZ_H

#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_PROBES 256

static size_t fuzz_add(uint64_t *out, size_t n, uint64_t v)
{
	if (n < FUZZ_MAX_PROBES)
		out[n++] = v;
	return n;
}

/* Up to FUZZ_MAX_PROBES addresses of @data into @out; their number. */
static inline size_t fuzz_probes(const uint8_t *data, size_t size,
				 uint64_t *out)
{
	char *copy = malloc(size ? size : 1);
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t n = 0;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, size);
	if (elf && gelf_getehdr(elf, &eh))
		n = fuzz_add(out, n, eh.e_entry);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			break;
		if (sh.sh_flags & SHF_EXECINSTR) {
			n = fuzz_add(out, n, sh.sh_addr);
			n = fuzz_add(out, n, sh.sh_addr + sh.sh_size / 2);
			n = fuzz_add(out, n, sh.sh_addr + sh.sh_size - 1);
		}
		if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (int i = 0; i < 64; i++) {
			GElf_Sym sym;

			if (!gelf_getsym(d, i, &sym))
				break;
			n = fuzz_add(out, n, sym.st_value);
			n = fuzz_add(out, n, sym.st_value + 4);
		}
	}
	if (elf)
		elf_end(elf);
	free(copy);
	return n;
}

#endif
