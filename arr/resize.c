/*
 * resize.c - activation record resizing end to end (resize.h): the
 * training read, the frames analysed, the pads searched, the copy
 * written and registered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arr/resize.h"
#include "binary/module.h"
#include "common/clock.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/search.h"
#include "schema/arr_store.h"
#include "schema/report_store.h"
#include "schema/store.h"

/* The job's state besides what it hands back. */
struct job {
	const struct resize_request *q;
	struct resize_outcome *out;
	struct store *st;
	struct store_node *nodes;	/* the training map, ids ascending */
	size_t n, nodes_cap;
	struct arr_node *an;
	struct arr_func *af;
	int64_t *heights;		/* predicted */
};

static double pct(double part, double whole)
{
	return whole > 0 ? 100 * part / whole : 0;
}

static int add_node(void *arg, const struct store_node *n)
{
	struct job *j = arg;

	if (grow(&j->nodes, &j->nodes_cap, j->n + 1, sizeof(*j->nodes), 256))
		return -ENOMEM;
	j->nodes[j->n++] = *n;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int64_t func_index(const struct job *j, int64_t id)
{
	struct resize_outcome *o = j->out;
	size_t lo = LOWER_BOUND((size_t)0, o->nfuncs, i, o->funcs[i].id < id);

	return lo < o->nfuncs && o->funcs[lo].id == id ? (int64_t)lo : -1;
}

static int add_function(void *arg, const struct store_function *f)
{
	struct job *j = arg;
	struct resize_outcome *o = j->out;
	int64_t i = func_index(j, f->id);

	if (i >= 0) {
		o->funcs[i].module_id = f->module_id;
		o->funcs[i].address = f->address;
		o->funcs[i].name = strdup(f->name);
		if (!o->funcs[i].name)
			return -ENOMEM;
	}
	return 0;
}

/* The distinct functions of the map, sorted by id, with their names. */
static int load_functions(struct job *j)
{
	struct resize_outcome *o = j->out;
	int64_t *ids = malloc((j->n + 1) * sizeof(*ids));
	size_t k = 0;

	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < j->n; i++)
		ids[i] = j->nodes[i].function_id;
	qsort(ids, j->n, sizeof(*ids), cmp_i64);
	o->funcs = calloc(j->n + 1, sizeof(*o->funcs));
	if (!o->funcs) {
		free(ids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < j->n; i++)
		if (!k || ids[i] != o->funcs[k - 1].id)
			o->funcs[k++].id = ids[i];
	o->nfuncs = k;
	free(ids);
	return store__functions(j->st, add_function, j);
}

static void analyse(struct job *j, const struct elf_image *img)
{
	struct resize_outcome *o = j->out;

	for (size_t i = 0; i < o->nfuncs; i++) {
		struct resize_func *f = &o->funcs[i];
		const uint8_t *code;
		size_t size;

		if (f->module_id != o->program) {
			f->why = "in another module (a shared library)";
			continue;
		}
		if (elf_image__function(img, f->address, &code, &size)) {
			f->why = "no symbol with a size for its code";
			continue;
		}
		frame__analyse(code, size, f->address, &f->frame);
		f->why = f->frame.why;
	}
}

static int64_t node_index(const struct job *j, int64_t id)
{
	/* node ids ascend: parents first */
	size_t lo = LOWER_BOUND((size_t)0, j->n, i, j->nodes[i].id < id);

	return lo < j->n && j->nodes[lo].id == id ? (int64_t)lo : -1;
}

static int search(struct job *j, double growth, double target)
{
	struct resize_outcome *o = j->out;
	struct arr_opts ao = { j->q->seed ? j->q->seed : 1, target, growth, 0 };
	int64_t t0;

	j->an = calloc(j->n + 1, sizeof(*j->an));
	j->af = calloc(o->nfuncs + 1, sizeof(*j->af));
	j->heights = calloc(j->n + 1, sizeof(*j->heights));
	if (!j->an || !j->af || !j->heights)
		return -ENOMEM;
	for (size_t i = 0; i < j->n; i++) {
		const struct store_node *n = &j->nodes[i];

		j->an[i] = (struct arr_node){ n->parent_id ?
			node_index(j, n->parent_id) : -1,
			(uint32_t)func_index(j, n->function_id), n->height,
			(uint32_t)n->context_id, (double)n->self };
		if (n->parent_id && j->an[i].parent < 0)
			return -EINVAL;
	}
	for (size_t i = 0; i < o->nfuncs; i++)
		j->af[i] = (struct arr_func){ !o->funcs[i].why,
					      o->funcs[i].frame.max_pad };
	t0 = clock__mono_ns();
	if (arr__search(j->an, j->n, j->af, o->nfuncs, &ao, &o->res))
		return -ENOMEM;
	o->search_ms = (double)(clock__mono_ns() - t0) / 1e6;
	arr__heights(j->an, j->n, o->res.pads, j->heights);
	return 0;
}

/* Patches the prologues and derives the new build-id from the old one
 * and the pads (FNV-1a, spread over the id's length). */
static int rewrite(struct job *j, struct elf_image *img)
{
	struct resize_outcome *o = j->out;
	uint64_t h = 1469598103934665603ULL;
	uint8_t *id;
	size_t len = elf_image__build_id(img, &id);

	for (size_t i = 0; i < o->nfuncs; i++) {
		struct resize_func *f = &o->funcs[i];
		uint8_t sub[8];

		if (!o->res.pads[i])
			continue;
		if (frame__encode_sub(f->frame.frame + o->res.pads[i],
				      f->frame.sub_len, sub) ||
		    elf_image__patch(img, f->frame.sub_vaddr, sub,
				     f->frame.sub_len))
			return -ERANGE;
		for (int b = 0; b < 8; b++)
			h = (h ^ ((f->address ^
				   (uint64_t)o->res.pads[i] << 40) >>
				  (8 * b) & 0xff)) * 1099511628211ULL;
	}
	for (size_t b = 0; b < len; b++)
		h = (h ^ id[b]) * 1099511628211ULL;
	for (size_t b = 0; b < len; b++) {
		h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
		id[b] = (uint8_t)(h >> 56);
		snprintf(o->build_id + 2 * b, sizeof(o->build_id) - 2 * b,
			 "%02x", id[b]);
	}
	return 0;
}

/* OUT in the store: module, functions, the predicted map, results. */
static int register_out(struct job *j, const char *out_path)
{
	struct resize_outcome *o = j->out;
	struct arr_build_row b = { .original_id = o->program,
		.seed = (int64_t)(j->q->seed ? j->q->seed : 1),
		.samples = o->res.total,
		.precise_before = o->res.precise_before,
		.precise_after = o->res.precise_after, .paths = (int64_t)j->n,
		.paths_before = (int64_t)o->res.unique_before,
		.paths_after = (int64_t)o->res.unique_after,
		.deepest_before = o->res.deepest_before,
		.deepest_after = o->res.deepest_after,
		.inseparable = o->res.inseparable, .search_ms = o->search_ms };
	int64_t mod, map, *new_ids = calloc(j->n + 1, sizeof(*new_ids));
	int64_t *new_ctx = calloc(j->n + 1, sizeof(*new_ctx));
	int64_t *depth = calloc(j->n + 1, sizeof(*depth));

	if (!new_ids || !new_ctx || !depth || store__arr_begin(j->st))
		goto out_fail;
	if (store__arr_module(j->st, o->program, out_path, o->build_id, &mod) ||
	    store__arr_map(j->st, mod, &map))
		goto out_rollback;
	for (size_t i = 0; i < j->n; i++) {
		struct store_node n = j->nodes[i];
		int64_t p = j->an[i].parent;
		const struct resize_func *f = &o->funcs[j->an[i].func];

		if (f->module_id == o->program &&
		    (store__function_at(j->st, mod, f->address, &n.function_id) ||
		     !n.function_id))
			goto out_rollback;
		n.parent_id = p < 0 ? 0 : new_ids[p];
		n.height = j->heights[i];
		if (store__context(j->st, p < 0 ? 0 : new_ctx[p], n.function_id,
				   &new_ctx[i]))
			goto out_rollback;
		n.context_id = new_ctx[i];
		depth[i] = p < 0 ? 1 : depth[p] + 1;
		if (store__arr_node(j->st, map, &n, depth[i], &new_ids[i]))
			goto out_rollback;
		if (o->res.inseparable_node[i] &&
		    store__arr_inseparable(j->st, mod, j->nodes[i].context_id,
					   j->nodes[i].height,
					   (double)j->nodes[i].self))
			goto out_rollback;
	}
	for (size_t i = 0; i < o->nfuncs; i++)
		if (store__arr_function(j->st, mod, o->funcs[i].id,
					o->funcs[i].why ? -1 :
					o->funcs[i].frame.frame,
					o->res.pads[i], o->funcs[i].why))
			goto out_rollback;
	b.module_id = mod;
	b.max_growth = j->q->growth;
	if (store__arr_build(j->st, &b) || store__arr_commit(j->st))
		goto out_rollback;
	free(new_ids);
	free(new_ctx);
	free(depth);
	return 0;
out_rollback:
	store__arr_rollback(j->st);
out_fail:
	free(new_ids);
	free(new_ctx);
	free(depth);
	return -1;
}

static bool same_file(const char *a, const char *b)
{
	struct stat x, y;

	return !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/* The build's training (path map and functions) into @j.  0, or -1
 * after logging why. */
static int load_training(struct job *j, const char *bin,
			 const struct module *mod)
{
	struct resize_outcome *o = j->out;
	char err[600];
	int r;

	j->st = store__open(j->q->db, err, sizeof(err));
	if (!j->st) {
		log_error("%s", err);
		return -1;
	}
	r = store__module_by_build(j->st, module__build_id(mod), &o->program);
	if (!r)
		r = store__map_nodes(j->st, o->program, 0, add_node, j);
	if (r < 0) {
		log_error("%s", store__error(j->st));
		return -1;
	}
	if (r == STORE_NONE || !j->n) {
		log_error("%s: no training for this build (build-id %s) in %s: "
			  "run 'icppd train -d %s -- %s' first", bin,
			  module__build_id(mod), j->q->db, j->q->db, bin);
		return -1;
	}
	r = load_functions(j);
	if (r)
		log_error("%s", r == -ENOMEM ? "out of memory" :
			  store__error(j->st));
	return r ? -1 : 0;
}

/* BINARY and its ELF image and module; -1 after logging why. */
static int open_binary(const struct job *j, const char *arg, char *bin,
		       struct elf_image **img, struct module **mod)
{
	char err[600];

	if (!realpath(arg, bin)) {
		log_error("%s: %s", arg, strerror(errno));
		return -1;
	}
	if (same_file(bin, j->q->output)) {
		log_error("%s: OUT is BINARY itself: icppd arr writes a new file "
			  "and keeps the original", j->q->output);
		return -1;
	}
	*img = elf_image__open(bin, err, sizeof(err));
	if (!*img) {
		log_error("%s", err);
		return -1;
	}
	*mod = module__open(bin);
	if (!*mod || module__error(*mod) || !module__build_id(*mod)[0]) {
		log_error("%s: no GNU build-id: icppd tells builds apart by it "
			  "(link with -Wl,--build-id)", bin);
		return -1;
	}
	return 0;
}


/* The job's end to end, into @j->out.  -1 after logging why. */
static int run(struct job *j, struct elf_image **img, struct module **mod)
{
	const struct resize_request *q = j->q;
	struct resize_outcome *o = j->out;
	char bin[PATH_MAX];
	int64_t again;
	int r = 0;

	if (open_binary(j, q->binary, bin, img, mod) ||
	    load_training(j, bin, *mod))
		return -1;
	analyse(j, *img);
	if (search(j, q->growth, q->target)) {
		log_error("out of memory, or a corrupt path map");
		return -1;
	}
	if (o->res.precise_after <= o->res.precise_before + 1e-9) {
		log_error("%s: nothing to gain: %.1f%% of the training samples "
			  "are precise, and no pad of a padable function makes "
			  "more of them so (%.1f%% collide in contexts no pad "
			  "separates)", bin, pct(o->res.precise_before,
						 o->res.total),
			  pct(o->res.inseparable, o->res.total));
		return -1;
	}
	if (rewrite(j, *img) || (r = elf_image__write(*img, q->output))) {
		log_error("%s: cannot write: %s", q->output,
			  strerror(r < 0 ? -r : ERANGE));
		return -1;
	}
	if (!realpath(q->output, o->output)) {
		log_error("%s: %s", q->output, strerror(errno));
		return -1;
	}
	if (!store__module_by_build(j->st, o->build_id, &again)) {
		/* the same pads again: the same bytes, already registered */
		o->known = true;
		return 0;
	}
	if (register_out(j, o->output)) {
		log_error("%s; %s removed", store__error(j->st), q->output);
		unlink(q->output);
		return -1;
	}
	return 0;
}

int resize__run(const struct resize_request *q, struct resize_outcome *out)
{
	struct job j = { .q = q, .out = out };
	struct elf_image *img = NULL;
	struct module *mod = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = run(&j, &img, &mod);
	free(j.nodes);
	free(j.an);
	free(j.af);
	free(j.heights);
	store__close(j.st);
	module__delete(mod);
	elf_image__delete(img);
	return ret;
}

void resize__exit(struct resize_outcome *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->nfuncs; i++)
		free(o->funcs[i].name);
	free(o->funcs);
	arr_result__exit(&o->res);
	memset(o, 0, sizeof(*o));
}
