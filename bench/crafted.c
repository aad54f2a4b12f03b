/*
 * crafted.c - writes the files a local user maps to grow a root daemon,
 * for bench/attack.sh.  Each is a small ELF file that the kernel maps
 * and the daemon opens as a module:
 *   notes    32 note sections over one 32 MiB hole of a sparse 128 MiB
 *            file (libelf copied each whole: 1 GiB per file)
 *   symbols  65,000 function symbols that all name one 4,095-byte
 *            string (284 MB of names per 1.6 MB file)
 *   tables   a .symtab over a 768 MiB hole (libelf copied it whole at
 *            each open: 788 MB)
 *   sections 20 million sections declared by section 0 (libelf
 *            allocated for each: 10 GB)
 *   plain    one distinct small file each (a module each, held while
 *            mapped)
 *   builds   the same with a build-id note each, every one distinct
 * Usage: crafted KIND N DIR [FIRST]: writes DIR/KIND-FIRST.so ..
 * DIR/KIND-(FIRST+N-1).so (FIRST 0 by default), each file's contents
 * from its number.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/elfcraft.h"

#define HOLE (1u << 20)
#define HOLE_SIZE (32u << 20)
#define NSYMS 65000
#define NAME_LEN 4095

static int build(const char *kind, unsigned i, struct ec_file *f,
		 uint64_t *size)
{
	static uint8_t code[16] = { 0xc3 }, small[16];
	static Elf64_Sym syms[NSYMS + 1];
	static char strtab[NAME_LEN + 2];
	struct ec_section s[33];

	*size = 0;
	code[1] = (uint8_t)i;		/* distinct contents, for the eye */
	if (!strcmp(kind, "notes")) {
		for (int k = 0; k < 32; k++)
			s[k] = (struct ec_section){ ".note.x", SHT_NOTE,
				SHF_ALLOC, 0, 0, 0, 0, small, sizeof(small),
				HOLE_SIZE, HOLE };
		*size = HOLE + 4ull * HOLE_SIZE;
		return ec_build(f, s, 32);
	}
	if (!strcmp(kind, "symbols")) {
		memset(strtab + 1, 'x', NAME_LEN);
		for (size_t k = 1; k <= NSYMS; k++)
			syms[k] = (Elf64_Sym){ .st_name = 1,
				.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				.st_shndx = 1, .st_value = 0x1000 + 16 * k,
				.st_size = 16 };
		s[0] = (struct ec_section){ ".text", SHT_PROGBITS,
			SHF_ALLOC | SHF_EXECINSTR, 0x1000, 0, 0, 0, code,
			sizeof(code), 16 * (NSYMS + 2), 0 };
		s[1] = (struct ec_section){ ".symtab", SHT_SYMTAB, 0, 0,
			sizeof(Elf64_Sym), 3, 1, syms, sizeof(syms), 0, 0 };
		s[2] = (struct ec_section){ ".strtab", SHT_STRTAB, 0, 0, 0, 0,
			0, strtab, sizeof(strtab), 0, 0 };
		return ec_build(f, s, 3);
	}
	if (!strcmp(kind, "tables")) {
		s[0] = (struct ec_section){ ".symtab", SHT_SYMTAB, 0, 0,
			sizeof(Elf64_Sym), 2, 1, syms, sizeof(Elf64_Sym),
			24ull * HOLE_SIZE, HOLE };
		s[1] = (struct ec_section){ ".strtab", SHT_STRTAB, 0, 0, 0, 0,
			0, "\0f", 3, 0, 0 };
		*size = HOLE + 24ull * HOLE_SIZE;
		return ec_build(f, s, 2);
	}
	if (!strcmp(kind, "sections")) {
		Elf64_Ehdr eh;
		Elf64_Shdr sh0 = { .sh_size = 20000000 };
		int ret;

		s[0] = (struct ec_section){ ".text", SHT_PROGBITS,
			SHF_ALLOC | SHF_EXECINSTR, 0x1000, 0, 0, 0, code,
			sizeof(code), 0, 0 };
		if ((ret = ec_build(f, s, 1)))
			return ret;
		memcpy(&eh, f->buf, sizeof(eh));
		eh.e_shnum = 0;
		memcpy(f->buf, &eh, sizeof(eh));
		memcpy(f->buf + eh.e_shoff, &sh0, sizeof(sh0));
		*size = eh.e_shoff + 64 * sh0.sh_size;
		return 0;
	}
	if (!strcmp(kind, "builds")) {
		/* a GNU build-id note: namesz 4, descsz 20, type 3, "GNU",
		 * then 20 bytes that differ from file to file */
		static uint8_t note[16 + 20] = { 4, 0, 0, 0, 20, 0, 0, 0, 3, 0,
						 0, 0, 'G', 'N', 'U', 0 };

		memcpy(note + 16, &i, sizeof(i));
		memcpy(note + 16 + sizeof(i), "icppd-crafted-bld", 16);
		s[0] = (struct ec_section){ ".text", SHT_PROGBITS,
			SHF_ALLOC | SHF_EXECINSTR, 0x1000, 0, 0, 0, code,
			sizeof(code), 0, 0 };
		s[1] = (struct ec_section){ ".note.gnu.build-id", SHT_NOTE,
			SHF_ALLOC, 0x2000, 0, 0, 0, note, sizeof(note), 0, 0 };
		return ec_build(f, s, 2);
	}
	if (!strcmp(kind, "plain")) {
		s[0] = (struct ec_section){ ".text", SHT_PROGBITS,
			SHF_ALLOC | SHF_EXECINSTR, 0x1000, 0, 0, 0, code,
			sizeof(code), 0, 0 };
		return ec_build(f, s, 1);
	}
	return -1;
}

int main(int argc, char **argv)
{
	unsigned n, first = 0;

	if ((argc != 4 && argc != 5) || sscanf(argv[2], "%u", &n) != 1 ||
	    (argc == 5 && sscanf(argv[4], "%u", &first) != 1)) {
		fprintf(stderr, "usage: crafted notes|symbols|tables|sections|plain|builds N DIR [FIRST]\n");
		return 2;
	}
	for (unsigned i = first; i < first + n; i++) {
		char path[4096];
		struct ec_file f;
		uint64_t size;
		int fd;

		if (build(argv[1], i, &f, &size)) {
			fprintf(stderr, "crafted: unknown kind '%s'\n", argv[1]);
			return 2;
		}
		snprintf(path, sizeof(path), "%s/%s-%u.so", argv[3], argv[1], i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, f.buf, f.len) != (ssize_t)f.len ||
		    (size && ftruncate(fd, (off_t)size))) {
			perror(path);
			return 1;
		}
		close(fd);
		free(f.buf);
	}
	return 0;
}
