/*
 * dwarf.c - what DWARF says at an address of a profile's modules (the
 * functions inlined there and the source lines), from the store where
 * a report kept it, else from the line reader (binary/lines.h), whose
 * answers are then kept (profile_dwarf).
 *
 * What a build-id's DWARF says never changes, so the store's table
 * inlined is a cache like build_calls: a later report or export of a
 * run of the build opens no DWARF for the addresses an earlier one
 * asked about (libc's debug file alone took a report 0.09 s to
 * decompress).  A row is one address: a line per frame, innermost
 * first, "NAME\tFILE\tLINE", the last one with no name (the function
 * the others are inlined in); names and files made printable, so no
 * tab or newline is in one.  Rows read back are checked as any input.
 *
 * Answers are kept by build (one build mapped by a hundred modules, a
 * library under many paths, is one), and the store is asked for each
 * address a report needs by the table's key, never for a build's rows
 * whole: a crafted database held a million rows of one build-id that
 * a hundred modules shared, and reading them per module took a report
 * 138.6 s and 9.2 GB.  A module with no build-id is a build of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/lines.h"
#include "common/grow.h"
#include "common/hindex.h"
#include "common/printable.h"
#include "profile/dwarf.h"
#include "schema/report_store.h"

/* The frames at one address of build mods[build]: frames[start ..];
 * n 0: unknown. */
struct answer {
	uint32_t build;
	uint64_t vaddr;
	uint32_t start, n;
};

/* A build (or a module without a build-id): the rows it read from the
 * store or from DWARF, to keep (texts[i]) or to mark read (NULL). */
struct mod {
	int64_t module;		/* without a build-id: its module */
	const char *build_id;
	uint64_t *vaddrs;
	char **texts;
	size_t n, vaddrs_cap, texts_cap;
};

struct profile_dwarf {
	const struct run_profile *p;
	struct lines *l;
	struct store *st;
	struct answer *answers;
	size_t nanswers, answers_cap;
	struct hindex index;		/* (module, vaddr) -> answer */
	struct lines_frame *frames;
	size_t nframes, frames_cap;
	char **strings;			/* names and files, printable */
	size_t nstrings, strings_cap;
	struct hindex string_index;
	struct mod *mods;
	size_t nmods, mods_cap;
	bool reading;			/* in store__reads_begin() */
};

struct profile_dwarf *profile_dwarf__new(const struct run_profile *p,
				       struct lines *l, struct store *st)
{
	struct profile_dwarf *d = calloc(1, sizeof(*d));

	if (d)
		*d = (struct profile_dwarf){ .p = p, .l = l, .st = st };
	return d;
}

/* @s (@len bytes; NUL-terminated when @len is SIZE_MAX) made printable,
 * as a string @d keeps, one copy per string; NULL when out of memory. */
static const char *keep_string(struct profile_dwarf *d, const char *s,
			       size_t len)
{
	char *raw = len == SIZE_MAX ? strdup(s) : strndup(s, len);
	char *p = raw ? printable__dup(raw) : NULL;
	struct hindex_probe pr = { HINDEX_NONE, 0 };
	uint64_t h;
	uint32_t i;

	free(raw);
	if (!p)
		return NULL;
	h = hindex__string(p);
	while ((i = hindex__next(&d->string_index, &pr, h)) != HINDEX_NONE)
		if (!strcmp(d->strings[i], p)) {
			free(p);
			return d->strings[i];
		}
	if (d->nstrings >= UINT32_MAX - 1 ||
	    grow(&d->strings, &d->strings_cap, d->nstrings + 1,
		 sizeof(*d->strings), 64) ||
	    hindex__insert(&d->string_index, h, (uint32_t)d->nstrings)) {
		free(p);
		return NULL;
	}
	return d->strings[d->nstrings++] = p;
}

static uint64_t answer_hash(uint32_t build, uint64_t vaddr)
{
	return hindex__mix(hindex__mix(14, build), vaddr);
}

/* The answer for @vaddr of build @build: @n frames, kept (names and
 * files already @d's).  0 or -ENOMEM. */
