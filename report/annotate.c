/*
 * annotate.c - a function annotated, as perf annotate prints it
 * (annotate.h).
 */
#define _GNU_SOURCE
#include "report/annotate.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/printable.h"
#include "common/sys.h"

/* A source file read once: its lines. */
struct source {
	const char *file;	/* the annotation's name of it */
	char *text;		/* NULL: not readable (shown by line only) */
	size_t size;
	const char **line;	/* line[i]: line i + 1 */
	size_t nlines;
};

/* Reads @file (a regular file, at most ANNOTATE_MAX_SOURCE bytes, never
 * blocking on a FIFO or a device it names) into @s. */
static void source_read(struct source *s, const char *file)
{
	int fd = sys__open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0);
	struct stat sb;
	size_t cap = 0;
	ssize_t got;

	*s = (struct source){ .file = file };
	if (fd < 0)
		return;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_size < 0 ||
	    (size_t)sb.st_size > ANNOTATE_MAX_SOURCE ||
	    !(s->text = malloc((size_t)sb.st_size + 1))) {
		close(fd);
		return;
	}
	while (s->size < (size_t)sb.st_size &&
	       (got = read(fd, s->text + s->size,
			   (size_t)sb.st_size - s->size)) > 0)
		s->size += (size_t)got;
	close(fd);
	s->text[s->size] = '\0';
	for (char *p = s->text; p < s->text + s->size || !s->nlines;) {
		char *nl = memchr(p, '\n', s->size - (size_t)(p - s->text));
		const char **g;

		if (s->nlines == cap) {
			cap = cap ? 2 * cap : 256;
			g = realloc(s->line, cap * sizeof(*g));
			if (!g) {
				free(s->text);
				free(s->line);
				*s = (struct source){ .file = file };
				return;
			}
			s->line = g;
		}
		s->line[s->nlines++] = p;
		if (!nl)
			break;
		*nl = '\0';
		p = nl + 1;
	}
}

/* The file of @file among @srcs (@n read so far, room for
 * ANNOTATE_MAX_FILES), or NULL past that many: a crafted line table
 * can name a file per instruction. */
static const struct source *source_of(struct source *srcs, size_t *n,
				      const char *file)
{
	for (size_t i = 0; i < *n; i++)
		if (srcs[i].file == file || !strcmp(srcs[i].file, file))
			return &srcs[i];
	if (*n == ANNOTATE_MAX_FILES)
		return NULL;
	source_read(&srcs[*n], file);
	return &srcs[(*n)++];
}

/* Source line @text with its tabs expanded (stops every 8 columns), as
 * a terminal shows it; the rest made printable. */
static void print_source(FILE *out, const char *text)
{
	char buf[1024];
	size_t n = 0;

	for (; *text && n + 9 < sizeof(buf); text++)
		if (*text == '\t')
			do
				buf[n++] = ' ';
			while (n % 8);
		else
			buf[n++] = *text;
	buf[n] = '\0';
	printable__write(out, buf);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* A source line and its samples, for the summary. */
struct line_sum {
	const char *file;
	unsigned line;
	double samples;
};

static int by_place(const void *x, const void *y)
{
	const struct line_sum *a = x, *b = y;
	int c = strcmp(a->file, b->file);

	return c ? c : a->line < b->line ? -1 : a->line > b->line;
}

static int heavier(const void *x, const void *y)
{
	const struct line_sum *a = x, *b = y;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return by_place(x, y);
}

/* perf annotate --print-line's summary: each sampled source line's
 * share of the function's samples, the heaviest first. */
static void print_summary(FILE *out, const struct annotation *a)
{
	struct line_sum *v = calloc(a->ninsns ? a->ninsns : 1, sizeof(*v));
	size_t n = 0, m = 0;

	if (!v)
		return;
	for (size_t i = 0; i < a->ninsns; i++)
		if (a->insns[i].samples > 0 && a->insns[i].file)
			v[n++] = (struct line_sum){ a->insns[i].file,
				a->insns[i].line, a->insns[i].samples };
	qsort(v, n, sizeof(*v), by_place);
	for (size_t i = 0; i < n; i++)	/* one entry per line */
		if (m && !by_place(&v[m - 1], &v[i]))
			v[m - 1].samples += v[i].samples;
		else
			v[m++] = v[i];
	qsort(v, m, sizeof(*v), heavier);
	fprintf(out, "\n Sorted summary of the source lines of ");
	printable__write(out, a->name);
	fprintf(out, "\n ----------------------------------------------\n\n");
	for (size_t i = 0; i < m; i++) {
		fprintf(out, "  %6.2f ", 100 * v[i].samples / a->samples);
		printable__write(out, base_name(v[i].file));
		fprintf(out, ":%u\n", v[i].line);
	}
	free(v);
}

void annotate__print(FILE *out, const struct annotation *a, const char *event,
		     int64_t run_id, bool source)
{
	struct source *srcs = source ? calloc(ANNOTATE_MAX_FILES,
					      sizeof(*srcs)) : NULL;
	size_t nsrcs = 0;
	const char *file = NULL;
	unsigned line = 0;

	if (a->lines)
		print_summary(out, a);
	fprintf(out, "\n Percent |      Source code & Disassembly of ");
	printable__write(out, a->module ? base_name(a->module) : "?");
	fprintf(out, " for %s (%.0f samples, percent: local period), run %"
		PRId64 "\n", event, a->samples, run_id);
	fprintf(out, "---------------------------------------------------"
		"---------------------------------------------\n");
	if (!a->ninsns) {
		fprintf(out, "         : ");
		printable__write(out, a->name);
		fprintf(out, ": no instructions: ");
		printable__write(out, a->why);
		fputc('\n', out);
		free(srcs);
		return;
	}
	fprintf(out, "         :      %016" PRIx64 " <", a->start);
	printable__write(out, a->name);
	fprintf(out, ">:\n");
	for (size_t i = 0; i < a->ninsns; i++) {
		const struct annotate_insn *x = &a->insns[i];

		if (x->file && (x->line != line || !file ||
				strcmp(x->file, file))) {
			const struct source *s = srcs ?
				source_of(srcs, &nsrcs, x->file) : NULL;

			fprintf(out, "         : %-5u", x->line);
			if (s && s->text && x->line && x->line <= s->nlines)
				print_source(out, s->line[x->line - 1]);
			else
				printable__write(out, base_name(x->file));
			fputc('\n', out);
			file = x->file;
			line = x->line;
		}
		fprintf(out, "  %6.2f :   %" PRIx64 ":   ", a->samples > 0 ?
			100 * x->samples / a->samples : 0.0, x->addr);
		printable__write(out, x->text);
		fputc('\n', out);
	}
	if (a->cut)
		fprintf(out, "         : (the function goes on: only its first "
			"%zu bytes are shown)\n", (size_t)(a->end - a->start));
	if (a->outside > 0)
		fprintf(out, "         : %.0f samples (%.2f%%) at no instruction "
			"shown\n", a->outside, 100 * a->outside / a->samples);
	for (size_t i = 0; i < nsrcs; i++) {
		free(srcs[i].text);
		free(srcs[i].line);
	}
	free(srcs);
}
