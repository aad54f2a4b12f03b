/*
 * dynlib.c - a shared library loaded at its first use (dynlib.h).
 */
#include "common/dynlib.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* One load at a time, and one per library. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* @why: dlerror()'s, which names the file */
static void fail(struct dynlib *l, const char *why)
{
	snprintf(l->why, sizeof(l->why), "%s (apt-get install %s)",
		 why ? why : l->soname, l->package);
	l->ret = -ENOENT;
}

static void load(struct dynlib *l)
{
	void *h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fail(l, dlerror());
		return;
	}
	for (size_t i = 0; i < l->nfns; i++) {
		void *fn = dlsym(h, l->fns[i].name);

		if (!fn) {
			fail(l, dlerror());
			dlclose(h);
			return;
		}
		/* POSIX: a function's address passes through void * */
		memcpy((char *)l->table + l->fns[i].off, &fn, sizeof(fn));
	}
	l->ret = 0;
}

int dynlib__load(struct dynlib *l)
{
	pthread_mutex_lock(&lock);
	if (!l->tried)
		load(l);
	l->tried = true;
	pthread_mutex_unlock(&lock);
	return l->ret;
}
