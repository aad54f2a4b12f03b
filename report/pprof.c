/*
 * pprof.c - building profile.proto messages from a CCT (see pprof.h).
 *
 * Strings, functions, locations and mappings are deduplicated through
 * hash indexes; every message lives in arrays freed at the end.
 */
#include "report/pprof.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "binary/demangle.h"
#include "binary/lines.h"
#include "binary/module.h"
#include "common/grow.h"
#include "common/hindex.h"
#include "common/log.h"
#include "inference/kccf.h"
#include "report/profile.pb-c.h"
#include "report/render.h"
#include "schema/report_store.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Function Function;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__ValueType ValueType;

struct loc_key {
	int64_t frame;
	uint64_t site;		/* call site; 0: the function itself */
	uint64_t pc;		/* a leaf's sampled instruction; 0: none */
};

struct builder {
	const struct pprof_input *in;
	char **strings;
	size_t nstrings, strings_cap;
	struct hindex string_index;
	Function *funcs;
	Function **func_ptrs;
	size_t nfuncs, funcs_cap;
	struct hindex func_index;	/* frame -> function */
	int64_t *func_frames;
	size_t func_frames_cap;
	Location *locs;
	Location **loc_ptrs;
	Line *loc_lines;		/* every location's, in order */
	Line **line_ptrs;
	size_t *loc_first;		/* a location's first line */
	size_t nlines, loc_lines_cap, loc_first_cap;
	struct loc_key *loc_keys;
	size_t nlocs, locs_cap, loc_keys_cap;
	struct hindex loc_index;
	Mapping *maps;
	Mapping **map_ptrs;
	int64_t *map_modules;
	double *map_roots;		/* weight of stacks starting there */
	size_t nmaps, maps_cap, map_modules_cap, map_roots_cap;
	int64_t *counts;		/* per record: its whole count */
	Sample *samples;
	Sample **sample_ptrs;
	uint64_t *ids;			/* location ids of all samples */
	size_t ids_cap;
	int64_t *values;
	Label *labels;
	Label **label_ptrs;
	int64_t *procs;			/* per sample: its process frame */
	const char **hows;		/* per sample: its inference */
	int64_t *unknowns;		/* per sample: its unknown-callers
					 * frame; 0: none */
	int64_t unknown_root;		/* the frame all of those are drawn
					 * as (CCT_UNKNOWN_ROOT); 0: none yet */
	size_t nsamples, samples_cap, procs_cap, hows_cap, unknowns_cap, nids;
	size_t values_cap;
	/* per row of in->pcs: the samples its instruction has left to give
	 * (quotas[i].left), and at a function's first row, the counts of
	 * the records that end in it (.total) */
	struct pc_quota { int64_t total, left; bool set; } *quotas;
	/* split()'s scratch */
	int64_t *weights;
	struct part { __int128 rem; size_t i; } *parts;
	size_t weights_cap, parts_cap;
	int err;
};

static int64_t str(struct builder *b, const char *s)
{
	uint64_t h = hindex__string(s);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&b->string_index, &p, h)) != HINDEX_NONE)
		if (!strcmp(b->strings[i], s))
			return i;
	if (grow(&b->strings, &b->strings_cap, b->nstrings + 1,
		 sizeof(*b->strings), 256) ||
	    !(b->strings[b->nstrings] = strdup(s)) ||
	    hindex__insert(&b->string_index, h, (uint32_t)b->nstrings)) {
		b->err = -ENOMEM;
		return 0;
	}
	return (int64_t)b->nstrings++;
}

static const struct store_module *module(const struct builder *b, int64_t id)
{
	for (size_t i = 0; i < b->in->nmodules; i++)
		if (b->in->modules[i].id == id)
			return &b->in->modules[i];
	return NULL;
}

/* The span of @m's code, when its file is still the build profiled. */
static void code_span(const struct store_module *m, Mapping *mp)
{
	struct module_span span = { 0 };
	char id[41];

	if (!module__file_build_id(m->path, id, sizeof(id), &span) &&
	    !strcmp(id, m->build_id) && span.found) {
		mp->memory_start = span.start;
		mp->memory_limit = span.limit;
		mp->file_offset = span.offset;
	}
}

