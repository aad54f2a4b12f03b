/*
 * svg.c - a flame graph of a profile's k-contexts, drawn by icppd: one
 * self-contained SVG file, nothing loaded from the network.  The frames
 * are drawn statically (any SVG viewer shows the picture); a script
 * inside adds what a browser offers: click to zoom, reset, search with
 * highlight, and a line naming the frame under the pointer (each frame
 * also has a <title>, the tooltip).
 *
 * The stacks are folded output's (folded__stacks(): the same --k,
 * selection and --comm-frame), merged into a tree, root at the bottom,
 * callers below their callees, siblings in name order.  Weight whose
 * callers are unknown is under one "[unknown callers]" frame, drawn in
 * grey with the frames above it in pale colours: their own frames are
 * known, where they were called from is not.
 *
 * With a baseline (--base) it is a differential flame graph: frames as
 * wide as their samples now, coloured by the change of their share
 * (inclusive) against the base, red where it grew and blue where it
 * shrank, the deeper the more; frames only the base has are not drawn.
 *
 * A big program's graph (g++: 2,400 px tall) must open on its base and
 * use the window: the file is laid out SVG_WIDTH wide, root at the
 * bottom (what a viewer without scripts shows), and the script lays it
 * out again for the window's width, and top-down (an icicle, the base
 * under the buttons) when it is taller than the window; a button turns
 * it over.  Siblings narrower than a pixel on a screen MERGE_WIDTH_PX
 * wide are merged into one frame, "[N narrower than a pixel]", as
 * flamegraph.pl's --minwidth leaves them out, but keeping their width:
 * every frame wider than a pixel on any screen up to that width is
 * drawn, and the file stays small.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/hindex.h"
#include "common/printable.h"
#include "report/render.h"

#define SVG_WIDTH 1200
#define SVG_PAD 10		/* left and right margins */
#define FRAME_HEIGHT 16		/* one level, a pixel of it the gap */
#define TOP 76			/* title, buttons, an icicle's details */
#define BOTTOM 34		/* the details line */
#define CHAR_WIDTH 7.0		/* of the 12 px font, to fit labels */
/* Frames narrower than a pixel of a screen this wide are merged with
 * their narrow siblings (a profile of 10,000 contexts would otherwise
 * be megabytes of invisible frames); a merged frame narrower than
 * MIN_WIDTH_PX of the file's layout is left out. */
#define MERGE_WIDTH_PX 2560
#define MIN_WIDTH_PX 0.1
/* Levels drawn: a crafted database can hold paths of any depth. */
#define SVG_MAX_DEPTH 2048

struct fnode {
	const char *name;	/* into the key it came from (names) */
	uint32_t parent;	/* UINT32_MAX: a root */
	uint32_t depth;
	double weight;		/* inclusive */
	double base;		/* inclusive, in the baseline */
	bool uncertain;		/* under [unknown callers] */
};

struct flame {
	const struct cct *t;
	struct fnode *n;
	size_t len, cap;
	char **names;		/* the baseline's keys, split in place */
	size_t nnames, names_cap;
	struct hindex index;	/* (parent, name) -> node */
	uint32_t max_depth;	/* of the frames with weight */
	bool base;		/* adding the baseline's stacks */
	bool offcpu;		/* blocked time: blue frames */
	double base_total, max_change;	/* a differential graph's */
};

static uint64_t child_hash(uint32_t parent, const char *name)
{
	return hindex__mix(hindex__string(name), parent);
}

/* The child @name of @parent, made when new; UINT32_MAX when out of
 * memory. */
static uint32_t child(struct flame *fl, uint32_t parent, const char *name,
		      uint32_t depth, bool uncertain)
{
	uint64_t h = child_hash(parent, name);
	struct hindex_probe p = { HINDEX_NONE, 0 };
	uint32_t i;

	while ((i = hindex__next(&fl->index, &p, h)) != HINDEX_NONE)
		if (fl->n[i].parent == parent && !strcmp(fl->n[i].name, name))
			return i;
	if (fl->len >= UINT32_MAX - 1 ||
	    grow(&fl->n, &fl->cap, fl->len + 1, sizeof(*fl->n), 1024) ||
	    hindex__insert(&fl->index, h, (uint32_t)fl->len))
		return UINT32_MAX;
	fl->n[fl->len] = (struct fnode){ name, parent, depth, 0, 0,
					 uncertain };
	return (uint32_t)fl->len++;
}

