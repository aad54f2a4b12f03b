/*
 * static_calls.c - a program's direct calls, from its binaries, into
 * the inference engine (see static_calls.h).
 */
#include "profile/static_calls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/callsites.h"
#include "binary/demangle.h"
#include "binary/module.h"
#include "common/grow.h"
#include "common/hindex.h"
#include "common/log.h"

struct fkey {
	int64_t module;
	uint64_t addr;
	int64_t id;
};

/* A function only the binary knows, by provisional id. */
struct provisional {
	int64_t module;
	uint64_t addr;
	char *name, *symbol;
	int64_t stored;		/* its store id once saved; 0: not yet */
};

struct scanned {
	int64_t module_id;
	struct module *m;
	struct callsites cs;
	bool ok;
	bool kept;		/* m and cs are the process's (below) */
};

/*
 * Binaries read, kept for the process's later inferences: an export of
 * a daemon's segments, or a record run and its export, infers the same
 * programs run after run, and reading a binary's calls is a large part
 * of an inference's cost (cc1's 33 MB of code: 0.6 s).
 * By path and the build-id the store recorded: what was read is that
 * build's calls, whatever the file holds now.  Bounded; kept until the
 * process exits.
 */
#define KEPT_MAX 64
static struct kept {
	char *path, *build_id;
	struct module *m;
	struct callsites cs;
} kept[KEPT_MAX];
static size_t nkept;

static struct kept *find_kept(const struct store_module *sm)
{
	for (size_t i = 0; i < nkept; i++)
		if (!strcmp(kept[i].path, sm->path) &&
		    !strcmp(kept[i].build_id, sm->build_id))
			return &kept[i];
	return NULL;
}

/* Hands @x's reading to the process, when there is room. */
static void keep(struct scanned *x, const struct store_module *sm)
{
	struct kept *k = &kept[nkept];

	if (nkept == KEPT_MAX || !(k->path = strdup(sm->path)))
		return;
	if (!(k->build_id = strdup(sm->build_id))) {
		free(k->path);
		return;
	}
	k->m = x->m;
	k->cs = x->cs;
	x->kept = true;
	nkept++;
}

struct static_calls {
	struct cct *t;
	int64_t first_free;	/* the first provisional id */
	struct fkey *funcs;
	size_t nfuncs, funcs_cap;
	struct hindex index;
	struct provisional *prov;
	size_t nprov, prov_cap;
	struct scanned *mods;
	size_t nmods, mods_cap;
	struct static_calls_stats stats;
	uint64_t limit, decoded;	/* code bytes: allowed, decoded */
	bool mangled;			/* names as the symbols spell them */
};

void static_calls__limit(struct static_calls *sc, uint64_t bytes)
{
	sc->limit = bytes;
}

struct static_calls *static_calls__new(struct cct *t, bool mangled)
{
	struct static_calls *sc = calloc(1, sizeof(*sc));

	if (sc) {
		sc->t = t;
		sc->mangled = mangled;
		sc->first_free = 1;
	}
	return sc;
}

void static_calls__free(struct static_calls *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < sc->nprov; i++) {
		free(sc->prov[i].name);
		free(sc->prov[i].symbol);
	}
	for (size_t i = 0; i < sc->nmods; i++) {
		if (sc->mods[i].kept)
			continue;
		callsites__free(&sc->mods[i].cs);
		module__free(sc->mods[i].m);
	}
	free(sc->prov);
	free(sc->mods);
	free(sc->funcs);
	hindex__free(&sc->index);
	free(sc);
}

static uint64_t fhash(int64_t module, uint64_t addr)
{
	return hindex__mix(hindex__mix(10, (uint64_t)module), addr);
}

int static_calls__function(struct static_calls *sc, int64_t id,
			   int64_t module_id, uint64_t address)
{
	if (grow(&sc->funcs, &sc->funcs_cap, sc->nfuncs + 1, sizeof(*sc->funcs),
		 1024) ||
	    hindex__insert(&sc->index, fhash(module_id, address),
			   (uint32_t)sc->nfuncs))
		return -ENOMEM;
	sc->funcs[sc->nfuncs++] = (struct fkey){ module_id, address, id };
	if (!sc->nprov && id >= sc->first_free)
		sc->first_free = id + 1;
	return 0;
}

/* The id of the function starting at @addr in @x: the store's, or a
 * provisional one.  0, -ENOENT (no function starts there), -ENOMEM. */
static int function_id(struct static_calls *sc, const struct scanned *x,
		       uint64_t addr, int64_t *id)
{
	struct hindex_probe p = { HINDEX_NONE, 0 };
	struct module_func f;
	struct provisional *pv;
	char label[512], name[1024];
	uint32_t i;

	while ((i = hindex__next(&sc->index, &p, fhash(x->module_id, addr))) !=
	       HINDEX_NONE)
		if (sc->funcs[i].module == x->module_id &&
		    sc->funcs[i].addr == addr) {
			*id = sc->funcs[i].id;
			return 0;
		}
	if (module__function(x->m, addr, &f) || f.start != addr)
		return -ENOENT;
	if (grow(&sc->prov, &sc->prov_cap, sc->nprov + 1, sizeof(*sc->prov),
		 256))
		return -ENOMEM;
	module__func_label(x->m, addr, f.name, label, sizeof(label));
	pv = &sc->prov[sc->nprov];
	*pv = (struct provisional){ x->module_id, addr, strdup(label),
		f.name ? strdup(f.name) : NULL, 0 };
	if (!pv->name || (f.name && !pv->symbol)) {
		free(pv->name);
		free(pv->symbol);
		return -ENOMEM;
	}
	*id = sc->first_free + (int64_t)sc->nprov++;
	/* named as the store's functions are, so that an inference read
	 * back shows what the one made now showed */
	if (cct__define(sc->t, *id, sc->mangled ? label :
			demangle__name(label, name, sizeof(name)),
			x->module_id, addr))
		return -ENOMEM;
	return static_calls__function(sc, *id, x->module_id, addr);
}