static int remember(struct profile_dwarf *d, uint32_t build, uint64_t vaddr,
		    const struct lines_frame *fr, size_t n)
{
	if (d->nanswers >= UINT32_MAX - 1 ||
	    grow(&d->frames, &d->frames_cap, d->nframes + n + 1,
		 sizeof(*d->frames), 256) ||
	    grow(&d->answers, &d->answers_cap, d->nanswers + 1,
		 sizeof(*d->answers), 256) ||
	    hindex__insert(&d->index, answer_hash(build, vaddr),
			   (uint32_t)d->nanswers))
		return -ENOMEM;
	memcpy(d->frames + d->nframes, fr, n * sizeof(*fr));
	d->answers[d->nanswers++] = (struct answer){ build, vaddr,
		(uint32_t)d->nframes, (uint32_t)n };
	d->nframes += n;
	return 0;
}

/* Line @at (@len bytes) of a stored row as a frame into @f: 1, 0 when
 * it is not "NAME\tFILE\tLINE", or -ENOMEM. */
static int stored_frame(struct profile_dwarf *d, const char *at, size_t len,
			struct lines_frame *f)
{
	const char *t1 = memchr(at, '\t', len), *t2;
	unsigned long line = 0;
	size_t digits;

	if (!t1 || !(t2 = memchr(t1 + 1, '\t', len - (size_t)(t1 + 1 - at))))
		return 0;
	digits = len - (size_t)(t2 + 1 - at);
	if (!digits || digits > 10 || (size_t)(t1 - at) > LINES_NAME_MAX)
		return 0;
	for (size_t i = 0; i < digits; i++) {
		if (t2[1 + i] < '0' || t2[1 + i] > '9')
			return 0;
		line = 10 * line + (unsigned long)(t2[1 + i] - '0');
	}
	if (line > UINT32_MAX)
		return 0;
	f->name = t1 > at ? keep_string(d, at, (size_t)(t1 - at)) : NULL;
	f->file = t2 > t1 + 1 ? keep_string(d, t1 + 1, (size_t)(t2 - t1 - 1)) :
		  NULL;
	f->line = (unsigned)line;
	return (t1 > at && !f->name) || (t2 > t1 + 1 && !f->file) ? -ENOMEM : 1;
}

int profile_dwarf__row(struct profile_dwarf *d, const char *text,
		      struct lines_frame *fr)
{
	size_t n = 0;

	for (const char *at = text; *at; n++) {
		size_t len = strcspn(at, "\n");
		int ret;

		if (n == LINES_MAX_FRAMES)
			return 0;
		ret = stored_frame(d, at, len, &fr[n]);
		if (ret <= 0)
			return ret;
		at += len + (at[len] == '\n');
		if (!*at != !fr[n].name)	/* the last alone unnamed */
			return 0;
	}
	return (int)n;
}

/* The build of module @m (its record in @d->mods), made at its first
 * question.  NULL when out of memory. */
static struct mod *mod_of(struct profile_dwarf *d, const struct store_module *m)
{
	for (size_t i = 0; i < d->nmods; i++)
		if (m->build_id[0] ? !strcmp(d->mods[i].build_id, m->build_id) :
		    d->mods[i].module == m->id)
			return &d->mods[i];
	if (d->nmods >= UINT32_MAX - 1 ||
	    grow(&d->mods, &d->mods_cap, d->nmods + 1, sizeof(*d->mods), 16))
		return NULL;
	d->mods[d->nmods] = (struct mod){ m->id, m->build_id };
	return &d->mods[d->nmods++];
}

/* Address @vaddr of build @md as a row for the store: @text (NULL:
 * one read from it, to be marked read).  0 or -ENOMEM. */
static int keep_row(struct mod *md, uint64_t vaddr, const char *text)
{
	if (!md->build_id[0])
		return 0;
	if (grow(&md->vaddrs, &md->vaddrs_cap, md->n + 1, sizeof(*md->vaddrs),
		 256) ||
	    grow(&md->texts, &md->texts_cap, md->n + 1, sizeof(*md->texts),
		 256) ||
	    (text && !(md->texts[md->n] = strdup(text))))
		return -ENOMEM;
	if (!text)
		md->texts[md->n] = NULL;
	md->vaddrs[md->n++] = vaddr;
	return 0;
}

/* The store's row for @vaddr of build @md into @fr: its frames, 0 when
 * it has none it can use (no row, a row a report did not write, a
 * store that cannot be read: the DWARF is read instead), or -ENOMEM. */
static int stored_at(struct profile_dwarf *d, struct mod *md, uint64_t vaddr,
		     struct lines_frame *fr)
{
	char text[STORE_MAX_CHAIN + 1];
	int n;