/* One frame of a stack into the tree, below @at: the node. */
static uint32_t add_frame(struct flame *fl, uint32_t at, const char *name,
			  uint32_t depth, bool *uncertain, double weight)
{
	*uncertain |= !strcmp(name, CCT_UNKNOWN_ROOT);
	at = child(fl, at, name, depth, *uncertain);
	if (at == UINT32_MAX)
		return at;
	if (fl->base) {
		fl->n[at].base += weight;
		return at;
	}
	fl->n[at].weight += weight;
	if (depth > fl->max_depth)
		fl->max_depth = depth;
	return at;
}

/* folded__stacks()'s callback: the profile's frames into the tree, by
 * their names (a name may hold ';': it stays one frame). */
static int add_stack(void *arg, const int64_t *frames, size_t n,
		     struct folded_group group, double weight)
{
	struct flame *fl = arg;
	uint32_t at = UINT32_MAX;
	bool uncertain = false;

	(void)group;
	for (size_t i = 0; i < n && i < UINT32_MAX; i++)
		if ((at = add_frame(fl, at, cct__root_name(fl->t, frames[i]),
				    (uint32_t)i, &uncertain, weight)) ==
		    UINT32_MAX)
			return -ENOMEM;
	return 0;
}

/* A baseline's folded key into the tree: split at each ';', as every
 * reader of folded files splits, each frame's own ';' (written as
 * FOLDED_SEMICOLON) back, so that it is the frame add_stack() names. */
static int add_key(struct flame *fl, const char *key, double weight)
{
	char *copy = strdup(key), *frame, *save = NULL;
	uint32_t at = UINT32_MAX, depth = 0;
	bool uncertain = false;

	if (!copy || grow(&fl->names, &fl->names_cap, fl->nnames + 1,
			  sizeof(*fl->names), 256)) {
		free(copy);
		return -ENOMEM;
	}
	fl->names[fl->nnames++] = copy;
	for (frame = strtok_r(copy, ";", &save); frame;
	     frame = strtok_r(NULL, ";", &save), depth++) {
		folded__unescape(frame);
		if ((at = add_frame(fl, at, frame, depth, &uncertain,
				    weight)) == UINT32_MAX)
			return -ENOMEM;
	}
	return 0;
}

/* A frame's change of share against the baseline, -1..1. */
static double change(const struct render *r, const struct flame *fl,
		     const struct fnode *n)
{
	return (r->total > 0 ? n->weight / r->total : 0) -
	       (fl->base_total > 0 ? n->base / fl->base_total : 0);
}

/* Node order for layout: by parent, then name (siblings together). */
static const struct flame *sort_fl;

static int cmp_node(const void *a, const void *b)
{
	const struct fnode *x = &sort_fl->n[*(const uint32_t *)a];
	const struct fnode *y = &sort_fl->n[*(const uint32_t *)b];
	int64_t px = x->parent == UINT32_MAX ? -1 : (int64_t)x->parent;
	int64_t py = y->parent == UINT32_MAX ? -1 : (int64_t)y->parent;

	if (px != py)
		return px < py ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Whether the UTF-8 sequence of @len bytes at @p (0: not one) is a
 * character XML 1.0 allows: tab, newline, CR, U+0020..U+D7FF,
 * U+E000..U+FFFD, U+10000 and up.  utf8__len() refuses surrogates;
 * U+FFFE and U+FFFF are valid UTF-8 that a browser refuses the whole
 * document for. */
static bool xml_char(const unsigned char *p, size_t len)
{
	if (len == 1)
		return p[0] >= 0x20 || p[0] == '\t' || p[0] == '\n' ||
		       p[0] == '\r';
	return len && !(len == 3 && p[0] == 0xef && p[1] == 0xbf &&
			(p[2] == 0xbe || p[2] == 0xbf));
}

/* XML text of @s's first @max characters: what XML reserves escaped,
 * and every byte or code point XML forbids as U+FFFD.  The names are
 * printable already (cct__define(): valid UTF-8, no control
 * character), but not every printable character is an XML one. */
static void xml(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; *p && i < max; i++) {
		size_t len = utf8__len(p);

		switch (*p) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default:
			if (xml_char(p, len))
				fwrite(p, 1, len, out);
			else
				fputs("\xef\xbf\xbd", out);	/* U+FFFD */
		}
		p += len ? len : 1;
	}
}

