/*
 * fuzz_notes.c - the GNU build-id note, read the two ways icppd reads
 * it: by the module loader (what the store keys builds by) and by the
 * ELF image that arr rewrites.  Both must stay within
 * ELF_IMAGE_BUILD_ID_MAX bytes whatever the note claims.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "binary/elfimage.h"
#include "binary/module.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct module *m = module__open_memory("fuzz", data, size);
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	char path[64], err[256];
	struct elf_image *img;
	uint8_t *id;

	if (m && strlen(module__build_id(m)) > 2 * ELF_IMAGE_BUILD_ID_MAX)
		__builtin_trap();
	module__delete(m);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		img = elf_image__open(path, err, sizeof(err));
		if (img && elf_image__build_id(img, &id) >
			   ELF_IMAGE_BUILD_ID_MAX)
			__builtin_trap();
		elf_image__delete(img);
	}
	close(fd);
	return 0;
}
