/*
 * annotate.c - a function's samples by instruction (annotate.h).
 */
#define _GNU_SOURCE
#include "profile/annotate.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/demangle.h"
#include "binary/disasm.h"
#include "binary/lines.h"
#include "binary/module.h"
#include "common/grow.h"
#include "common/log.h"

/* A sampled instruction of a function: its offset and samples. */
struct pc {
	uint32_t offset;
	double samples;
};

/* A function whose name matched, with its samples. */
struct match {
	int64_t id, module_id;
	uint64_t address;
	char *name;
	struct pc *pcs;
	size_t npcs, pcs_cap;
	double samples;
};

struct load {
	const char *symbol;
	struct match *v;
	size_t n, cap;
	int err;
};

/* Whether @name (a report's name, with its parameters and any symbol
 * version) is @symbol: whole, or without what follows its name. */
static bool named(const char *name, const char *symbol)
{
	size_t n = strlen(symbol);

	if (strncmp(name, symbol, n))
		return false;
	return !name[n] || (name[n] == '(' && !strchr(symbol, '(')) ||
	       (name[n] == '@' && !strchr(symbol, '@'));
}

static int add_function(void *arg, const struct store_function *f)
{
	struct load *l = arg;
	char buf[1024];
	const char *shown = demangle__name(f->name, buf, sizeof(buf));

	if (!named(f->name, l->symbol) && !named(shown, l->symbol))
		return 0;
	if (grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v), 8))
		return -ENOMEM;
	l->v[l->n] = (struct match){ f->id, f->module_id, f->address,
				     strdup(shown) };
	return l->v[l->n++].name ? 0 : -ENOMEM;
}

static int add_pc(void *arg, const struct store_pc *pc)
{
	struct load *l = arg;

	for (size_t i = 0; i < l->n; i++) {
		struct match *m = &l->v[i];

		if (m->id != pc->function_id)
			continue;
		if (grow(&m->pcs, &m->pcs_cap, m->npcs + 1, sizeof(*m->pcs),
			 64))
			return -ENOMEM;
		m->pcs[m->npcs++] = (struct pc){ pc->offset,
						 (double)pc->samples };
		m->samples += (double)pc->samples;
	}
	return 0;
}

/* The binary of module @id: its path and build-id, for add_module(). */
struct module_of {
	int64_t id;
	char *path, *build_id;
};

static int add_module(void *arg, const struct store_module *m)
{
	struct module_of *w = arg;

	if (m->id != w->id)
		return 0;
	w->path = strdup(m->path);
	w->build_id = strdup(m->build_id);
	return w->path && w->build_id ? 1 : -ENOMEM;
}

/* The bytes of [start, end) of a module's code, copied as its sections
 * go by. */
struct code {
	uint64_t start, end;
	uint8_t *bytes;
	uint64_t have_lo, have_hi;	/* what the sections gave */
};

static int copy_code(void *arg, uint64_t vaddr, const uint8_t *code,
		     size_t size)
{
	struct code *c = arg;
	uint64_t lo = vaddr > c->start ? vaddr : c->start;
	uint64_t hi = vaddr + size < c->end ? vaddr + size : c->end;

	if (vaddr + size < vaddr || lo >= hi)
		return 0;
	memcpy(c->bytes + (lo - c->start), code + (lo - vaddr), hi - lo);
	if (c->have_hi == c->have_lo || lo < c->have_lo)
		c->have_lo = lo;
	if (hi > c->have_hi)
		c->have_hi = hi;
	return 0;
}

/* Decodes @c's bytes into @a's instructions (AT&T syntax, as perf
 * annotate's objdump shows them); a byte Capstone cannot decode is
 * "(bad)", as objdump says.  0, or -1 with why in @a. */