/* Characters in @s (UTF-8). */
static size_t chars(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	for (; *p; n++) {
		size_t len = utf8__len(p);

		p += len ? len : 1;
	}
	return n;
}

/* A colour from the name, so that one function has one colour across
 * graphs: warm for frames whose callers are known, grey and pale for
 * the unknown.  In a differential graph, red for a share that grew and
 * blue for one that shrank, as deep as the change is to the largest. */
static void colour(FILE *out, const struct flame *fl, const struct fnode *n,
		   double delta)
{
	uint64_t h = hindex__string(n->name);
	unsigned r = 205 + (unsigned)(h % 50), g = (unsigned)((h >> 8) % 230),
		 b = (unsigned)((h >> 16) % 55);

	if (fl->max_change > 0) {
		unsigned t = (unsigned)(210 * (delta < 0 ? -delta : delta) /
					fl->max_change);

		r = delta < 0 ? 255 - t : 255;
		g = 255 - t;
		b = delta > 0 ? 255 - t : 255;
	} else if (!strcmp(n->name, CCT_UNKNOWN_ROOT))
		r = g = b = 170;
	else if (fl->offcpu)	/* waiting, as perf and speedscope draw it */
		r = (unsigned)(h % 60), g = 90 + (unsigned)((h >> 8) % 110),
		b = 200 + (unsigned)((h >> 16) % 55);
	else if (n->uncertain)
		g = 190 + g % 40, b = 170 + b;
	fprintf(out, "#%02x%02x%02x", r, g, b);
}

/*
 * The script: the frames' places as fractions of the width and levels,
 * laid out again for the window (fit()), flame or icicle; zoom, search,
 * details.  Its printf arguments: SVG_WIDTH, SVG_PAD, FRAME_HEIGHT,
 * TOP, BOTTOM, CHAR_WIDTH.
 */
