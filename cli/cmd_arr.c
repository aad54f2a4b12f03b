/*
 * cmd_arr.c - "icppd arr": activation record resizing.  Reads the
 * training path map of BINARY's build, decides which functions' frames
 * can grow in place (binary/frame.c), searches pads that separate
 * colliding CIDs (inference/arr.c), writes OUT with the grown prologues
 * and a new build-id, and registers OUT with the predicted path map so
 * record, validate and report work on it without retraining.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "binary/elfimage.h"
#include "binary/frame.h"
#include "binary/module.h"
#include "common/grow.h"
#include "cli/commands.h"
#include "common/log.h"
#include "common/search.h"
#include "inference/arr.h"
#include "schema/arr_store.h"
#include "schema/report_store.h"
#include "schema/store.h"

struct arr_cli {
	const char *db, *output;
	double growth, target;
	uint64_t seed;
};

#define OPT(f) offsetof(struct arr_cli, f)
static const struct cli_option arr_options[] = {
	{ "database", 'd', CLI_STRING, OPT(db), "FILE",
	  "profile database", 0, 0, .dflt = "icppd.db" },
	{ "output", 'o', CLI_STRING, OPT(output), "OUT",
	  "the rewritten binary to write (required)", 0, 0 },
	{ "max-stack-growth", 0, CLI_DOUBLE, OPT(growth), "F",
	  "deepest training stack may grow F times", 0, 0, .dflt = "1.25",
	  .lo = 1, .hi = 100 },
	{ "target", 0, CLI_DOUBLE, OPT(target), "P",
	  "stop when P % of the training samples are precise", 0, 0,
	  .dflt = "97", .lo = 0, .hi = 100 },
	{ "seed", 0, CLI_UINT, OPT(seed), "N",
	  "seed of the search (default 1): the same seed, the same pads",
	  0, UINT32_MAX },
};

const struct cli_command arr_command = {
	.name = "arr",
	.synopsis = "[options] -o OUT BINARY",
	.brief = "activation record resizing: separate colliding context identifiers",
	.summary = "Activation record resizing: write a copy of BINARY whose\n"
		   "chosen functions have larger frames, so that colliding\n"
		   "context identifiers separate.",
	.options = arr_options,
	.noptions = sizeof(arr_options) / sizeof(arr_options[0]),
	.permute = true,
	.epilog = "BINARY needs a training run (icppd train).  OUT is\n"
		  "registered with the predicted path map at once.  See\n"
		  "icppd-arr(1) and the v_arr views.\n",
};

/* One function of the map. */
struct func {
	int64_t id, module_id;
	uint64_t address;
	char *name;
	struct frame_info frame;
	const char *why;	/* not padable: why */
};

struct job {
	struct arr_cli o;
	struct store *st;
	int64_t prog;			/* the original's module id */
	struct store_node *nodes;
	size_t n, nodes_cap;
	struct func *funcs;
	size_t nfuncs, funcs_cap;
	struct arr_node *an;
	struct arr_func *af;
	struct arr_result res;
	int64_t *heights;		/* predicted */
	char build_id[2 * ELF_IMAGE_BUILD_ID_MAX + 1];	/* the new one, hex */
	double search_ms, growth;
};

static int usage(const char *msg, const char *arg)
{
	fprintf(stderr, "icppd: arr: %s%s\nTry 'icppd arr --help'.\n", msg,
		arg);
	return 2;
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
	size_t lo = LOWER_BOUND((size_t)0, j->nfuncs, i, j->funcs[i].id < id);

	return lo < j->nfuncs && j->funcs[lo].id == id ? (int64_t)lo : -1;
}

static int add_function(void *arg, const struct store_function *f)
{
	struct job *j = arg;
	int64_t i = func_index(j, f->id);

	if (i >= 0) {
		j->funcs[i].module_id = f->module_id;
		j->funcs[i].address = f->address;
		j->funcs[i].name = strdup(f->name);
		if (!j->funcs[i].name)
			return -ENOMEM;
	}
	return 0;
}

/* The distinct functions of the map, sorted by id, with their names. */
static int load_functions(struct job *j)
{
	int64_t *ids = malloc((j->n + 1) * sizeof(*ids));
	size_t k = 0;

	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < j->n; i++)
		ids[i] = j->nodes[i].function_id;
	qsort(ids, j->n, sizeof(*ids), cmp_i64);
	j->funcs = calloc(j->n + 1, sizeof(*j->funcs));
	if (!j->funcs) {
		free(ids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < j->n; i++)
		if (!k || ids[i] != j->funcs[k - 1].id)
			j->funcs[k++].id = ids[i];
	j->nfuncs = k;
	free(ids);
	return store__functions(j->st, add_function, j);
}