static uint64_t mapping(struct builder *b, int64_t module_id)
{
	const struct store_module *m = module(b, module_id);
	Mapping *mp;

	if (!m)
		return 0;
	for (size_t i = 0; i < b->nmaps; i++)
		if (b->map_modules[i] == module_id)
			return i + 1;
	/* the arrays beside one another grow only when full (realloc at
	 * every insert copied them each time under ASan: quadratic) */
	if (grow(&b->maps, &b->maps_cap, b->nmaps + 1, sizeof(*b->maps), 8) ||
	    grow(&b->map_modules, &b->map_modules_cap, b->nmaps + 1,
		 sizeof(*b->map_modules), 8) ||
	    grow(&b->map_roots, &b->map_roots_cap, b->nmaps + 1,
		 sizeof(*b->map_roots), 8)) {
		b->err = -ENOMEM;
		return 0;
	}
	mp = &b->maps[b->nmaps];
	perftools__profiles__mapping__init(mp);
	mp->id = b->nmaps + 1;
	mp->filename = str(b, m->path);
	mp->build_id = str(b, m->build_id);
	mp->has_functions = true;
	mp->has_filenames = mp->has_line_numbers = b->in->lines != NULL;
	code_span(m, mp);
	b->map_modules[b->nmaps] = module_id;
	b->map_roots[b->nmaps] = 0;
	return ++b->nmaps;
}

/* Source line of @vaddr in the frame's module (its own function's, past
 * what is inlined there), or 0. */
static unsigned line_of(struct builder *b, const struct cct_frame *f,
			uint64_t vaddr, const char **file)
{
	const struct store_module *m = f ? module(b, f->module_id) : NULL;
	const struct lines_frame *fr;
	unsigned line = 0;
	int n;

	*file = NULL;
	if (m && b->in->dwarf) {
		n = profile_dwarf__at(b->in->dwarf, f->module_id, vaddr, &fr);
		if (n < 0)
			b->err = n;
		else if (n > 0)
			*file = fr[n - 1].file, line = fr[n - 1].line;
	} else if (m && b->in->lines &&
		   lines__find(b->in->lines, m->path, m->build_id, vaddr, file,
			       &line)) {
		line = 0;
	}
	return line;
}

/* A new function of frame @frame (0: an inlined one), found again by
 * hash @h, its id set: the caller names it.  NULL when out of memory. */
static Function *new_function(struct builder *b, uint64_t h, int64_t frame)
{
	Function *fn;

	if (grow(&b->funcs, &b->funcs_cap, b->nfuncs + 1, sizeof(*b->funcs), 256) ||
	    grow(&b->func_frames, &b->func_frames_cap, b->nfuncs + 1,
		 sizeof(*b->func_frames), 256) ||
	    hindex__insert(&b->func_index, h, (uint32_t)b->nfuncs)) {
		b->err = -ENOMEM;
		return NULL;
	}
	fn = &b->funcs[b->nfuncs];
	perftools__profiles__function__init(fn);
	fn->id = b->nfuncs + 1;
	b->func_frames[b->nfuncs++] = frame;
	return fn;
}

/*
 * The function of @frame, as source file @file holds it (NULL: the file
 * of its first line).  A line of another file is code inlined from
 * there (a header's inline function, a macro): pprof takes a line's
 * file from its function, so such lines get a function of the same
 * name in that file, or -list would show them in the wrong file.
 */
static uint64_t function(struct builder *b, int64_t frame, const char *file)
{
	const struct cct_frame *f = cct__frame(b->in->cct, frame);
	const char *first = NULL;
	unsigned start = 0;
	uint64_t h;
	struct hindex_probe p = { HINDEX_NONE, 0 };
	int64_t name;
	Function *fn;
	uint32_t i;

	if (f && frame > 0)
		start = line_of(b, f, f->address, &first);
	if (!file || (first && !strcmp(file, first)))
		file = first;
	else
		start = 0;
	name = file ? str(b, file) : 0;
	h = hindex__mix(hindex__mix(10, (uint64_t)frame), (uint64_t)name);
	while ((i = hindex__next(&b->func_index, &p, h)) != HINDEX_NONE)
		if (b->func_frames[i] == frame && b->funcs[i].filename == name)
			return i + 1;
	if (!(fn = new_function(b, h, frame)))
		return 0;
	fn->name = fn->system_name = str(b, cct__root_name(b->in->cct, frame));
	fn->filename = name;
	fn->start_line = start;
	return b->nfuncs;
}