static const char script[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"'use strict';\n"
"var W0 = %d, PAD = %d, FH = %d, TOP = %d, BOTTOM = %d, CW = %.1f;\n"
"var W = W0, H, svg, frames = [], zoomed = null, icicle = false,\n"
"    details, matched, reset, orient, hits = null;\n"
"function label(f, w) {\n"
"  var n = Math.floor((w - 6) / CW);\n"
"  if (f.name.length <= n) return f.name;\n"
"  return n < 5 ? '' : f.name.slice(0, n - 2) + '..';\n"
"}\n"
"function level(d) { return icicle ? TOP + d * FH : H - BOTTOM - (d + 1) * FH; }\n"
"function place(f, x, w) {\n"
"  var y = level(f.depth);\n"
"  f.r.setAttribute('x', x.toFixed(1));\n"
"  f.r.setAttribute('y', y);\n"
"  f.r.setAttribute('width', Math.max(w, 0).toFixed(1));\n"
"  f.t.setAttribute('x', (x + 3).toFixed(1));\n"
"  f.t.setAttribute('y', y + FH - 5);\n"
"  f.t.textContent = label(f, w);\n"
"}\n"
"function zoom(z) {\n"
"  var span = W - 2 * PAD, s = span / z.fw;\n"
"  zoomed = z;\n"
"  reset.style.display = 'inline';\n"
"  frames.forEach(function (f) {\n"
"    var inside = f.fx >= z.fx - 1e-9 && f.fx + f.fw <= z.fx + z.fw + 1e-9;\n"
"    if (f.depth >= z.depth && inside) {\n"
"      f.g.style.display = ''; f.g.style.opacity = 1;\n"
"      place(f, PAD + (f.fx - z.fx) * s, f.fw * s);\n"
"    } else if (f.depth < z.depth && f.fx <= z.fx + 1e-9 && f.fx + f.fw >= z.fx + z.fw - 1e-9) {\n"
"      f.g.style.display = ''; f.g.style.opacity = 0.5;\n"
"      place(f, PAD, span);\n"
"    } else {\n"
"      f.g.style.display = 'none';\n"
"    }\n"
"  });\n"
"  if (hits) search(hits);\n"
"}\n"
"function unzoom() {\n"
"  var span = W - 2 * PAD;\n"
"  zoomed = null;\n"
"  reset.style.display = 'none';\n"
"  frames.forEach(function (f) {\n"
"    f.g.style.display = ''; f.g.style.opacity = 1;\n"
"    place(f, PAD + f.fx * span, f.fw * span);\n"
"  });\n"
"  if (hits) search(hits);\n"
"}\n"
"function redraw() { if (zoomed) zoom(zoomed); else unzoom(); }\n"
"/* the window's width, each level FH high: flame (root at the bottom),\n"
"   or icicle (root at the top, under the buttons) */\n"
"function fit() {\n"
"  svg.setAttribute('width', '100%%');\n"
"  W = Math.max(Math.floor(svg.getBoundingClientRect().width), 320);\n"
"  svg.setAttribute('width', W);\n"
"  svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);\n"
"  ['title', 'subtitle'].forEach(function (id) {\n"
"    document.getElementById(id).setAttribute('x', W / 2); });\n"
"  document.getElementById('search').setAttribute('x', W - PAD);\n"
"  orient.setAttribute('x', W - PAD - 70);\n"
"  orient.textContent = icicle ? 'Flame' : 'Icicle';\n"
"  matched.setAttribute('x', W - PAD);\n"
"  details.setAttribute('y', icicle ? TOP - 8 : H - 12);\n"
"  matched.setAttribute('y', icicle ? TOP - 8 : H - 12);\n"
"  redraw();\n"
"}\n"
"function search(re) {\n"
"  var spans = [], covered = 0, end = -1, z = zoomed;\n"
"  hits = re;\n"
"  frames.forEach(function (f) {\n"
"    var hit = re !== null && re.test(f.name);\n"
"    f.r.setAttribute('fill', hit ? '#e040e0' : f.fill);\n"
"    if (hit && f.g.style.display !== 'none' && f.g.style.opacity != 0.5)\n"
"      spans.push([f.fx, f.fx + f.fw]);\n"
"  });\n"
"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
"  spans.forEach(function (s) {\n"
"    if (s[0] > end) { covered += s[1] - s[0]; end = s[1]; }\n"
"    else if (s[1] > end) { covered += s[1] - end; end = s[1]; }\n"
"  });\n"
"  matched.textContent = re === null ? '' : 'Matched: ' +\n"
"    (100 * covered / (z ? z.fw : 1)).toFixed(1) + '%%';\n"
"}\n"
"function ask() {\n"
"  if (hits) { hits = null; search(null); return; }\n"
"  var s = prompt('Search for a function (regular expression):', '');\n"
"  if (s) { try { search(new RegExp(s)); } catch (e) { alert(e); } }\n"
"}\n"
"window.addEventListener('load', function () {\n"
"  var span = W0 - 2 * PAD, hash = location.hash.slice(1).split('&');\n"
"  svg = document.documentElement;\n"
"  H = +svg.getAttribute('height');\n"
"  details = document.getElementById('details');\n"
"  matched = document.getElementById('matched');\n"
"  reset = document.getElementById('reset');\n"
"  orient = document.getElementById('orient');\n"
"  Array.prototype.forEach.call(document.getElementById('frames').children,\n"
"  function (g) {\n"
"    var r = g.getElementsByTagName('rect')[0], tt = g.getElementsByTagName('title')[0];\n"
"    var t = g.getElementsByTagName('text')[0], f = { g: g, r: r, t: t,\n"
"      fx: (+r.getAttribute('x') - PAD) / span, fw: +r.getAttribute('width') / span,\n"
"      depth: Math.round((H - BOTTOM - +r.getAttribute('y')) / FH) - 1,\n"
"      fill: r.getAttribute('fill'),\n"
"      name: tt.textContent.split('\\n')[0], info: tt.textContent.replace('\\n', ': ') };\n"
"    frames.push(f);\n"
"    g.addEventListener('click', function () { zoom(f); });\n"
"    g.addEventListener('mouseover', function () { details.textContent = f.info; });\n"
"    g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
"  });\n"
"  reset.addEventListener('click', unzoom);\n"
"  orient.addEventListener('click', function () { icicle = !icicle; fit(); });\n"
"  /* taller than the window: the base first, under the buttons */\n"
"  icicle = H > window.innerHeight;\n"
"  /* #flame, #icicle, #zoom=NAME&search=RE: a view to link to, or for a test */\n"
"  hash.forEach(function (kv) {\n"
"    if (kv === 'flame' || kv === 'icicle') icicle = kv === 'icicle'; });\n"
"  fit();\n"
"  hash.forEach(function (kv) {\n"
"    var k = kv.split('=')[0], v = decodeURIComponent(kv.slice(k.length + 1));\n"
"    var best = null;\n"
"    if (k === 'zoom') frames.forEach(function (f) {\n"
"      if (f.name === v && (!best || f.fw > best.fw)) best = f; });\n"
"    if (best) zoom(best);\n"
"    if (k === 'search' && v) { try { search(new RegExp(v)); } catch (e) {} }\n"
"  });\n"
"  document.getElementById('search').addEventListener('click', ask);\n"
"  window.addEventListener('resize', fit);\n"
"  window.addEventListener('keydown', function (e) {\n"
"    if ((e.ctrlKey && e.key === 'f') || e.key === '/') { e.preventDefault(); ask(); }\n"
"    if (e.key === 'Escape') { unzoom(); if (hits) { hits = null; search(null); } }\n"
"  });\n"
"});\n"
"]]></script>\n";

/* One frame: its title (name, samples, share, change), box and label. */
static void frame(const struct render *r, const struct flame *fl,
		  const struct fnode *n, const char *title, double px, double w,
		  double y)
{
	size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_WIDTH) : 0;
	bool whole = r->integral || n->weight == (double)(int64_t)n->weight;

	fputs("<g><title>", r->out);
	xml(r->out, title, SIZE_MAX);
	fprintf(r->out, whole ? "\n%.0f samples, %.2f%%" :
		"\n%.1f samples, %.2f%%", n->weight,
		r->total > 0 ? 100 * n->weight / r->total : 0.0);
	if (r->v->base && n->name != title)
		fprintf(r->out, ", %+.2f points against the base (%.2f%%)",
			100 * change(r, fl, n), fl->base_total > 0 ?
			100 * n->base / fl->base_total : 0.0);
	fprintf(r->out, "</title><rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" "
		"height=\"%d\" fill=\"", px, y, w, FRAME_HEIGHT - 1);
	if (n->name != title)
		fputs("#d8d8d0", r->out);	/* merged: no one function */
	else
		colour(r->out, fl, n, change(r, fl, n));
	fprintf(r->out, "\"/><text x=\"%.1f\" y=\"%.0f\">", px + 3,
		y + FRAME_HEIGHT - 5);
	if (chars(title) <= fit) {
		xml(r->out, title, fit);
	} else if (fit >= 5) {	/* as label() in the script */
		xml(r->out, title, fit - 2);
		fputs("..", r->out);
	}
	fputs("</text></g>\n", r->out);
}

