/*
 * fuzz_perfmap.c - /tmp/perf-PID.map files, as the collector reads a JIT
 * compiler's (module_cache__perfmap): the input is written to such a
 * file of a made-up pid, read, and each address the input's first bytes
 * name is looked up; a function found must start at or below it and
 * have a name.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "binary/module.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a pid no process has: only the file's name depends on it */
	int pid = 2000000000 + (int)(getpid() % 100000000);
	struct module_cache *c = module_cache__new();
	struct module *m;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
	if (!c || fd < 0 || write(fd, data, size) != (ssize_t)size) {
		if (fd >= 0)
			close(fd);
		module_cache__delete(c);
		return 0;
	}
	close(fd);
	m = module_cache__perfmap(c, pid, (uint32_t)getuid(), NULL);
	for (size_t i = 0; m && i + 8 <= size && i < 64; i += 8) {
		struct module_func f;
		uint64_t addr;

		memcpy(&addr, data + i, 8);
		if (!module__function(m, addr, &f) && (f.start > addr || !f.name))
			__builtin_trap();
	}
	/* the same file again: unchanged, so no new module */
	if (m && module_cache__perfmap(c, pid, (uint32_t)getuid(), m))
		__builtin_trap();
	module__release(m);
	module_cache__delete(c);
	unlink(path);
	return 0;
}