/* The function @name (from DWARF: mangled unless in->mangled) inlined
 * in code of @file, or 0 when out of memory. */
static uint64_t inlined_function(struct builder *b, const char *name,
				 const char *file)
{
	char buf[1024];
	int64_t n = str(b, b->in->mangled ? name :
			demangle__name(name, buf, sizeof(buf)));
	int64_t f = file ? str(b, file) : 0;
	uint64_t h = hindex__mix(hindex__mix(16, (uint64_t)n), (uint64_t)f);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	Function *fn;
	uint32_t i;

	while ((i = hindex__next(&b->func_index, &p, h)) != HINDEX_NONE)
		if (!b->func_frames[i] && b->funcs[i].name == n &&
		    b->funcs[i].filename == f)
			return i + 1;
	if (!(fn = new_function(b, h, 0)))
		return 0;
	fn->name = fn->system_name = n;
	fn->filename = f;
	return b->nfuncs;
}

/* A new line of the location being made. */
static Line *add_line(struct builder *b)
{
	Line *l;

	if (grow(&b->loc_lines, &b->loc_lines_cap, b->nlines + 1,
		 sizeof(*b->loc_lines), 256)) {
		b->err = -ENOMEM;
		return NULL;
	}
	l = &b->loc_lines[b->nlines++];
	perftools__profiles__line__init(l);
	b->locs[b->nlocs].n_line++;
	return l;
}

/* The lines of location @l of function frame @f: with in->dwarf, one
 * per function inlined at its address, innermost first, as pprof
 * expects them, then @frame's own; else @frame's alone. */
static void location_lines(struct builder *b, int64_t frame,
			   const struct cct_frame *f, const Location *l)
{
	const struct lines_frame *fr = NULL;
	const char *file = NULL;
	Line *ln;
	int n = 0;

	if (f && b->in->dwarf && module(b, f->module_id)) {
		n = profile_dwarf__at(b->in->dwarf, f->module_id, l->address,
				     &fr);
		if (n < 0) {
			b->err = n;
			return;
		}
	}
	for (int j = 0; j + 1 < n; j++) {
		if (!(ln = add_line(b)))
			return;
		ln->line = fr[j].line;
		ln->function_id = inlined_function(b, fr[j].name, fr[j].file);
	}
	if (!(ln = add_line(b)))
		return;
	if (n > 0) {		/* read before function() asks again */
		file = fr[n - 1].file;
		ln->line = fr[n - 1].line;
	} else if (f && frame > 0) {
		ln->line = line_of(b, f, l->address, &file);
	}
	ln->function_id = function(b, frame, file);
}

/* The location of @frame at call site @site, or at sampled instruction
 * @pc (link-time addresses; 0: none). */
static uint64_t location(struct builder *b, int64_t frame, uint64_t site,
			 uint64_t pc)
{
	uint64_t h = hindex__mix(hindex__mix(hindex__mix(11, (uint64_t)frame),
					     site), pc);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	const struct cct_frame *f = cct__frame(b->in->cct, frame);
	Location *l;
	uint32_t i;

	while ((i = hindex__next(&b->loc_index, &p, h)) != HINDEX_NONE)
		if (b->loc_keys[i].frame == frame &&
		    b->loc_keys[i].site == site && b->loc_keys[i].pc == pc)
			return i + 1;
	if (grow(&b->locs, &b->locs_cap, b->nlocs + 1, sizeof(*b->locs), 256) ||
	    grow(&b->loc_keys, &b->loc_keys_cap, b->nlocs + 1,
		 sizeof(*b->loc_keys), 256) ||
	    grow(&b->loc_first, &b->loc_first_cap, b->nlocs + 1,
		 sizeof(*b->loc_first), 256) ||
	    hindex__insert(&b->loc_index, h, (uint32_t)b->nlocs)) {
		b->err = -ENOMEM;
		return 0;
	}
	l = &b->locs[b->nlocs];
	perftools__profiles__location__init(l);
	l->id = b->nlocs + 1;
	b->loc_keys[b->nlocs] = (struct loc_key){ frame, site, pc };
	b->loc_first[b->nlocs] = b->nlines;
	if (f && frame > 0) {
		/* a return address: its call is the instruction before */
		l->address = pc ? pc : site ? site - 1 : f->address;
		l->mapping_id = mapping(b, f->module_id);
	}
	location_lines(b, frame, frame > 0 ? f : NULL, l);
	return ++b->nlocs;
}