/*
 * The frames, each placed after its previous siblings in name order;
 * siblings narrower than a pixel of MERGE_WIDTH_PX after the others, as
 * one frame, their own children not drawn.  0 or -ENOMEM.
 */
static int draw(const struct render *r, const struct flame *fl,
		const uint32_t *order, size_t height)
{
	double scale = (SVG_WIDTH - 2 * SVG_PAD) / (r->total > 0 ? r->total : 1);
	double pixel = (r->total > 0 ? r->total : 1) /
		       (MERGE_WIDTH_PX - 2 * SVG_PAD);
	double *x = calloc(fl->len ? fl->len : 1, sizeof(*x));
	double *next = calloc(fl->len + 1, sizeof(*next));
	/* per parent (the roots' at len): narrow children, their weight */
	double *narrow = calloc(fl->len + 1, sizeof(*narrow));
	uint32_t *nnarrow = calloc(fl->len + 1, sizeof(*nnarrow));
	bool *hidden = calloc(fl->len ? fl->len : 1, sizeof(*hidden));
	int ret = -ENOMEM;

	if (!x || !next || !narrow || !nnarrow || !hidden)
		goto out;
	ret = 0;
	/* children follow parents in @order (sorted by parent index, and
	 * a parent is made before its children), so one pass places all:
	 * each node starts where its parent's previous child ended */
	for (size_t k = 0; k < fl->len; k++) {
		uint32_t i = order[k];
		const struct fnode *n = &fl->n[i];
		size_t up = n->parent == UINT32_MAX ? fl->len : n->parent;
		double *at = &next[up];

		if (up != fl->len && hidden[up]) {
			hidden[i] = true;
			continue;
		}
		if (n->weight < pixel) {
			hidden[i] = true;
			narrow[up] += n->weight;
			nnarrow[up]++;
			continue;
		}
		if (up != fl->len && *at < x[up])
			*at = x[up];
		x[i] = *at;
		*at += n->weight;
	}
	fputs("<g id=\"frames\">\n", r->out);
	for (size_t i = 0; i <= fl->len; i++) {
		const struct fnode *n = i < fl->len ? &fl->n[i] : NULL;
		uint32_t depth = n ? n->depth + 1 : 0;
		double y;

		if (n && !hidden[i] && n->depth < SVG_MAX_DEPTH &&
		    n->weight * scale >= MIN_WIDTH_PX)
			frame(r, fl, n, n->name, SVG_PAD + x[i] * scale,
			      n->weight * scale, (double)height - BOTTOM -
			      (double)(n->depth + 1) * FRAME_HEIGHT);
		/* the children merged, after the others */
		if (!nnarrow[i] || narrow[i] * scale < MIN_WIDTH_PX ||
		    depth >= SVG_MAX_DEPTH || (n && hidden[i]))
			continue;
		{
			struct fnode m = { .weight = narrow[i], .depth = depth };
			char title[64];
			double at = n ? (next[i] > x[i] ? next[i] : x[i]) :
				    next[fl->len];

			snprintf(title, sizeof(title), "[%u narrower than a "
				 "pixel]", nnarrow[i]);
			y = (double)height - BOTTOM -
			    (double)(depth + 1) * FRAME_HEIGHT;
			frame(r, fl, &m, title, SVG_PAD + at * scale,
			      narrow[i] * scale, y);
		}
	}
	fputs("</g>\n", r->out);
out:
	free(x);
	free(next);
	free(narrow);
	free(nnarrow);
	free(hidden);
	return ret;
}