	if (!d->st || !md->build_id[0] ||
	    store__inlined_at(d->st, md->build_id, vaddr, text,
			      sizeof(text)) != 1)
		return 0;
	n = profile_dwarf__row(d, text, fr);
	if (n > 0 && keep_row(md, vaddr, NULL))
		return -ENOMEM;
	return n;
}

/* Frames @fr (@n, from the line reader) as a row of the store, into
 * @out (STORE_MAX_CHAIN bytes).  0, or -E2BIG when they do not fit. */
static int row_text(const struct lines_frame *fr, size_t n, char *out)
{
	size_t at = 0;

	for (size_t i = 0; i < n; i++) {
		int w = snprintf(out + at, STORE_MAX_CHAIN - at, "%s%s\t%s\t%u",
				 i ? "\n" : "", fr[i].name ? fr[i].name : "",
				 fr[i].file ? fr[i].file : "", fr[i].line);

		if (w < 0 || (size_t)w >= STORE_MAX_CHAIN - at)
			return -E2BIG;
		at += (size_t)w;
	}
	return 0;
}

/* Answer @fr (@n frames) read from DWARF for @md's build at @vaddr,
 * kept for the store.  0 or -ENOMEM. */
static int keep_answer(struct mod *md, uint64_t vaddr,
		       const struct lines_frame *fr, size_t n)
{
	char text[STORE_MAX_CHAIN];

	return row_text(fr, n, text) ? 0 : keep_row(md, vaddr, text);
}

int profile_dwarf__at(struct profile_dwarf *d, int64_t module_id,
		     uint64_t vaddr, const struct lines_frame **out)
{
	const struct store_module *m = run_profile__module(d->p, module_id);
	struct hindex_probe pr = { HINDEX_NONE, 0 };
	struct lines_frame fr[LINES_MAX_FRAMES];
	struct mod *md;
	uint32_t i, build;
	int n;

	*out = NULL;
	if (!m)
		return 0;
	if (!(md = mod_of(d, m)))
		return -ENOMEM;
	build = (uint32_t)(md - d->mods);
	while ((i = hindex__next(&d->index, &pr,
				 answer_hash(build, vaddr))) != HINDEX_NONE)
		if (d->answers[i].build == build &&
		    d->answers[i].vaddr == vaddr) {
			*out = d->frames + d->answers[i].start;
			return (int)d->answers[i].n;
		}
	n = stored_at(d, md, vaddr, fr);
	if (n < 0)
		return n;
	if (!n) {
		n = lines__inlined(d->l, m->path, m->build_id, vaddr, fr,
				   LINES_MAX_FRAMES);
		if (n < 0)
			n = 0;
		/* the line reader's strings as @d's own, made printable */
		for (int j = 0; j < n; j++) {
			if (fr[j].name && !(fr[j].name =
					    keep_string(d, fr[j].name, SIZE_MAX)))
				return -ENOMEM;
			if (fr[j].file && !(fr[j].file =
					    keep_string(d, fr[j].file, SIZE_MAX)))
				return -ENOMEM;
		}
		if (n && keep_answer(md, vaddr, fr, (size_t)n))
			return -ENOMEM;
	}
	if (remember(d, build, vaddr, fr, (size_t)n))
		return -ENOMEM;
	*out = d->frames + d->answers[d->nanswers - 1].start;
	return n;
}

void profile_dwarf__reads_begin(struct profile_dwarf *d)
{
	/* where it cannot begin, each read is its own */
	if (d)
		d->reading = d->st && !store__reads_begin(d->st);
}

void profile_dwarf__reads_end(struct profile_dwarf *d)
{
	if (d && d->reading) {
		store__reads_end(d->st);
		d->reading = false;
	}
}

void profile_dwarf__delete(struct profile_dwarf *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nmods; i++) {
		struct mod *m = &d->mods[i];

		/* a store that cannot be written keeps none: they are read
		 * from the DWARF again */
		if (m->n && d->st)
			store__keep_inlined(d->st, m->build_id, m->vaddrs,
					    m->texts, m->n);
		for (size_t j = 0; j < m->n; j++)
			free(m->texts[j]);
		free(m->texts);
		free(m->vaddrs);
	}
	for (size_t i = 0; i < d->nstrings; i++)
		free(d->strings[i]);
	free(d->strings);
	hindex__exit(&d->string_index);
	free(d->mods);
	free(d->answers);
	hindex__exit(&d->index);
	free(d->frames);
	free(d);
}
