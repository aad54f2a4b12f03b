/*
 * closelib.c - opens libwork.so (beside the program), asks it to burn at
 * its close, and closes it: the burn runs under dlclose(), in
 * __cxa_finalize() called from crtstuff's __do_global_dtors_aux.
 * Usage: closelib [MS]   MS: CPU milliseconds of the burn (default 20)
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 16);
	char *slash;
	void *lib;
	void (*at_close)(void);
	uint64_t *ns;

	if (n <= 0)
		return 1;
	path[n] = '\0';
	if (!(slash = strrchr(path, '/')))
		return 1;
	strcpy(slash + 1, "libwork.so");
	if (!(lib = dlopen(path, RTLD_NOW)) ||
	    !(at_close = (void (*)(void))dlsym(lib, "lib_burn_at_close")) ||
	    !(ns = dlsym(lib, "burn_ns"))) {
		fprintf(stderr, "closelib: %s\n", dlerror());
		return 1;
	}
	if (argc > 1)	/* the library's own burn time */
		*ns = (uint64_t)(strtod(argv[1], NULL) * 1e6);
	at_close();
	dlclose(lib);
	return 0;
}