static void header(const struct render *r, size_t height)
{
	const struct infer_stats *s = &r->p->stats;
	double n = s->samples > 0 ? s->samples : 1;

	fprintf(r->out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%d\" height=\"%zu\" viewBox=\"0 0 %d %zu\">\n"
		"<style>text { font: 12px Verdana, sans-serif; fill: #000; }\n"
		"#frames text { pointer-events: none; }\n"
		"#frames g { cursor: pointer; }\n"
		"#frames rect { stroke: #fff; stroke-width: 0.5; }\n"
		".button { cursor: pointer; fill: #1a4f9c; }\n"
		"</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#f6f6f0\"/>\n"
		"<text id=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\" "
		"style=\"font-size: 17px\">%s: run %lld</text>\n",
		SVG_WIDTH, height, SVG_WIDTH, height, SVG_WIDTH / 2,
		r->p->offcpu ? "Off-CPU flame graph (blocked time, us)" :
		r->p->wall ? "Wall-clock flame graph (us)" : "Flame graph",
		(long long)r->p->run.id);
	if (r->v->base)
		fprintf(r->out, "<text id=\"subtitle\" x=\"%d\" y=\"44\" "
			"text-anchor=\"middle\" fill=\"#555\">%.0f samples "
			"against a base of %.0f: "
			"red grew, blue shrank (share of all samples)</text>\n",
			SVG_WIDTH / 2, r->total,
			profile_base__total(r->v->base));
	else
		fprintf(r->out, "<text id=\"subtitle\" x=\"%d\" y=\"44\" "
			"text-anchor=\"middle\" fill=\"#555\">%.0f samples; "
			"callers inferred: %.1f%% "
			"precise, %.1f%% ambiguous, %.1f%% searched, %.1f%% "
			"unknown (grey)</text>\n", SVG_WIDTH / 2, s->samples,
			100 * s->by_how[CCT_PRECISE] / n,
			100 * s->by_how[CCT_AMBIGUOUS] / n,
			100 * s->by_how[CCT_SEARCHED] / n,
			100 * s->by_how[CCT_UNKNOWN] / n);
	fprintf(r->out, "<text id=\"reset\" class=\"button\" x=\"%d\" y=\"24\" "
		"style=\"display: none\">Reset zoom</text>\n"
		"<text id=\"search\" class=\"button\" x=\"%d\" y=\"24\" "
		"text-anchor=\"end\">Search</text>\n"
		"<text id=\"orient\" class=\"button\" x=\"%d\" y=\"24\" "
		"text-anchor=\"end\">Icicle</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%zu\"> </text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%zu\" text-anchor=\"end\">"
		"</text>\n", SVG_PAD, SVG_WIDTH - SVG_PAD,
		SVG_WIDTH - SVG_PAD - 70, SVG_PAD, height - 12,
		SVG_WIDTH - SVG_PAD, height - 12);
}