static int decode(struct annotation *a, const struct code *c)
{
	const char *why;
	const struct disasm *d = disasm__capstone(&why);
	csh h;
	cs_insn *in;
	const uint8_t *p = c->bytes + (c->have_lo - c->start);
	size_t left = c->have_hi - c->have_lo, cap = 0;
	uint64_t addr = c->have_lo;
	int ret = 0;

	if (!d) {
		snprintf(a->why, sizeof(a->why), "%s", why);
		return -1;
	}
	if (d->open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) {
		snprintf(a->why, sizeof(a->why), "Capstone did not start");
		return -1;
	}
	d->option(h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	in = d->malloc(h);
	while (in && left && !ret) {
		struct annotate_insn *x;

		if (grow(&a->insns, &cap, a->ninsns + 1, sizeof(*a->insns),
			 256)) {
			ret = -ENOMEM;
			break;
		}
		x = &a->insns[a->ninsns++];
		*x = (struct annotate_insn){ .addr = addr };
		if (d->disasm_iter(h, &p, &left, &addr, in)) {
			x->size = in->size;
			snprintf(x->text, sizeof(x->text), "%-6s %s",
				 in->mnemonic, in->op_str);
			/* "ret", not "ret    ": no operand */
			for (size_t k = strlen(x->text); k && x->text[k - 1] ==
			     ' '; k--)
				x->text[k - 1] = '\0';
		} else {
			x->size = 1;
			snprintf(x->text, sizeof(x->text), "(bad)");
			p++;
			left--;
			addr++;
		}
	}
	if (!in)
		ret = -ENOMEM;
	else
		d->free(in, 1);
	d->close(&h);
	if (ret == -ENOMEM)
		snprintf(a->why, sizeof(a->why), "out of memory");
	return ret ? -1 : 0;
}

/* The instruction at @addr, or NULL when none starts there. */
static struct annotate_insn *insn_at(struct annotation *a, uint64_t addr)
{
	size_t lo = 0, hi = a->ninsns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->insns[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < a->ninsns && a->insns[lo].addr == addr ? &a->insns[lo] :
	       NULL;
}

/* Where the code annotated ends: the function's end, or past its last
 * sample where the binary does not say; ANNOTATE_MAX_BYTES at most. */
static void span(struct annotation *a, const struct module *mod,
		 const struct match *m)
{
	uint64_t last = 0;

	for (size_t i = 0; i < m->npcs; i++)
		if (m->pcs[i].offset > last)
			last = m->pcs[i].offset;
	a->start = m->address;
	if (module__function_end(mod, m->address, &a->end))
		a->end = m->address + last + 16;
	if (a->end - a->start > ANNOTATE_MAX_BYTES) {
		a->end = a->start + ANNOTATE_MAX_BYTES;
		a->cut = true;
	}
}

/* @m's annotation into @a: its code decoded, its samples on it, its
 * lines.  0, or -ENOMEM; a binary that cannot be read or decoded is
 * said in @a->why. */
static int annotate_one(struct store *st, const struct match *m,
			bool no_lines, struct annotation *a)
{
	struct module_of w = { .id = m->module_id };
	struct code c = { 0 };
	struct module *mod = NULL;
	struct lines *l = NULL;
	int ret = 0;

	a->name = strdup(m->name);
	a->samples = m->samples;
	if (!a->name)
		return -ENOMEM;
	ret = store__modules(st, add_module, &w);
	if (ret < 0 && ret != -ENOMEM) {
		snprintf(a->why, sizeof(a->why), "%s", store__error(st));
		ret = 0;
		goto out;
	}
	if (ret == -ENOMEM)
		goto out;
	ret = 0;
	if (!w.path) {
		snprintf(a->why, sizeof(a->why), "its binary is not in the "
			 "database");
		goto out;
	}
	a->module = strdup(w.path);
	mod = module__open_recorded(w.path, w.build_id);
	if (!a->module || !mod) {
		ret = -ENOMEM;
		goto out;
	}
	if (module__error(mod)) {
		snprintf(a->why, sizeof(a->why), "%s cannot be read: %s",
			 w.path, module__error(mod) == -ESTALE ?
			 "it is not the build the run sampled" :
			 strerror(-module__error(mod)));
		goto out;
	}
	span(a, mod, m);
	c = (struct code){ a->start, a->end, calloc(a->end - a->start, 1),
			   0, 0 };
	if (!c.bytes) {
		ret = -ENOMEM;
		goto out;
	}
	ret = module__code(mod, copy_code, &c);
	if (ret || c.have_hi <= c.have_lo) {
		if (ret)
			snprintf(a->why, sizeof(a->why), "%s: its code could "
				 "not be read: %s", w.path, strerror(-ret));
		else
			snprintf(a->why, sizeof(a->why), "%s holds no code at "
				 "0x%" PRIx64, w.path, a->start);
		ret = 0;
		goto out;
	}
	if (decode(a, &c)) {
		ret = !strcmp(a->why, "out of memory") ? -ENOMEM : 0;
		goto out;
	}
	for (size_t i = 0; i < m->npcs; i++) {
		struct annotate_insn *x = insn_at(a, a->start + m->pcs[i].offset);

		if (x)
			x->samples += m->pcs[i].samples;
		else
			a->outside += m->pcs[i].samples;
	}
	if (!no_lines && (l = lines__new())) {
		for (size_t i = 0; i < a->ninsns; i++) {
			const char *file;
			unsigned line;

			if (lines__find(l, w.path, w.build_id, a->insns[i].addr,
					&file, &line))
				continue;
			/* owned by @l, which the annotation keeps */
			a->insns[i].file = file;
			a->insns[i].line = line;
			a->lines = true;
		}
	}
out:
	if (a->lines)
		a->dwarf = l;
	else
		lines__delete(l);
	module__delete(mod);
	free(c.bytes);
	free(w.path);
	free(w.build_id);
	return ret;
}

static int heavier(const void *x, const void *y)
{
	const struct match *a = x, *b = y;

	return a->samples > b->samples ? -1 : a->samples < b->samples;
}

int annotate__load(struct store *st, const struct annotate_request *r,
		   int64_t *run_id, struct annotation **out, size_t *n)
{
	struct load l = { .symbol = r->symbol };
	struct store_selection sel = r->sel;
	size_t kept = 0;
	int ret = -1;

	*out = NULL;
	*n = 0;
	if (!sel.run_id) {
		int found = store__latest_run(st, &sel.run_id);

		if (found == STORE_NONE) {
			log_error("annotate: no measurement run in the database "
				  "(icppd record -- COMMAND)");
			return -1;
		}
		if (found) {
			log_error("%s", store__error(st));
			return -1;
		}
	}
	*run_id = sel.run_id;
	if (store__functions(st, add_function, &l) ||
	    (l.n && store__run_pcs(st, &sel, add_pc, &l))) {
		log_error("%s", store__error(st));
		goto out;
	}
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i].samples > 0)
			l.v[kept++] = l.v[i];
		else
			free(l.v[i].name), free(l.v[i].pcs);
	l.n = kept;
	if (!l.n) {
		log_error("annotate: no function named '%s' has samples in run "
			  "%" PRId64 " (icppd report --k 0 lists those that do)",
			  r->symbol, sel.run_id);
		ret = 1;
		goto out;
	}
	qsort(l.v, l.n, sizeof(*l.v), heavier);
	*out = calloc(l.n, sizeof(**out));
	if (!*out) {
		log_error("out of memory");
		goto out;
	}
	*n = l.n;
	for (size_t i = 0; i < l.n; i++)
		if (annotate_one(st, &l.v[i], r->no_lines, &(*out)[i])) {
			log_error("out of memory");
			annotate__free(*out, *n);
			*out = NULL;
			*n = 0;
			goto out;
		}
	ret = 0;
out:
	for (size_t i = 0; i < l.n; i++) {
		free(l.v[i].name);
		free(l.v[i].pcs);
	}
	free(l.v);
	return ret;
}

void annotate__free(struct annotation *a, size_t n)
{
	for (size_t i = 0; a && i < n; i++) {
		free(a[i].name);
		free(a[i].module);
		free(a[i].insns);
		lines__delete(a[i].dwarf);
	}
	free(a);
}
