/*
 * fuzz_elfimage.c - the ELF image arr rewrites (binary/elfimage.h): the
 * code of each function a symbol names, its prologue decoded with
 * Capstone (binary/frame.h), and a patch of its "sub $N,%rsp".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "binary/elfimage.h"
#include "binary/frame.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t probe[FUZZ_MAX_PROBES];
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	char path[64], err[256];
	struct elf_image *img = NULL;
	size_t n;

	if (fd < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		img = elf_image__open(path, err, sizeof(err));
	}
	close(fd);
	n = img ? fuzz_probes(data, size, probe) : 0;
	for (size_t i = 0; i < n; i++) {
		struct frame_info fi;
		const uint8_t *code;
		uint8_t sub[8];
		size_t len;

		if (elf_image__function(img, probe[i], &code, &len))
			continue;
		if (len > size)
			__builtin_trap();
		frame__analyse(code, len, probe[i], &fi);
		if (fi.safe && !frame__encode_sub(fi.frame + 16, fi.sub_len,
						  sub))
			(void)elf_image__patch(img, fi.sub_vaddr, sub,
					       fi.sub_len);
	}
	elf_image__delete(img);
	return 0;
}
