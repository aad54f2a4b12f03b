/*
 * static_calls.c - a program's direct calls, from its binaries, into
 * the inference engine (see static_calls.h).
 */
#include "profile/static_calls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/cfi_cache.h"
#include "binary/demangle.h"
#include "binary/module.h"
#include "common/grow.h"
#include "common/hindex.h"
#include "common/log.h"
#include "profile/build_calls.h"

/* A stored build's calls larger than this are not read: unpacking
 * takes up to 10 bytes of memory per byte (Debian 12's cc1plus packs
 * into 7.0 MB). */
#define BUILD_CALLS_MAX (64u << 20)

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
	struct build_calls bc;
	bool ok;
	bool kept;		/* bc is the process's (below) */
};

/*
 * Builds read, kept for the process's later inferences: an export of a
 * daemon's segments infers the same programs run after run, and even
 * unpacking a build's stored calls costs a little.  By build-id: what
 * was read is that build's calls, whatever a file holds now.  Bounded;
 * kept until the process exits.
 */
#define KEPT_MAX 64
static struct kept {
	char *build_id;
	struct build_calls bc;
} kept[KEPT_MAX];
static size_t nkept;

static struct kept *find_kept(const char *build_id)
{
	for (size_t i = 0; i < nkept; i++)
		if (!strcmp(kept[i].build_id, build_id))
			return &kept[i];
	return NULL;
}

/* Hands @x's reading to the process, when there is room. */
static void keep(struct scanned *x, const char *build_id)
{
	struct kept *k = &kept[nkept];

	if (nkept == KEPT_MAX || !*build_id ||
	    !(k->build_id = strdup(build_id)))
		return;
	k->bc = x->bc;
	x->kept = true;
	nkept++;
}

/* The machine's cache of builds' calls (static_calls__use_cache()). */
static struct cfi_cache *calls_cache;

void static_calls__use_cache(struct cfi_cache *c)
{
	calls_cache = c;
}

struct static_calls {
	struct cct *t;
	struct store *st;	/* where builds' calls are kept, or NULL */
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

struct static_calls *static_calls__new(struct cct *t, struct store *st,
				       bool mangled)
{
	struct static_calls *sc = calloc(1, sizeof(*sc));

	if (sc) {
		sc->t = t;
		sc->st = st;
		sc->mangled = mangled;
		sc->first_free = 1;
	}
	return sc;
}

void static_calls__delete(struct static_calls *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < sc->nprov; i++) {
		free(sc->prov[i].name);
		free(sc->prov[i].symbol);
	}
	for (size_t i = 0; i < sc->nmods; i++) {
		if (!sc->mods[i].kept)
			build_calls__exit(&sc->mods[i].bc);
	}
	free(sc->prov);
	free(sc->mods);
	free(sc->funcs);
	hindex__exit(&sc->index);
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
	const struct build_func *f;
	struct provisional *pv;
	char name[1024];
	uint32_t i;