static bool is_process(const struct cct *t, int64_t frame)
{
	return cct__kind(t, frame) == CCT_PROCESS;
}

/* A sample of record @r's stack, its leaf at @pc (0: the function),
 * with values @v. */
static int add_sample(struct builder *b, const struct cct_record *r,
		      uint64_t pc, const int64_t v[2])
{
	struct cct *t = b->in->cct;
	uint32_t x = r->node, below = CCT_NONE;
	uint64_t root_map = 0;

	if (grow(&b->samples, &b->samples_cap, b->nsamples + 1,
		 sizeof(*b->samples), 256) ||
	    grow(&b->procs, &b->procs_cap, b->nsamples + 1,
		 sizeof(*b->procs), 256) ||
	    grow(&b->hows, &b->hows_cap, b->nsamples + 1,
		 sizeof(*b->hows), 256) ||
	    grow(&b->unknowns, &b->unknowns_cap, b->nsamples + 1,
		 sizeof(*b->unknowns), 256) ||
	    grow(&b->values, &b->values_cap, 2 * b->nsamples + 2,
		 sizeof(*b->values), 512))
		return b->err = -ENOMEM;
	b->values[2 * b->nsamples] = v[0];
	b->values[2 * b->nsamples + 1] = v[1];
	b->hows[b->nsamples] = cct_how__name(r->how);
	/* its process: labels, not a frame (also when --k cuts it off) */
	b->procs[b->nsamples] = cct__process_of(t, r->node);
	b->unknowns[b->nsamples] = 0;
	perftools__profiles__sample__init(&b->samples[b->nsamples]);
	/* location ids go to a shared array; pointers are fixed up later */
	b->samples[b->nsamples].location_id = (uint64_t *)(uintptr_t)b->nids;
	for (uint32_t j = 0; x != CCT_ROOT &&
	     (b->in->k == KCCF_INF || j <= b->in->k); j++) {
		const struct cct_node *n = cct__node(t, x);
		uint64_t site = below == CCT_NONE ? 0 :
				cct__node(t, below)->call_site;
		int64_t frame = n->frame;
		uint64_t id;

		if (is_process(t, frame))
			break;
		/* one root for unknown callers; which ones, as a label */
		if (cct__kind(t, frame) == CCT_UNKNOWN_CALLERS) {
			b->unknowns[b->nsamples] = frame;
			if (!b->unknown_root)
				b->unknown_root = frame;
			frame = b->unknown_root;
		}
		id = location(b, frame, site, below == CCT_NONE ? pc : 0);
		if (b->err)
			return b->err;
		if (grow(&b->ids, &b->ids_cap, b->nids + 1, sizeof(*b->ids),
			 1024))
			return b->err = -ENOMEM;
		b->ids[b->nids++] = id;
		b->samples[b->nsamples].n_location_id++;
		if (b->locs[id - 1].mapping_id)
			root_map = b->locs[id - 1].mapping_id;
		below = x;
		x = n->parent;
	}
	if (root_map)
		b->map_roots[root_map - 1] += (double)v[1];
	b->nsamples++;
	return 0;
}