int render__svg(const struct render *r)
{
	struct flame fl = { .t = r->p->cct, .offcpu = r->p->offcpu };
	uint32_t *order = NULL;
	size_t height;
	int err = folded__stacks(r->p->cct, r->v->k, add_stack, &fl);

	if (err) {
		folded__forest_error(err);
		goto out;
	}
	if (r->v->base) {	/* the baseline's stacks into the same tree */
		fl.base = true;
		fl.base_total = profile_base__total(r->v->base);
		for (size_t i = 0; i < profile_base__size(r->v->base) && !err; i++) {
			double w;
			const char *key = profile_base__key(r->v->base, i, &w);

			err = add_key(&fl, key, w);
		}
		for (size_t i = 0; i < fl.len; i++) {
			double d = change(r, &fl, &fl.n[i]);

			if ((d < 0 ? -d : d) > fl.max_change)
				fl.max_change = d < 0 ? -d : d;
		}
		if (err) {
			folded__forest_error(err);
			goto out;
		}
	}
	/* every node, the baseline's own included */
	if (!(order = malloc((fl.len ? fl.len : 1) * sizeof(*order)))) {
		err = -ENOMEM;
		folded__forest_error(err);
		goto out;
	}
	for (size_t i = 0; i < fl.len; i++)
		order[i] = (uint32_t)i;
	sort_fl = &fl;
	qsort(order, fl.len, sizeof(*order), cmp_node);
	height = TOP + BOTTOM + FRAME_HEIGHT *
		 (size_t)(fl.len ? (fl.max_depth < SVG_MAX_DEPTH ?
				    fl.max_depth + 1 : SVG_MAX_DEPTH) : 1);
	header(r, height);
	if ((err = draw(r, &fl, order, height))) {
		folded__forest_error(err);
		goto out;
	}
	fprintf(r->out, script, SVG_WIDTH, SVG_PAD, FRAME_HEIGHT, TOP, BOTTOM,
		CHAR_WIDTH);
	fputs("</svg>\n", r->out);
out:
	for (size_t i = 0; i < fl.nnames; i++)
		free(fl.names[i]);
	free(fl.names);
	free(fl.n);
	free(order);
	hindex__exit(&fl.index);
	return err ? -1 : 0;
}