static void analyse(struct job *j, const struct elf_image *img)
{
	for (size_t i = 0; i < j->nfuncs; i++) {
		struct func *f = &j->funcs[i];
		const uint8_t *code;
		size_t size;

		if (f->module_id != j->prog) {
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
	struct arr_opts ao = { j->o.seed ? j->o.seed : 1, target, growth, 0 };
	int64_t t0;

	j->an = calloc(j->n + 1, sizeof(*j->an));
	j->af = calloc(j->nfuncs + 1, sizeof(*j->af));
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
	for (size_t i = 0; i < j->nfuncs; i++)
		j->af[i] = (struct arr_func){ !j->funcs[i].why,
					      j->funcs[i].frame.max_pad };
	t0 = clock__mono_ns();
	if (arr__search(j->an, j->n, j->af, j->nfuncs, &ao, &j->res))
		return -ENOMEM;
	j->search_ms = (double)(clock__mono_ns() - t0) / 1e6;
	arr__heights(j->an, j->n, j->res.pads, j->heights);
	return 0;
}

/* Patches the prologues and derives the new build-id from the old one
 * and the pads (FNV-1a, spread over the id's length). */
static int rewrite(struct job *j, struct elf_image *img)
{
	uint64_t h = 1469598103934665603ULL;
	uint8_t *id;
	size_t len = elf_image__build_id(img, &id);

	for (size_t i = 0; i < j->nfuncs; i++) {
		struct func *f = &j->funcs[i];
		uint8_t sub[8];

		if (!j->res.pads[i])
			continue;
		if (frame__encode_sub(f->frame.frame + j->res.pads[i],
				      f->frame.sub_len, sub) ||
		    elf_image__patch(img, f->frame.sub_vaddr, sub,
				     f->frame.sub_len))
			return -ERANGE;
		for (int b = 0; b < 8; b++)
			h = (h ^ ((f->address ^ (uint64_t)j->res.pads[i] << 40) >>
				  (8 * b) & 0xff)) * 1099511628211ULL;
	}
	for (size_t b = 0; b < len; b++)
		h = (h ^ id[b]) * 1099511628211ULL;
	for (size_t b = 0; b < len; b++) {
		h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ULL;
		id[b] = (uint8_t)(h >> 56);
		snprintf(j->build_id + 2 * b, sizeof(j->build_id) - 2 * b,
			 "%02x", id[b]);
	}
	return 0;
}

/* OUT in the store: module, functions, the predicted map, results. */
static int register_out(struct job *j, const char *out_path)
{
	struct arr_build_row b = { .original_id = j->prog,
		.seed = (int64_t)(j->o.seed ? j->o.seed : 1),
		.samples = j->res.total, .precise_before = j->res.precise_before,
		.precise_after = j->res.precise_after, .paths = (int64_t)j->n,
		.paths_before = (int64_t)j->res.unique_before,
		.paths_after = (int64_t)j->res.unique_after,
		.deepest_before = j->res.deepest_before,
		.deepest_after = j->res.deepest_after,
		.inseparable = j->res.inseparable, .search_ms = j->search_ms };
	int64_t mod, map, *new_ids = calloc(j->n + 1, sizeof(*new_ids));
	int64_t *new_ctx = calloc(j->n + 1, sizeof(*new_ctx));
	int64_t *depth = calloc(j->n + 1, sizeof(*depth));

	if (!new_ids || !new_ctx || !depth || store__arr_begin(j->st))
		goto out_fail;
	if (store__arr_module(j->st, j->prog, out_path, j->build_id, &mod) ||
	    store__arr_map(j->st, mod, &map))
		goto out_rollback;
	for (size_t i = 0; i < j->n; i++) {
		struct store_node n = j->nodes[i];
		int64_t p = j->an[i].parent;
		const struct func *f = &j->funcs[j->an[i].func];

		if (f->module_id == j->prog &&
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
		if (j->res.inseparable_node[i] &&
		    store__arr_inseparable(j->st, mod, j->nodes[i].context_id,
					   j->nodes[i].height,
					   (double)j->nodes[i].self))
			goto out_rollback;
	}
	for (size_t i = 0; i < j->nfuncs; i++)
		if (store__arr_function(j->st, mod, j->funcs[i].id,
					j->funcs[i].why ? -1 : j->funcs[i].frame.frame,
					j->res.pads[i], j->funcs[i].why))
			goto out_rollback;
	b.module_id = mod;
	b.max_growth = j->growth;
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

static double pct(double part, double whole)
{
	return whole > 0 ? 100 * part / whole : 0;
}

static void print(const struct job *j, const char *out)
{
	const struct arr_result *r = &j->res;
	size_t unsafe = 0;

	printf("arr: %s (build-id %s)\n", out, j->build_id);
	printf("  precise, by training samples: %.1f%% -> %.1f%% (predicted)\n",
	       pct(r->precise_before, r->total), pct(r->precise_after, r->total));
	printf("  precise, by path:             %.1f%% -> %.1f%% (%zu paths)\n",
	       pct((double)r->unique_before, (double)r->paths),
	       pct((double)r->unique_after, (double)r->paths), r->paths);
	printf("  deepest stack: %lld -> %lld bytes (growth %.3fx); search %.0f "
	       "ms, %u steps\n", (long long)r->deepest_before,
	       (long long)r->deepest_after, r->deepest_before ?
	       (double)r->deepest_after / (double)r->deepest_before : 1.0,
	       j->search_ms, r->steps);
	printf("\n  %-32s %8s %6s\n", "padded function", "frame", "pad");
	for (size_t i = 0; i < j->nfuncs; i++)
		if (r->pads[i])
			printf("  %-32s %8lld %6lld\n", j->funcs[i].name,
			       (long long)j->funcs[i].frame.frame,
			       (long long)r->pads[i]);
	for (size_t i = 0; i < j->nfuncs; i++)
		unsafe += j->funcs[i].module_id == j->prog && j->funcs[i].why;
	if (unsafe) {
		printf("\n  not padable (%zu):\n", unsafe);
		for (size_t i = 0; i < j->nfuncs; i++)
			if (j->funcs[i].module_id == j->prog && j->funcs[i].why)
				printf("  %-32s %s\n", j->funcs[i].name,
				       j->funcs[i].why);
	}
	if (r->inseparable > 0)
		printf("\n  %.0f training samples (%.1f%%) collide in contexts "
		       "no pad can separate (same functions in another order, or "
		       "differing only in functions that cannot be padded): see "
		       "v_arr_inseparable\n", r->inseparable,
		       pct(r->inseparable, r->total));
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
	char err[600];
	int r;

	j->st = store__open(j->o.db, err, sizeof(err));
	if (!j->st) {
		log_error("%s", err);
		return -1;
	}
	r = store__module_by_build(j->st, module__build_id(mod), &j->prog);
	if (!r)
		r = store__map_nodes(j->st, j->prog, 0, add_node, j);
	if (r < 0) {
		log_error("%s", store__error(j->st));
		return -1;
	}
	if (r > 0 || !j->n) {
		log_error("%s: no training for this build (build-id %s) in %s: "
			  "run 'icppd train -d %s -- %s' first", bin,
			  module__build_id(mod), j->o.db, j->o.db, bin);
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
	if (same_file(bin, j->o.output)) {
		log_error("%s: OUT is BINARY itself: icppd arr writes a new file "
			  "and keeps the original", j->o.output);
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

int cmd_arr(int argc, char **argv)
{
	struct job j = { 0 };
	struct elf_image *img = NULL;
	struct module *mod = NULL;
	char bin[PATH_MAX], out[PATH_MAX];
	int64_t again;
	int idx, ret = 1, r = 0;

	cli__defaults(&arr_command, &j.o);
	idx = cli__parse(&arr_command, argc, argv, &j.o);
	if (idx < 0)
		return idx == -1 ? 0 : 2;
	if (argc - idx != 1)
		return usage("expected one BINARY", "");
	if (!j.o.output)
		return usage("-o OUT is required: arr writes a new file", "");
	if (open_binary(&j, argv[idx], bin, &img, &mod) ||
	    load_training(&j, bin, mod))
		goto out;
	analyse(&j, img);
	j.growth = j.o.growth;
	if (search(&j, j.o.growth, j.o.target / 100)) {
		log_error("out of memory, or a corrupt path map");
		goto out;
	}
	if (j.res.precise_after <= j.res.precise_before + 1e-9) {
		log_error("%s: nothing to gain: %.1f%% of the training samples "
			  "are precise, and no pad of a padable function makes "
			  "more of them so (%.1f%% collide in contexts no pad "
			  "separates)", bin, pct(j.res.precise_before, j.res.total),
			  pct(j.res.inseparable, j.res.total));
		goto out;
	}
	if (rewrite(&j, img) || (r = elf_image__write(img, j.o.output))) {
		log_error("%s: cannot write: %s", j.o.output,
			  strerror(r < 0 ? -r : ERANGE));
		goto out;
	}
	if (!store__module_by_build(j.st, j.build_id, &again)) {
		/* the same pads again: the same bytes, already registered */
		log_info("%s: this build (build-id %s) is registered already; "
			 "the file is written again", j.o.output, j.build_id);
		ret = 0;
		goto out;
	}
	if (!realpath(j.o.output, out) || register_out(&j, out)) {
		log_error("%s; %s removed", store__error(j.st), j.o.output);
		unlink(j.o.output);
		goto out;
	}
	print(&j, out);
	ret = 0;
out:
	for (size_t i = 0; i < j.nfuncs; i++)
		free(j.funcs[i].name);
	free(j.funcs);
	free(j.nodes);
	free(j.an);
	free(j.af);
	free(j.heights);
	arr__result_free(&j.res);
	store__close(j.st);
	module__delete(mod);
	elf_image__delete(img);
	return ret;
}