static int by_rem(const void *a, const void *b)
{
	const struct part *x = a, *y = b;

	if (x->rem != y->rem)
		return x->rem > y->rem ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* @total (>= 0) over @n parts in proportion to @w (each >= 0, some
 * > 0): whole parts that add up to @total, the largest remainders
 * rounded up (ties to the first). */
static int split(struct builder *b, int64_t total, const int64_t *w,
		 size_t n, int64_t *out)
{
	__int128 sum = 0, left = total;

	if (grow(&b->parts, &b->parts_cap, n, sizeof(*b->parts), 64))
		return b->err = -ENOMEM;
	for (size_t i = 0; i < n; i++)
		sum += w[i];
	if (sum <= 0) {			/* nothing to go by: the first */
		for (size_t i = 0; i < n; i++)
			out[i] = i ? 0 : total;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		__int128 x = (__int128)total * w[i];

		out[i] = (int64_t)(x / sum);
		left -= out[i];
		b->parts[i] = (struct part){ x % sum, i };
	}
	qsort(b->parts, n, sizeof(*b->parts), by_rem);
	for (size_t i = 0; left > 0; i++, left--)
		out[b->parts[i].i]++;
	return 0;
}

/* The leaf function of record @r and its sampled instructions: n rows
 * of in->pcs from *first (none for an unknown or pseudo frame). */
static size_t leaf_pcs(const struct builder *b, const struct cct_record *r,
		       const struct cct_frame **f, size_t *first)
{
	*f = cct__frame(b->in->cct, cct__node(b->in->cct, r->node)->frame);
	if (!*f || (*f)->id <= 0 ||
	    cct__kind(b->in->cct, (*f)->id) != CCT_FUNCTION)
		return 0;
	return store__pcs_of(b->in->pcs, b->in->npcs, (*f)->id, first);
}

/* Each leaf function's count over its records, for add_record(). */
static int leaf_totals(struct builder *b, const struct cct_record *recs,
		       size_t n)
{
	b->quotas = calloc(b->in->npcs ? b->in->npcs : 1, sizeof(*b->quotas));
	if (!b->quotas)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct cct_frame *f;
		size_t first;

		if (b->counts[i] > 0 && leaf_pcs(b, &recs[i], &f, &first))
			b->quotas[first].total += b->counts[i];
	}
	return 0;
}

/*
 * Record @r as samples, one per sampled instruction of its leaf
 * function, so each instruction's line gets its part.  The function's
 * count over all its records is first split among its instructions in
 * proportion to their samples (the same numbers when the counts are
 * whole: each instruction keeps its samples exactly); each record then
 * takes its count from what the instructions have left, in proportion,
 * so its parts add up to its count and no instruction gives more than
 * it has.  A leaf with no instruction recorded (a run from before they
 * were, an unknown frame) is one sample at the function.
 */
static int add_record(struct builder *b, const struct cct_record *r,
		      const int64_t v[2])
{
	const struct cct_frame *f;
	size_t first, n = leaf_pcs(b, r, &f, &first), k = 0;
	struct pc_quota *q;
	int64_t *c0, *c1;

	if (!n)
		return add_sample(b, r, 0, v);
	if (grow(&b->weights, &b->weights_cap, 3 * n, sizeof(*b->weights),
		 64))
		return b->err = -ENOMEM;
	q = &b->quotas[first];
	c0 = b->weights + n;
	c1 = b->weights + 2 * n;
	for (size_t i = 0; i < n; i++)
		b->weights[i] = b->in->pcs[first + i].samples;
	if (!q->set && q->total > 0) {
		if (split(b, q->total, b->weights, n, c0))
			return b->err;
		for (size_t i = 0; i < n; i++)
			q[i].left = c0[i];
		q->set = true;
	}
	if (v[0] > 0) {
		for (size_t i = 0; i < n; i++)
			b->weights[i] = q[i].left;
		if (split(b, v[0], b->weights, n, c0) ||
		    split(b, v[1], c0, n, c1))
			return b->err;
		for (size_t i = 0; i < n; i++)
			q[i].left -= c0[i];
	} else {		/* a fraction of a sample: the hottest pc */
		for (size_t i = 1; i < n; i++)
			if (b->weights[i] > b->weights[k])
				k = i;
		for (size_t i = 0; i < n; i++)
			c0[i] = 0, c1[i] = i == k ? v[1] : 0;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t part[2] = { c0[i], c1[i] };

		if ((part[0] > 0 || part[1] > 0) &&
		    add_sample(b, r, f->address + b->in->pcs[first + i].offset,
			       part))
			return b->err;
	}
	return 0;
}