	while ((i = hindex__next(&sc->index, &p, fhash(x->module_id, addr))) !=
	       HINDEX_NONE)
		if (sc->funcs[i].module == x->module_id &&
		    sc->funcs[i].addr == addr) {
			*id = sc->funcs[i].id;
			return 0;
		}
	if (!(f = build_calls__function(&x->bc, addr)))
		return -ENOENT;
	if (grow(&sc->prov, &sc->prov_cap, sc->nprov + 1, sizeof(*sc->prov),
		 256))
		return -ENOMEM;
	pv = &sc->prov[sc->nprov];
	*pv = (struct provisional){ x->module_id, addr, strdup(f->label),
		f->symbol ? strdup(f->label) : NULL, 0 };
	if (!pv->name || (f->symbol && !pv->symbol)) {
		free(pv->name);
		free(pv->symbol);
		return -ENOMEM;
	}
	*id = sc->first_free + (int64_t)sc->nprov++;
	/* named as the store's functions are, so that an inference read
	 * back shows what the one made now showed */
	if (cct__define(sc->t, *id, sc->mangled ? f->label :
			demangle__name(f->label, name, sizeof(name)),
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

/* @x's calls from the store, when it keeps @sm's build: 1 read, 0 not
 * there (or malformed: decoded again and replaced), -ENOMEM. */
static int from_store(struct static_calls *sc, const struct store_module *sm,
		      struct scanned *x)
{
	void *blob;
	size_t len;
	int ret;

	if (!sc->st || !*sm->build_id)
		return 0;
	ret = store__build_calls(sc->st, sm->build_id, BUILD_CALLS_MAX, &blob,
				 &len);
	if (ret <= 0) {
		if (ret)
			log_debug("%s", store__error(sc->st));
		return 0;
	}
	ret = build_calls__unpack(blob, len, &x->bc);
	free(blob);
	if (ret == -EINVAL)
		log_warn("%s: the calls stored for build %s are malformed: "
			 "reading the file again", sm->path, sm->build_id);
	else if (ret == -ESTALE)
		log_debug("%s: the calls stored for build %s are in another "
			  "version's format: reading the file again", sm->path,
			  sm->build_id);
	return ret == -ENOMEM ? ret : !ret;
}

/* Keeps @x's calls in the store for the next inference of the build; a
 * failure (a read-only or busy database) only costs decoding again. */
static void to_store(struct static_calls *sc, const struct store_module *sm,
		     const struct scanned *x)
{
	unsigned char *blob;
	size_t len;

	if (!sc->st || store__readonly(sc->st) || !*sm->build_id ||
	    build_calls__pack(&x->bc, &blob, &len))
		return;
	if (store__put_build_calls(sc->st, sm->build_id, blob, len))
		log_debug("%s", store__error(sc->st));
	free(blob);
}

static uint64_t cache_key(const char *build_id)
{
	return cfi_cache__key(calls_cache, build_id, strlen(build_id));
}

/* @x's calls from the machine's cache, when it has @sm's build: 1 read,
 * 0 not there (or not valid: decoded again and replaced), -ENOMEM.  The
 * file is read as untrusted: build_calls__unpack() checks it whole. */
static int from_cache(const struct store_module *sm, struct scanned *x)
{
	struct cache_table t;
	int ret;

	if (!calls_cache || !*sm->build_id ||
	    cfi_cache__load(calls_cache, CACHE_CALLS, cache_key(sm->build_id),
			    &t))
		return 0;
	ret = build_calls__unpack(t.buf, t.len, &x->bc);
	cfi_cache__release(&t);
	if (ret != -ENOMEM)
		cfi_cache__checked(calls_cache, CACHE_CALLS, !ret);
	return ret == -ENOMEM ? ret : !ret;
}

/* Keeps @x's calls in the machine's cache for every database's next
 * inference of the build; a failure only costs decoding again. */
static void to_cache(const struct store_module *sm, const struct scanned *x)
{
	unsigned char *blob;
	size_t len;

	if (!calls_cache || !*sm->build_id ||
	    build_calls__pack(&x->bc, &blob, &len))
		return;
	cfi_cache__store(calls_cache, CACHE_CALLS, cache_key(sm->build_id),
			 blob, len);
	free(blob);
}

/* Reads @x's calls from the file of @sm, when it is still that build
 * and within the limit.  -ENOMEM, else 0 with x->ok or the stats
 * saying why not. */
static int from_file(struct static_calls *sc, const struct store_module *sm,
		     struct scanned *x)
{
	/* the vDSO has no file: the running kernel's image, by build-id */
	struct module *m = strcmp(sm->path, "[vdso]") ?
			   module__open_recorded(sm->path, sm->build_id) :
			   module__open_vdso();
	int err;
	bool same;

	if (!m)
		return -ENOMEM;
	err = module__error(m);
	same = !err && !strcmp(module__build_id(m), sm->build_id);
	if (same && sc->limit) {
		uint64_t start, end, off;

		if (!module__code_span(m, &start, &end, &off) && end > start) {
			if (sc->decoded + (end - start) > sc->limit) {
				sc->stats.over_budget++;
				module__delete(m);
				return 0;
			}
			sc->decoded += end - start;
		}
	}
	if (same) {
		log__progress("reading the direct calls of %s", sm->path);
		err = build_calls__scan(m, &x->bc);
		x->ok = !err;
	}
	module__delete(m);
	if (err == -ENOMEM)
		return err;
	if (!x->ok) {
		sc->stats.unreadable++;
		snprintf(sc->stats.unreadable_path,
			 sizeof(sc->stats.unreadable_path), "%s", sm->path);
		snprintf(sc->stats.unreadable_why,
			 sizeof(sc->stats.unreadable_why), "%s",
			 !same && !err ? "another build now" :
			 err == -ENOEXEC ? "not ELF" :
			 err == -EPROTO ? "not x86-64" : strerror(-err));
	}
	return 0;
}

/* Module @sm, read once (the caller has made room for it in sc->mods):
 * from what this process read, the store, or the file. */
static struct scanned *scan(struct static_calls *sc,
			    const struct store_module *sm)
{
	struct scanned *x;
	struct kept *k;
	int ret;

	for (size_t i = 0; i < sc->nmods; i++)
		if (sc->mods[i].module_id == sm->id)
			return &sc->mods[i];
	x = &sc->mods[sc->nmods++];
	*x = (struct scanned){ .module_id = sm->id };
	if ((k = find_kept(sm->build_id))) {
		x->bc = k->bc;
		x->ok = x->kept = true;
		sc->stats.modules++;
		return x;
	}
	/* JIT code (a perf map) has no instructions to read: no calls, and
	 * nothing unreadable either */
	if (is_perfmap(sm->path))
		return x;
	ret = from_store(sc, sm, x);
	if (!ret && (ret = from_cache(sm, x)) > 0) {
		x->ok = true;
		to_store(sc, sm, x);
	} else if (!ret) {
		ret = from_file(sc, sm, x);
		if (!ret && x->ok) {
			to_store(sc, sm, x);
			to_cache(sm, x);
		}
	} else if (ret > 0) {
		x->ok = true;
	}
	if (ret < 0)
		return NULL;
	if (x->ok) {
		sc->stats.modules++;
		keep(x, sm->build_id);
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
			    callsites__export(&xs[i]->bc.cs, name, &addr))
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

		for (size_t i = 0; x->ok && i < x->bc.cs.n; i++) {
			const struct callsite *c = &x->bc.cs.v[i];
			int64_t caller, callee;
			int ret = function_id(sc, x, c->caller, &caller);

			if (!ret && c->callee == CALLSITE_INDIRECT &&
			    !c->import) {
				ret = infer__add_indirect(inf, program_id,
							  caller, c->delta);
				if (ret == -ENOMEM)
					return ret;
				sc->stats.calls += !ret;
				continue;
			}
			if (!ret)
				ret = c->import ?
				      resolve(sc, xs, n, x, c->import, &callee) :
				      function_id(sc, x, c->callee, &callee);
			if (!ret)
				ret = c->delta == CALLSITE_TAIL ?
				      infer__add_tail(inf, program_id, caller,
						      callee) :
				      infer__add_call(inf, program_id, caller,
						      callee, c->delta);
			if (ret == -ENOMEM)
				return ret;
			sc->stats.calls += !ret;
		}
		for (size_t i = 0; x->ok && i < x->bc.cs.ntaken; i++) {
			int64_t id;
			int ret = function_id(sc, x, x->bc.cs.taken[i], &id);

			if (!ret)
				ret = infer__add_taken(inf, program_id, id);
			if (ret == -ENOMEM)
				return ret;
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

const char *static_calls__unreadable(const struct static_calls_stats *c,
				     char *buf, size_t len)
{
	snprintf(buf, len, "%u binar%s not readable, so %s callers may stay "
		 "unknown: %s (%s)%s", c->unreadable,
		 c->unreadable > 1 ? "ies" : "y",
		 c->unreadable > 1 ? "their" : "its", c->unreadable_path,
		 c->unreadable_why, c->unreadable > 1 ? " and others" : "");
	return buf;
}
