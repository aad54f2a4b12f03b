/*
 * elfimage.c - the file is read whole; libelf parses it from memory
 * (symbols, sections, notes) and patches go to the same buffer at the
 * file offset of the virtual address, found through the section that
 * holds it.
 */
#include "binary/elfimage.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sys.h"

struct elf_image {
	uint8_t *data;		/* the whole file; patched in place */
	uint8_t *orig;		/* a copy libelf parses */
	size_t size;
	Elf *elf;
};

static int read_all(const char *path, uint8_t **data, size_t *size)
{
	int fd = sys__open(path, O_RDONLY, 0);
	struct stat st;
	size_t got = 0;
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		ret = S_ISREG(st.st_mode) ? -errno : -EINVAL;
		goto out;
	}
	*size = (size_t)st.st_size;
	*data = malloc(*size ? *size : 1);
	if (!*data) {
		ret = -ENOMEM;
		goto out;
	}
	while (got < *size) {
		ssize_t n = read(fd, *data + got, *size - got);

		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			free(*data);
			goto out;
		}
		got += (size_t)n;
	}
out:
	close(fd);
	return ret;
}

struct elf_image *elf_image__open(const char *path, char *err, size_t errlen)
{
	struct elf_image *img = calloc(1, sizeof(*img));
	GElf_Ehdr eh;
	int ret;

	if (!img) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	ret = read_all(path, &img->data, &img->size);
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, ret == -EINVAL ?
			 "not a regular file" : strerror(-ret));
		free(img);
		return NULL;
	}
	img->orig = malloc(img->size ? img->size : 1);
	if (!img->orig) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out_fail;
	}
	memcpy(img->orig, img->data, img->size);
	elf_version(EV_CURRENT);
	img->elf = elf_memory((char *)img->orig, img->size);
	if (!img->elf || elf_kind(img->elf) != ELF_K_ELF || !gelf_getehdr(img->elf, &eh)) {
		snprintf(err, errlen, "%s: not an ELF file", path);
		goto out_fail;
	}
	if (eh.e_machine != EM_X86_64 || gelf_getclass(img->elf) != ELFCLASS64) {
		snprintf(err, errlen, "%s: not an x86-64 ELF file (machine %u): "
			 "icppd arr rewrites x86-64 code only", path,
			 (unsigned)eh.e_machine);
		goto out_fail;
	}
	return img;
out_fail:
	elf_image__delete(img);
	return NULL;
}

void elf_image__delete(struct elf_image *img)
{
	if (!img)
		return;
	if (img->elf)
		elf_end(img->elf);
	free(img->orig);
	free(img->data);
	free(img);
}

/* The file offset of [vaddr, vaddr + n) in a PROGBITS section. */
static int file_offset(const struct elf_image *img, uint64_t vaddr, size_t n,
		       size_t *off)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(img->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_ALLOC))
			continue;
		/* Every sum is checked for wrap-around: a crafted st_size
		 * near 2^64 must not make the range look short. */
		if (vaddr < sh.sh_addr || vaddr - sh.sh_addr > sh.sh_size ||
		    n > sh.sh_size - (vaddr - sh.sh_addr) ||
		    sh.sh_offset > img->size ||
		    vaddr - sh.sh_addr > img->size - sh.sh_offset ||
		    n > img->size - sh.sh_offset - (vaddr - sh.sh_addr))
			continue;
		*off = sh.sh_offset + (vaddr - sh.sh_addr);
		return 0;
	}
	return -ENOENT;
}

/* The size of the function symbol at @vaddr (.symtab, else .dynsym). */
static int symbol_size(const struct elf_image *img, uint64_t vaddr,
		       size_t *size)
{
	for (int pass = 0; pass < 2; pass++) {
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;

		while ((scn = elf_nextscn(img->elf, scn))) {
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type !=
			    (pass ? SHT_DYNSYM : SHT_SYMTAB) || !sh.sh_entsize)
				continue;
			d = elf_getdata(scn, NULL);
			for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym s;

				if (gelf_getsym(d, (int)i, &s) &&
				    GELF_ST_TYPE(s.st_info) == STT_FUNC &&
				    s.st_value == vaddr && s.st_size) {
					*size = s.st_size;
					return 0;
				}
			}
		}
	}
	return -ENOENT;
}

int elf_image__function(const struct elf_image *img, uint64_t vaddr,
			const uint8_t **code, size_t *size)
{
	size_t off;

	if (symbol_size(img, vaddr, size) ||
	    file_offset(img, vaddr, *size, &off))
		return -ENOENT;
	*code = img->orig + off;
	return 0;
}

int elf_image__patch(struct elf_image *img, uint64_t vaddr,
		     const uint8_t *bytes, size_t n)
{
	size_t off;

	if (file_offset(img, vaddr, n, &off))
		return -ENOENT;
	memcpy(img->data + off, bytes, n);
	return 0;
}

size_t elf_image__build_id(const struct elf_image *img, uint8_t **id)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(img->elf, scn))) {
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		while (d && (off = gelf_getnote(d, off, &nh, &name_off,
						&desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name_off, "GNU", 4) &&
			    nh.n_descsz >= 1 &&
			    nh.n_descsz <= ELF_IMAGE_BUILD_ID_MAX &&
			    sh.sh_offset <= img->size &&
			    desc_off + nh.n_descsz <= img->size - sh.sh_offset) {
				*id = img->data + sh.sh_offset + desc_off;
				return nh.n_descsz;
			}
		}
	}
	return 0;
}

int elf_image__write(const struct elf_image *img, const char *path)
{
	int fd = sys__open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		      O_CLOEXEC, 0755);
	size_t done = 0;
	int ret = 0;

	if (fd < 0)
		return -errno;
	while (done < img->size) {
		ssize_t n = write(fd, img->data + done, img->size - done);

		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			break;
		}
		done += (size_t)n;
	}
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret)
		chmod(path, 0755);
	return ret;
}