/* The mapping most stacks start in (the program) first. */
static void main_first(struct builder *b)
{
	size_t h = 0;
	int64_t mod;
	Mapping m;

	for (size_t i = 1; i < b->nmaps; i++)
		if (b->map_roots[i] > b->map_roots[h])
			h = i;
	if (!h)
		return;
	for (size_t i = 0; i < b->nlocs; i++)
		if (b->locs[i].mapping_id == 1)
			b->locs[i].mapping_id = h + 1;
		else if (b->locs[i].mapping_id == h + 1)
			b->locs[i].mapping_id = 1;
	m = b->maps[0];
	b->maps[0] = b->maps[h];
	b->maps[h] = m;
	b->maps[0].id = 1;
	b->maps[h].id = h + 1;
	mod = b->map_modules[0];
	b->map_modules[0] = b->map_modules[h];
	b->map_modules[h] = mod;
}

/* Whether record @i of @recs is a sample, and its two values. */
static bool values(const struct builder *b, const struct cct_record *recs,
		   size_t i, int64_t v[2])
{
	const struct pprof_input *in = b->in;
	double per = in->period ? (double)in->period : 1e6;

	if (!(recs[i].weight > 0))
		return false;
	v[0] = b->counts[i];
	v[1] = in->exact ? llround(recs[i].weight * per) :
	       v[0] * (int64_t)per;
	return v[0] > 0 || v[1] > 0;
}

/* Whole counts for the records (render__round): grouped by leaf
 * function, and by process when the profile has them (a CID's samples
 * in one process are whole, and a process's). */
static int count_records(struct builder *b, const struct cct_record *recs,
			 size_t n)
{
	double *w = malloc((n ? n : 1) * sizeof(*w));
	int64_t *leaf = malloc((n ? n : 1) * sizeof(*leaf));
	int64_t *proc = malloc((n ? n : 1) * sizeof(*proc));
	int ret = -ENOMEM;

	b->counts = malloc((n ? n : 1) * sizeof(*b->counts));
	if (w && leaf && proc && b->counts) {
		for (size_t i = 0; i < n; i++) {
			uint32_t node = recs[i].node;

			w[i] = recs[i].weight > 0 ? recs[i].weight : 0;
			leaf[i] = cct__node(b->in->cct, node)->frame;
			proc[i] = cct__process_of(b->in->cct, node);
			if (proc[i])
				leaf[i] = (int64_t)hindex__mix(
					(uint64_t)leaf[i], (uint64_t)proc[i]);
		}
		ret = render__round(w, leaf, proc, n, b->counts);
	}
	free(w);
	free(leaf);
	free(proc);
	return ret;
}

static int gzip_write(FILE *out, const uint8_t *buf, size_t len)
{
	uint8_t chunk[65536];
	z_stream z = { 0 };
	int rc;

	/* windowBits 15 + 16: a gzip wrapper, as pprof expects */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (uint8_t *)buf;
	z.avail_in = (uInt)len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		rc = deflate(&z, Z_FINISH);
		if (fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out) !=
		    sizeof(chunk) - z.avail_out) {
			rc = Z_ERRNO;
			break;
		}
	} while (rc == Z_OK);
	deflateEnd(&z);
	if (rc == Z_ERRNO)
		return errno ? -errno : -EIO;
	return rc == Z_STREAM_END ? 0 : -EIO;
}

