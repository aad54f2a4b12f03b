/*
 * elfimage.h - an x86-64 ELF file in memory, for activation record
 * resizing: the code bytes of a function (by its symbol), in-place
 * patches of those bytes and of the build-id note, and writing the
 * result as a new file.  Everything but the patched bytes is written
 * back byte for byte.
 */
#ifndef ICPPD_BINARY_ELFIMAGE_H
#define ICPPD_BINARY_ELFIMAGE_H

#include <stddef.h>
#include <stdint.h>

struct elf_image;

/* NULL with "PATH: why" in @err: unreadable, not ELF, not x86-64. */
struct elf_image *elf_image__open(const char *path, char *err, size_t errlen);
void elf_image__delete(struct elf_image *img);

/* The bytes of the function whose symbol starts at @vaddr (a pointer
 * into the image, valid until free) and their number.  -ENOENT when no
 * symbol with a size starts there or its bytes are not in the file. */
int elf_image__function(const struct elf_image *img, uint64_t vaddr,
			const uint8_t **code, size_t *size);

/* Overwrites @n bytes at virtual address @vaddr (inside one function's
 * code, see above).  0 or -ENOENT. */
int elf_image__patch(struct elf_image *img, uint64_t vaddr,
		     const uint8_t *bytes, size_t n);

/* The longest build-id accepted: GNU ld writes 20 bytes (sha1), 16 (md5)
 * or up to 20 with --build-id=0xHEX; a longer note is crafted. */
#define ELF_IMAGE_BUILD_ID_MAX 20

/* The GNU build-id: its bytes (into the image) and length, at most
 * ELF_IMAGE_BUILD_ID_MAX; 0 when none (or only a longer one). */
size_t elf_image__build_id(const struct elf_image *img, uint8_t **id);

/* Writes the image to @path (mode 0755, not following a symlink, not
 * over an existing file's other links).  0 or -errno. */
int elf_image__write(const struct elf_image *img, const char *path);

#endif