/* Whether @path is a JIT perf map, /tmp/perf-PID.map. */
static bool is_perfmap(const char *path)
{
	int pid, end = 0;

	return sscanf(path, "/tmp/perf-%d.map%n", &pid, &end) == 1 &&
	       end > 0 && !path[end];
}

/* Module @sm, read once (the caller has made room for it in sc->mods). */
static struct scanned *scan(struct static_calls *sc,
			    const struct store_module *sm)
{
	struct scanned *x;
	struct kept *k;

	for (size_t i = 0; i < sc->nmods; i++)
		if (sc->mods[i].module_id == sm->id)
			return &sc->mods[i];
	x = &sc->mods[sc->nmods++];
	*x = (struct scanned){ .module_id = sm->id };
	k = find_kept(sm);
	if (k) {
		x->m = k->m;
		x->cs = k->cs;
		x->ok = x->kept = true;
		sc->stats.modules++;
		return x;
	}
	/* JIT code (a perf map) has no instructions to read: no calls, and
	 * nothing unreadable either */
	if (is_perfmap(sm->path))
		return x;
	/* the vDSO has no file: the running kernel's image, by build-id */
	x->m = strcmp(sm->path, "[vdso]") ? module__open(sm->path) :
	       module__open_vdso();
	if (!x->m)
		return NULL;
	int err = module__error(x->m);
	bool same = !err && !strcmp(module__build_id(x->m), sm->build_id);

	if (same && sc->limit) {
		uint64_t start, end, off;

		if (!module__code_span(x->m, &start, &end, &off) &&
		    end > start) {
			if (sc->decoded + (end - start) > sc->limit) {
				sc->stats.over_budget++;
				return x;
			}
			sc->decoded += end - start;
		}
	}
	if (same) {
		int ret;

		log__progress("reading the direct calls of %s", sm->path);
		ret = callsites__scan(x->m, &x->cs);

		if (ret == -ENOMEM)
			return NULL;
		x->ok = !ret;
		err = ret;
	}
	if (x->ok) {
		sc->stats.modules++;
		keep(x, sm);
	} else {
		sc->stats.unreadable++;
		snprintf(sc->stats.unreadable_path,
			 sizeof(sc->stats.unreadable_path), "%s", sm->path);
		snprintf(sc->stats.unreadable_why,
			 sizeof(sc->stats.unreadable_why), "%s",
			 !same && !err ? "another build now" :
			 err == -ENOEXEC ? "not ELF" :
			 err == -EPROTO ? "not x86-64" : strerror(-err));
	}
	return x;
}

/* The function @name resolves to from @importer: the program's
 * executable first, then the other modules, the importer last. */
static int resolve(struct static_calls *sc, struct scanned *const *xs,
		   size_t n, const struct scanned *importer, const char *name,
		   int64_t *id)
{
	for (int last = 0; last < 2; last++)
		for (size_t i = 0; i < n; i++) {
			uint64_t addr;

			if ((xs[i] == importer) != last || !xs[i]->ok ||
			    callsites__export(&xs[i]->cs, name, &addr))
				continue;
			return function_id(sc, xs[i], addr, id);
		}
	return -ENOENT;
}

static int add_calls(struct static_calls *sc, struct infer *inf,
		     int64_t program_id, struct scanned *const *xs, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		const struct scanned *x = xs[k];

		for (size_t i = 0; x->ok && i < x->cs.n; i++) {
			const struct callsite *c = &x->cs.v[i];
			int64_t caller, callee;
			int ret = function_id(sc, x, c->caller, &caller);

			if (!ret)
				ret = c->import ?
				      resolve(sc, xs, n, x, c->import, &callee) :
				      function_id(sc, x, c->callee, &callee);
			if (!ret)
				ret = infer__add_call(inf, program_id, caller,
						      callee, c->delta);
			if (ret == -ENOMEM)
				return ret;
			sc->stats.calls += !ret;
		}
	}
	return 0;
}

int static_calls__program(struct static_calls *sc, struct infer *inf,
			  int64_t program_id,
			  const struct store_module *const *mods, size_t n)
{
	struct scanned **xs;
	int ret = 0;

	/* room for every module first: the pointers in xs stay valid */
	if (grow(&sc->mods, &sc->mods_cap, sc->nmods + n, sizeof(*sc->mods),
		 8) ||
	    !(xs = malloc((n ? n : 1) * sizeof(*xs))))
		return -ENOMEM;
	for (size_t i = 0; i < n && !ret; i++)
		if (!(xs[i] = scan(sc, mods[i])))
			ret = -ENOMEM;
	if (!ret)
		ret = add_calls(sc, inf, program_id, xs, n);
	free(xs);
	return ret;
}

int static_calls__store_id(struct static_calls *sc, struct store *st,
			   int64_t id, int64_t *out)
{
	struct provisional *pv;

	if (id < sc->first_free ||
	    id - sc->first_free >= (int64_t)sc->nprov) {
		*out = id;
		return 0;
	}
	pv = &sc->prov[id - sc->first_free];
	if (!pv->stored &&
	    store__function_row(st, pv->module, pv->addr, pv->name, pv->symbol,
				&pv->stored))
		return -1;
	*out = pv->stored;
	return 0;
}

const struct static_calls_stats *static_calls__stats(
	const struct static_calls *sc)
{
	return &sc->stats;
}
