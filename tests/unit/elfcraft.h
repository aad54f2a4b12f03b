/*
 * elfcraft.h - builds small x86-64 ELF files byte by byte, for the
 * crafted-input tests and the fuzz harnesses' seed corpus: any sections
 * with any header values (a symbol table whose sh_entsize exceeds its
 * size, a 12,000-byte build-id note, a symbol whose st_size wraps), one
 * PT_LOAD segment over the whole file, and .shstrtab added last.
 *
 * Nothing here checks what the caller asks for: crafting malformed
 * headers is the point.  Section data is laid out in order, each at an
 * 8-byte boundary; sh_offset is that place unless the caller gives one.
 */
#ifndef ICPPD_TESTS_ELFCRAFT_H
#define ICPPD_TESTS_ELFCRAFT_H

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ec_section {
	const char *name;
	uint32_t type;
	uint64_t flags, addr, entsize;
	uint32_t link, info;
	const void *data;
	size_t size;		/* bytes of @data written */
	uint64_t sh_size;	/* header value; 0: @size */
	uint64_t sh_offset;	/* header value; 0: where the data went */
};

struct ec_file {
	uint8_t *buf;
	size_t len;
};

static inline void ec_put(struct ec_file *f, size_t at, const void *p, size_t n)
{
	memcpy(f->buf + at, p, n);
}

/* Section 0 is the null section; @secs are 1..n and .shstrtab is n + 1.
 * The caller frees f->buf. */
static inline int ec_build(struct ec_file *f, const struct ec_section *secs,
			   int n)
{
	char shstr[1024] = "";
	size_t shlen = 1, off = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
	size_t name_at[64], data_at[64], shoff;
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph = { 0 };

	if (n > 62)
		return -1;
	for (int i = 0; i <= n; i++) {
		const char *nm = i < n ? secs[i].name : ".shstrtab";

		name_at[i] = shlen;
		memcpy(shstr + shlen, nm, strlen(nm) + 1);
		shlen += strlen(nm) + 1;
	}
	for (int i = 0; i < n; i++) {
		off = (off + 7) & ~(size_t)7;
		data_at[i] = off;
		off += secs[i].size;
	}
	data_at[n] = off;
	off += shlen;
	shoff = (off + 7) & ~(size_t)7;
	f->len = shoff + (size_t)(n + 2) * sizeof(Elf64_Shdr);
	f->buf = calloc(1, f->len);
	if (!f->buf)
		return -1;

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(Elf64_Ehdr);
	eh.e_shoff = shoff;
	eh.e_ehsize = sizeof(Elf64_Ehdr);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = 1;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = (uint16_t)(n + 2);
	eh.e_shstrndx = (uint16_t)(n + 1);
	ec_put(f, 0, &eh, sizeof(eh));
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_filesz = ph.p_memsz = f->len;
	ph.p_align = 0x1000;
	ec_put(f, sizeof(eh), &ph, sizeof(ph));

	for (int i = 0; i <= n; i++) {
		Elf64_Shdr sh = { 0 };

		sh.sh_name = (uint32_t)name_at[i];
		if (i < n) {
			const struct ec_section *s = &secs[i];

			if (s->size)
				ec_put(f, data_at[i], s->data, s->size);
			sh.sh_type = s->type;
			sh.sh_flags = s->flags;
			sh.sh_addr = s->addr;
			sh.sh_offset = s->sh_offset ? s->sh_offset : data_at[i];
			sh.sh_size = s->sh_size ? s->sh_size : s->size;
			sh.sh_link = s->link;
			sh.sh_info = s->info;
			sh.sh_entsize = s->entsize;
			sh.sh_addralign = s->type == SHT_NOTE ? 4 : 8;
		} else {
			ec_put(f, data_at[n], shstr, shlen);
			sh.sh_type = SHT_STRTAB;
			sh.sh_offset = data_at[n];
			sh.sh_size = shlen;
			sh.sh_addralign = 1;
		}
		ec_put(f, shoff + (size_t)(i + 1) * sizeof(sh), &sh, sizeof(sh));
	}
	return 0;
}

/* A GNU build-id note with @len bytes of id (0x11, 0x22, ...) into @out;
 * returns the note's size. */
static inline size_t ec_build_id_note(uint8_t *out, uint32_t len)
{
	Elf64_Nhdr nh = { 4, len, NT_GNU_BUILD_ID };

	memcpy(out, &nh, sizeof(nh));
	memcpy(out + sizeof(nh), "GNU", 4);
	for (uint32_t i = 0; i < len; i++)
		out[sizeof(nh) + 4 + i] = (uint8_t)(0x11 * (i + 1));
	return sizeof(nh) + 4 + ((len + 3) & ~3u);
}

/* A function symbol. */
static inline Elf64_Sym ec_func(uint32_t name, uint64_t value, uint64_t size)
{
	Elf64_Sym s = { 0 };

	s.st_name = name;
	s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	s.st_shndx = 1;
	s.st_value = value;
	s.st_size = size;
	return s;
}

#endif
