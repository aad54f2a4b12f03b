/*
 * build_calls.c - a build's direct calls and function names, decoded
 * or packed into one blob and read back (see build_calls.h).
 */
#include "profile/build_calls.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/radix.h"

#define MAGIC "ICPC"
/* 2: tail calls listed (callsites.h, CALLSITE_TAIL); 3: indirect calls
 * and taken functions */
#define VERSION 3
#define COUNTS 6
#define HEADER (4 + 4 + COUNTS * 8)
/* the fewest bytes a call, an export, a function and a taken one take */
#define CALL_MIN 3
#define EXPORT_MIN 2
#define FUNC_MIN 2
#define TAKEN_MIN 1
/* a call's kind, as its third field gives it; an import's name
 * offset follows them */
#define ROW_DIRECT 0
#define ROW_INDIRECT 1
#define ROW_IMPORT 2
#define VARINT_MAX 10

static void put_u32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* LEB128, and zigzag for signed values: a call's fields are small
 * differences (return address to the last one, to its caller's start,
 * to its callee), so a call packs into 6 to 10 bytes, not 36. */
static unsigned char *put_var(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static unsigned char *put_svar(unsigned char *p, int64_t v)
{
	return put_var(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/* A reader of the records: @p up to @end; bad once anything did not
 * fit, and from then on every value reads 0. */
struct reader {
	const unsigned char *p, *end;
	bool bad;
};

static uint64_t get_var(struct reader *r)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 7 * VARINT_MAX && r->p < r->end;
	     shift += 7) {
		unsigned char b = *r->p++;

		if (shift == 63 && b > 1)
			break;		/* past 64 bits */
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

static int64_t get_svar(struct reader *r)
{
	uint64_t v = get_var(r);

	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The bytes of cs->names that its imports and exports use. */
static size_t names_used(const struct callsites *cs)
{
	size_t end = 0;

	for (size_t i = 0; i < cs->n; i++)
		if (cs->v[i].import) {
			size_t e = (size_t)(cs->v[i].import - cs->names) +
				   strlen(cs->v[i].import) + 1;
			end = e > end ? e : end;
		}
	for (size_t i = 0; i < cs->nexports; i++) {
		size_t e = (size_t)(cs->exports[i].name - cs->names) +
			   strlen(cs->exports[i].name) + 1;
		end = e > end ? e : end;
	}
	return end;
}

/* Every function start the calls, exports and taken functions of @cs
 * name, sorted, no two alike, into *@out (*@n of them).  0 or
 * -ENOMEM. */
static int starts(const struct callsites *cs, uint64_t **out, size_t *n)
{
	uint64_t *v = malloc((2 * cs->n + cs->nexports + cs->ntaken + 1) *
			     sizeof(*v));
	size_t k = 0, u = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < cs->n; i++) {
		v[k++] = cs->v[i].caller;
		if (!cs->v[i].import && cs->v[i].callee != CALLSITE_INDIRECT)
			v[k++] = cs->v[i].callee;
	}
	for (size_t i = 0; i < cs->nexports; i++)
		v[k++] = cs->exports[i].addr;
	for (size_t i = 0; i < cs->ntaken; i++)
		v[k++] = cs->taken[i];
	if (radix__sort(v, k, sizeof(*v), 0, false))
		qsort(v, k, sizeof(*v), by_value);
	for (size_t i = 0; i < k; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	*out = v;
	*n = u;
	return 0;
}

/*
 * Names the functions @bc's calls join from @m, and moves every name
 * into one buffer: cs.names' then the labels, the pointers rebased.
 */
static int name_functions(struct module *m, struct build_calls *bc)
{
	struct callsites *cs = &bc->cs;
	size_t used = names_used(cs), len = used, cap = used + 4096, n;
	size_t *label_at = NULL;
	uint64_t *addrs = NULL;
	char *names = malloc(cap);
	int ret = -ENOMEM;

	if (!names || starts(cs, &addrs, &n) ||
	    !(bc->funcs = malloc((n ? n : 1) * sizeof(*bc->funcs))) ||
	    !(label_at = malloc((n ? n : 1) * sizeof(*label_at))))
		goto out;
	memcpy(names, cs->names, used);
	for (size_t i = 0; i < n; i++) {
		struct module_func f;
		char label[1024];
		size_t l;

		if (module__function(m, addrs[i], &f) || f.start != addrs[i])
			continue;
		module__func_label(m, addrs[i], f.name, label, sizeof(label));
		l = strlen(label) + 1;
		if (len + l > cap) {
			char *t;

			while (len + l > cap)
				cap *= 2;
			if (!(t = realloc(names, cap)))
				goto out;
			names = t;
		}
		memcpy(names + len, label, l);
		label_at[bc->nfuncs] = len;
		bc->funcs[bc->nfuncs++] = (struct build_func){ addrs[i], NULL,
							       f.name != NULL };
		len += l;
	}
	for (size_t i = 0; i < bc->nfuncs; i++)
		bc->funcs[i].label = names + label_at[i];
	for (size_t i = 0; i < cs->n; i++)
		if (cs->v[i].import) {
			cs->v[i].import = names + (cs->v[i].import - cs->names);
			cs->v[i].callee = 0;	/* linked by name */
		}
	for (size_t i = 0; i < cs->nexports; i++)
		cs->exports[i].name = names + (cs->exports[i].name - cs->names);
	free(cs->names);
	cs->names = names;
	names = NULL;
	bc->names_len = len;
	ret = 0;
out:
	free(names);
	free(addrs);
	free(label_at);
	return ret;
}

int build_calls__scan(struct module *m, struct build_calls *out)
{
	int ret;

	*out = (struct build_calls){ 0 };
	ret = callsites__scan(m, &out->cs);
	if (!ret)
		ret = name_functions(m, out);
	if (ret)
		build_calls__exit(out);
	return ret;
}

/* A name as the blob gives it: its offset in the names. */
static uint64_t name_off(const struct build_calls *bc, const char *name)
{
	return (uint64_t)(name - bc->cs.names);
}

static unsigned char *pack_rows(const struct build_calls *bc,
				unsigned char *p)
{
	const struct callsites *cs = &bc->cs;
	uint64_t last = 0;

	for (size_t i = 0; i < cs->n; i++) {
		const struct callsite *c = &cs->v[i];

		p = put_var(p, c->ret - last);
		p = put_svar(p, (int64_t)(c->ret - c->caller));
		p = put_var(p, c->import ? name_off(bc, c->import) + ROW_IMPORT :
			       c->callee == CALLSITE_INDIRECT ? ROW_INDIRECT :
			       ROW_DIRECT);
		if (!c->import && c->callee != CALLSITE_INDIRECT)
			p = put_svar(p, (int64_t)(c->callee - c->ret));
		p = put_svar(p, c->delta);
		last = c->ret;
	}
	for (size_t i = 0; i < cs->nexports; i++) {
		p = put_var(p, cs->exports[i].addr);
		p = put_var(p, name_off(bc, cs->exports[i].name));
	}
	last = 0;
	for (size_t i = 0; i < bc->nfuncs; i++) {
		const struct build_func *f = &bc->funcs[i];

		p = put_var(p, f->start - last);
		p = put_var(p, name_off(bc, f->label) << 1 | f->symbol);
		last = f->start;
	}
	last = 0;
	for (size_t i = 0; i < cs->ntaken; i++) {
		p = put_var(p, cs->taken[i] - last);
		last = cs->taken[i];
	}
	return p;
}

int build_calls__pack(const struct build_calls *bc, unsigned char **blob,
		      size_t *len)
{
	const struct callsites *cs = &bc->cs;
	size_t most = HEADER + (cs->n * 5 + cs->nexports * 2 +
				bc->nfuncs * 2 + cs->ntaken) * VARINT_MAX +
		      bc->names_len;
	unsigned char *b = malloc(most), *p, *t;

	if (!b)
		return -ENOMEM;
	memcpy(b, MAGIC, 4);
	put_u32(b + 4, VERSION);
	put_u64(b + 8, cs->n);
	put_u64(b + 16, cs->nexports);
	put_u64(b + 24, bc->nfuncs);
	put_u64(b + 32, cs->unknown);
	put_u64(b + 40, bc->names_len);
	put_u64(b + 48, cs->ntaken);
	p = pack_rows(bc, b + HEADER);
	memcpy(p, cs->names, bc->names_len);
	p += bc->names_len;
	*len = (size_t)(p - b);
	*blob = (t = realloc(b, *len)) ? t : b;
	return 0;
}

/* The name at offset @off of the names, or NULL when @off is outside
 * them (they end in a NUL, so any offset inside is a string). */
static const char *name_at(const struct build_calls *bc, uint64_t off,
			   struct reader *r)
{
	if (off >= bc->names_len) {
		r->bad = true;
		return NULL;
	}
	return bc->cs.names + off;
}

/* The counts of the header at @b (@len bytes), checked against what
 * the records' @len bytes can hold: 0, -ESTALE (another version's) or
 * -EINVAL. */
static int header(const unsigned char *b, size_t len, uint64_t c[COUNTS])
{
	uint64_t rows;

	/* the version first: an older blob's header is shorter */
	if (len < 8 || memcmp(b, MAGIC, 4))
		return -EINVAL;
	if (get_u32(b + 4) != VERSION)
		return -ESTALE;
	if (len < HEADER)
		return -EINVAL;
	for (int i = 0; i < COUNTS; i++)
		c[i] = get_u64(b + 8 + 8 * i);
	if (c[4] > len - HEADER)
		return -EINVAL;
	rows = len - HEADER - c[4];
	return c[0] > rows / CALL_MIN || c[1] > rows / EXPORT_MIN ||
	       c[2] > rows / FUNC_MIN || c[5] > rows / TAKEN_MIN ||
	       c[0] * CALL_MIN + c[1] * EXPORT_MIN + c[2] * FUNC_MIN +
	       c[5] * TAKEN_MIN > rows ? -EINVAL : 0;
}

static int unpack_names(const unsigned char *p, struct build_calls *bc)
{
	if (!(bc->cs.names = malloc(bc->names_len ? bc->names_len : 1)))
		return -ENOMEM;
	memcpy(bc->cs.names, p, bc->names_len);
	return bc->names_len && bc->cs.names[bc->names_len - 1] ? -EINVAL : 0;
}

/* The calls, exports and functions from @r, each checked as it is
 * read: names inside the names, calls by return address, exports by
 * name and functions by start, as the lookups that bisect them need;
 * and the records end where the names begin. */
static int unpack_rows(struct reader *r, struct build_calls *bc)
{
	struct callsites *cs = &bc->cs;
	uint64_t last = 0;

	for (size_t i = 0; i < cs->n && !r->bad; i++) {
		struct callsite *c = &cs->v[i];
		uint64_t import;

		c->ret = last + get_var(r);
		c->caller = c->ret - (uint64_t)get_svar(r);
		import = get_var(r);
		c->import = import >= ROW_IMPORT ?
			    name_at(bc, import - ROW_IMPORT, r) : NULL;
		c->callee = import >= ROW_IMPORT ? 0 :
			    import == ROW_INDIRECT ? CALLSITE_INDIRECT :
			    c->ret + (uint64_t)get_svar(r);
		c->delta = get_svar(r);
		r->bad |= c->ret < last;
		last = c->ret;
	}
	for (size_t i = 0; i < cs->nexports && !r->bad; i++) {
		struct callsite_export *x = &cs->exports[i];

		x->addr = get_var(r);
		x->name = name_at(bc, get_var(r), r);
		r->bad |= !r->bad && i && strcmp(x[-1].name, x->name) > 0;
	}
	last = 0;
	for (size_t i = 0; i < bc->nfuncs && !r->bad; i++) {
		struct build_func *f = &bc->funcs[i];
		uint64_t d = get_var(r), label = get_var(r);

		f->start = last + d;
		f->label = name_at(bc, label >> 1, r);
		f->symbol = label & 1;
		r->bad |= (i && !d) || f->start < last;
		last = f->start;
	}
	last = 0;
	for (size_t i = 0; i < cs->ntaken && !r->bad; i++) {
		uint64_t d = get_var(r);

		cs->taken[i] = last + d;
		r->bad |= (i && !d) || cs->taken[i] < last;
		last = cs->taken[i];
	}
	return r->bad || r->p != r->end ? -EINVAL : 0;
}

int build_calls__unpack(const void *blob, size_t len, struct build_calls *bc)
{
	const unsigned char *b = blob;
	uint64_t c[COUNTS];
	int ret = header(b, len, c);

	*bc = (struct build_calls){ 0 };
	if (ret)
		return ret;
	bc->cs.n = c[0];
	bc->cs.nexports = c[1];
	bc->nfuncs = c[2];
	bc->cs.unknown = c[3];
	bc->names_len = c[4];
	bc->cs.ntaken = c[5];
	ret = -ENOMEM;
	if ((bc->cs.v = malloc((c[0] ? c[0] : 1) * sizeof(*bc->cs.v))) &&
	    (bc->cs.taken = malloc((c[5] ? c[5] : 1) *
				   sizeof(*bc->cs.taken))) &&
	    (bc->cs.exports = malloc((c[1] ? c[1] : 1) *
				     sizeof(*bc->cs.exports))) &&
	    (bc->funcs = malloc((c[2] ? c[2] : 1) * sizeof(*bc->funcs))))
		ret = unpack_names(b + len - c[4], bc);
	if (!ret) {
		struct reader r = { b + HEADER, b + len - c[4], false };

		ret = unpack_rows(&r, bc);
	}
	if (ret)
		build_calls__exit(bc);
	return ret;
}

static int by_start(const void *key, const void *elem)
{
	uint64_t k = *(const uint64_t *)key;
	uint64_t s = ((const struct build_func *)elem)->start;

	return (k > s) - (k < s);
}

const struct build_func *build_calls__function(const struct build_calls *bc,
					       uint64_t start)
{
	return bc->nfuncs ? bsearch(&start, bc->funcs, bc->nfuncs,
				    sizeof(*bc->funcs), by_start) : NULL;
}

void build_calls__exit(struct build_calls *bc)
{
	if (!bc)
		return;
	callsites__exit(&bc->cs);
	free(bc->funcs);
	*bc = (struct build_calls){ 0 };
}
