/*
 * jitload.c - perf maps too large to parse in the sample loop, read on a
 * thread of their own.
 *
 * A JIT compiler's /tmp/perf-PID.map may hold millions of lines (up to
 * PERFMAP_MAX_BYTES); parsing one of 4 million lines stalled the sample
 * loop of the root daemon for 1.1 s, for every process it watches, and
 * the map's owner can rewrite it at will.  A map of at most
 * JIT_SYNC_BYTES is parsed at once (about a millisecond: its samples
 * are named from the first); a larger one goes to the loader thread,
 * one map at a time, and its process's samples stay unnamed
 * (CID_ANON_CODE) until the loop adopts the result.  The thread only
 * reads and parses (perfmap__read() touches no cache); opening, the
 * checks and the cache stay on the loop's thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "binary/module.h"
#include "collector/collector_int.h"

struct jit_loader {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	/* the job: set by the loop while idle, read by the thread */
	bool queued;
	uint32_t pid;
	struct perfmap_file file;
	/* the result, for the loop to take once done is set */
	struct module *m;
	atomic_bool busy, done;
};

static void *loader_main(void *arg)
{
	struct jit_loader *l = arg;

	pthread_mutex_lock(&l->lock);
	for (;;) {
		struct perfmap_file f;

		while (!l->queued && !l->stop)
			pthread_cond_wait(&l->wake, &l->lock);
		if (l->stop)
			break;
		f = l->file;
		l->queued = false;
		pthread_mutex_unlock(&l->lock);
		l->m = perfmap__read(&f);
		atomic_store_explicit(&l->done, true, memory_order_release);
		pthread_mutex_lock(&l->lock);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

static struct jit_loader *start(void)
{
	struct jit_loader *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->wake, NULL);
	if (pthread_create(&l->thread, NULL, loader_main, l)) {
		pthread_mutex_destroy(&l->lock);
		pthread_cond_destroy(&l->wake);
		free(l);
		return NULL;
	}
	return l;
}

int jitload__submit(struct collector *c, uint32_t pid, struct perfmap_file *f)
{
	struct jit_loader *l = c->jit ? c->jit : (c->jit = start());

	if (!l || atomic_load(&l->busy)) {
		close(f->fd);
		f->fd = -1;
		return l ? -EBUSY : -ENOMEM;
	}
	atomic_store(&l->busy, true);
	pthread_mutex_lock(&l->lock);
	l->pid = pid;
	l->file = *f;
	l->queued = true;
	pthread_cond_signal(&l->wake);
	pthread_mutex_unlock(&l->lock);
	return 0;
}

void jitload__collect(struct collector *c)
{
	struct jit_loader *l = c->jit;
	struct process *p;
	struct module *m;

	if (!l || !atomic_load_explicit(&l->done, memory_order_acquire))
		return;
	m = l->m;
	l->m = NULL;
	atomic_store(&l->done, false);
	atomic_store(&l->busy, false);
	p = space__find_proc(c, l->pid);
	if (!m)
		return;
	if (!p || p->ignored) {		/* gone, or no longer watched */
		module__delete(m);
		return;
	}
	m = module_cache__adopt(c->modules, m);
	if (m) {
		module__release(p->jit);
		p->jit = m;
	}
}

void jitload__stop(struct collector *c)
{
	struct jit_loader *l = c->jit;

	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	l->stop = true;
	pthread_cond_signal(&l->wake);
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->thread, NULL);
	if (l->queued)
		close(l->file.fd);
	if (l->m)
		module__delete(l->m);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->wake);
	free(l);
	c->jit = NULL;
}