static void builder_free(struct builder *b)
{
	for (size_t i = 0; i < b->nstrings; i++)
		free(b->strings[i]);
	free(b->strings);
	hindex__exit(&b->string_index);
	free(b->funcs);
	free(b->func_ptrs);
	free(b->func_frames);
	hindex__exit(&b->func_index);
	free(b->locs);
	free(b->loc_ptrs);
	free(b->loc_lines);
	free(b->loc_first);
	free(b->line_ptrs);
	free(b->loc_keys);
	hindex__exit(&b->loc_index);
	free(b->maps);
	free(b->map_ptrs);
	free(b->map_modules);
	free(b->map_roots);
	free(b->counts);
	free(b->samples);
	free(b->sample_ptrs);
	free(b->ids);
	free(b->values);
	free(b->labels);
	free(b->label_ptrs);
	free(b->procs);
	free(b->hows);
	free(b->unknowns);
	free(b->weights);
	free(b->parts);
	free(b->quotas);
}

/* A sample's labels: how it was inferred, the function and height
 * whose callers are unknown (frame @unknown; 0: none), and its
 * process's command and pid where the profile has processes (frame
 * @proc). */
#define PPROF_LABELS 5
static size_t labels(struct builder *b, int64_t proc, int64_t unknown,
		     const char *how, Label *l, Label **ptrs)
{
	const struct cct_frame *f = proc ? cct__frame(b->in->cct, proc) : NULL;
	const struct cct_frame *u = unknown ?
				    cct__frame(b->in->cct, unknown) : NULL;
	size_t n = 0;

	for (size_t i = 0; i < PPROF_LABELS; i++) {
		perftools__profiles__label__init(&l[i]);
		ptrs[i] = &l[i];
	}
	l[n].key = str(b, "inference");
	l[n++].str = str(b, how);
	if (u && u->function_id) {
		l[n].key = str(b, "unknown_callers_of");
		l[n++].str = str(b, cct__name(b->in->cct, u->function_id));
		l[n].key = str(b, "height");
		l[n++].num = u->height;
	}
	if (f) {
		l[n].key = str(b, "comm");
		l[n++].str = str(b, f->name);
	}
	if (f && f->pid) {
		l[n].key = str(b, "pid");
		l[n++].num = f->pid;
	}
	return n;
}

/* Points every message at its parts, now that no array moves. */
static int link_messages(struct builder *b, Profile *p)
{
	b->func_ptrs = malloc((b->nfuncs + 1) * sizeof(*b->func_ptrs));
	b->loc_ptrs = malloc((b->nlocs + 1) * sizeof(*b->loc_ptrs));
	b->line_ptrs = malloc((b->nlines + 1) * sizeof(*b->line_ptrs));
	b->map_ptrs = malloc((b->nmaps + 1) * sizeof(*b->map_ptrs));
	b->sample_ptrs = malloc((b->nsamples + 1) * sizeof(*b->sample_ptrs));
	b->labels = malloc((PPROF_LABELS * b->nsamples + 1) *
			   sizeof(*b->labels));
	b->label_ptrs = malloc((PPROF_LABELS * b->nsamples + 1) *
			       sizeof(*b->label_ptrs));
	if (!b->func_ptrs || !b->loc_ptrs || !b->line_ptrs || !b->map_ptrs ||
	    !b->sample_ptrs || !b->labels || !b->label_ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < b->nfuncs; i++)
		b->func_ptrs[i] = &b->funcs[i];
	for (size_t i = 0; i < b->nlines; i++)
		b->line_ptrs[i] = &b->loc_lines[i];
	for (size_t i = 0; i < b->nlocs; i++) {
		b->locs[i].line = &b->line_ptrs[b->loc_first[i]];
		b->loc_ptrs[i] = &b->locs[i];
	}
	for (size_t i = 0; i < b->nmaps; i++)
		b->map_ptrs[i] = &b->maps[i];
	for (size_t s = 0; s < b->nsamples; s++) {
		Sample *sm = &b->samples[s];

		sm->location_id = b->ids + (uintptr_t)sm->location_id;
		sm->n_value = 2;
		sm->value = &b->values[2 * s];
		sm->label = &b->label_ptrs[PPROF_LABELS * s];
		sm->n_label = labels(b, b->procs[s], b->unknowns[s], b->hows[s],
				     &b->labels[PPROF_LABELS * s], sm->label);
		b->sample_ptrs[s] = sm;
	}
	p->n_sample = b->nsamples;
	p->sample = b->sample_ptrs;
	p->n_location = b->nlocs;
	p->location = b->loc_ptrs;
	p->n_function = b->nfuncs;
	p->function = b->func_ptrs;
	p->n_mapping = b->nmaps;
	p->mapping = b->map_ptrs;
	return b->err;
}

