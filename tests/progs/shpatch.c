/*
 * shpatch.c - crafts a real ELF file for the hostile-input tests: sets
 * one field of one section header, leaving everything else (and so the
 * dynamic loader's view, which uses no section headers) as it was.
 * Usage: shpatch FILE SECTION entsize|size|offset VALUE
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	FILE *f;
	Elf64_Ehdr eh;
	Elf64_Shdr sh, strsh;
	char name[64];

	if (argc != 5 || !(f = fopen(argv[1], "r+b"))) {
		fprintf(stderr, "usage: shpatch FILE SECTION entsize|size|offset VALUE\n");
		return 2;
	}
	if (fread(&eh, sizeof(eh), 1, f) != 1 ||
	    fseek(f, (long)(eh.e_shoff + eh.e_shstrndx * sizeof(sh)), SEEK_SET) ||
	    fread(&strsh, sizeof(strsh), 1, f) != 1)
		return 1;
	for (int i = 0; i < eh.e_shnum; i++) {
		long at = (long)(eh.e_shoff + (size_t)i * sizeof(sh));

		if (fseek(f, at, SEEK_SET) || fread(&sh, sizeof(sh), 1, f) != 1 ||
		    fseek(f, (long)(strsh.sh_offset + sh.sh_name), SEEK_SET) ||
		    !fgets(name, sizeof(name), f))
			return 1;
		if (strcmp(name, argv[2]))
			continue;
		if (!strcmp(argv[3], "entsize"))
			sh.sh_entsize = strtoull(argv[4], NULL, 0);
		else if (!strcmp(argv[3], "size"))
			sh.sh_size = strtoull(argv[4], NULL, 0);
		else if (!strcmp(argv[3], "offset"))
			sh.sh_offset = strtoull(argv[4], NULL, 0);
		else
			return 2;
		if (fseek(f, at, SEEK_SET) || fwrite(&sh, sizeof(sh), 1, f) != 1)
			return 1;
		return fclose(f) ? 1 : 0;
	}
	fprintf(stderr, "shpatch: %s: no section %s\n", argv[1], argv[2]);
	return 1;
}