int pprof__write(FILE *out, const struct pprof_input *in)
{
	struct builder b = { .in = in };
	ValueType types[2], *type_ptrs[2] = { &types[0], &types[1] };
	const struct cct_record *recs;
	Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	uint8_t *buf = NULL;
	size_t n, len;
	int ret = -ENOMEM;

	str(&b, "");		/* string 0 is always "" */
	recs = cct__records(in->cct, &n);
	if (count_records(&b, recs, n) || leaf_totals(&b, recs, n))
		goto out;
	profile_dwarf__reads_begin(in->dwarf);	/* an address a location */
	for (size_t i = 0; i < n && !b.err; i++) {
		int64_t v[2];

		if (values(&b, recs, i, v))
			add_record(&b, &recs[i], v);
	}
	profile_dwarf__reads_end(in->dwarf);
	main_first(&b);
	for (int i = 0; i < 2; i++)
		perftools__profiles__value_type__init(&types[i]);
	types[0].type = str(&b, in->offcpu ? "blocked" : "samples");
	types[0].unit = str(&b, in->offcpu ? "microseconds" : "count");
	types[1].type = str(&b, in->offcpu ? "off-cpu" : in->clock ? "cpu" :
			    in->period ? in->event : "samples_exact");
	types[1].unit = str(&b, in->clock ? "nanoseconds" : in->period ?
			    "count" : "microsamples");
	p.n_sample_type = 2;
	p.sample_type = type_ptrs;
	p.default_sample_type = types[1].type;
	/* a sample stands for one period of the event */
	p.period_type = in->period ? &types[1] : &types[0];
	p.period = in->period ? (int64_t)in->period : 1;
	p.time_nanos = in->time_ns;
	p.duration_nanos = in->duration_ns;
	if (b.err || link_messages(&b, &p))
		goto out;
	p.string_table = b.strings;
	p.n_string_table = b.nstrings;
	len = perftools__profiles__profile__get_packed_size(&p);
	buf = malloc(len ? len : 1);
	if (!buf)
		goto out;
	perftools__profiles__profile__pack(&p, buf);
	ret = gzip_write(out, buf, len);
out:
	free(buf);
	builder_free(&b);
	return ret;
}

/* report__write's pprof: the view's profile with its run's sampling. */
int render__pprof(const struct render *r)
{
	const struct run_row *run = &r->p->run;
	struct pprof_input in = { .cct = r->p->cct, .k = r->v->k,
		.modules = r->p->modules, .nmodules = r->p->nmodules,
		.event = run->event, .period = run->period,
		.time_ns = run->started_ns, .exact = r->v->exact,
		.pcs = r->p->pcs, .npcs = r->p->npcs };
	int ret;

	if (run->ended_ns > run->started_ns)
		in.duration_ns = run->ended_ns - run->started_ns;
	/* clock events count nanoseconds: a sample is its period */
	in.clock = !strcmp(run->event, "cpu-clock") ||
		   !strcmp(run->event, "task-clock");
	if (in.clock && !in.period && run->frequency)
		in.period = 1000000000 / run->frequency;
	/* off-CPU weights are microseconds: "a sample" is one of them */
	if ((in.offcpu = r->p->offcpu || r->p->wall)) {
		in.clock = true;
		in.period = 1000;
	}
	/* line numbers always, where DWARF has them */
	in.dwarf = r->v->dwarf;
	in.mangled = r->p->mangled;
	in.lines = r->v->lines ? r->v->lines : lines__new();
	ret = in.lines ? pprof__write(r->out, &in) : -ENOMEM;
	if (ret)
		log_error("writing the pprof profile: %s", strerror(-ret));
	if (in.lines != r->v->lines)
		lines__delete(in.lines);
	return ret ? -1 : 0;
}
