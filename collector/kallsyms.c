/*
 * kallsyms.c - the kernel's function names (kallsyms.h).
 */
#define _GNU_SOURCE
#include "collector/kallsyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/search.h"
#include "common/sys.h"

struct ksym {
	uint64_t addr;
	uint32_t name;		/* offset into names */
};

struct kallsyms {
	struct ksym *v;
	size_t n, cap;
	char *names;		/* every name, NUL after each */
	size_t names_len, names_cap;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

void kallsyms__delete(struct kallsyms *k)
{
	if (!k)
		return;
	free(k->v);
	free(k->names);
	free(k);
}

/* One line, "ffffffff81000000 T _stext [module]": a text symbol into
 * @k (others skipped).  0, or -ENOMEM. */
static int add_line(struct kallsyms *k, const char *line, size_t len)
{
	const char *end = line + len, *name, *stop;
	uint64_t addr = 0;
	char type;
	size_t n;

	for (; line < end && *line != ' '; line++) {
		int d = *line >= '0' && *line <= '9' ? *line - '0' :
			*line >= 'a' && *line <= 'f' ? *line - 'a' + 10 : -1;

		if (d < 0 || addr >> 60)
			return 0;
		addr = addr << 4 | (uint64_t)d;
	}
	if (!addr || end - line < 4 || line[2] != ' ')
		return 0;
	type = line[1];
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	name = line + 3;
	stop = memchr(name, '\t', (size_t)(end - name));
	n = (size_t)((stop ? stop : end) - name);
	while (n && (name[n - 1] == '\n' || name[n - 1] == ' '))
		n--;
	if (!n || n > 255 || k->names_len + n + 1 > UINT32_MAX)
		return 0;
	if (grow(&k->v, &k->cap, k->n + 1, sizeof(*k->v), 4096) ||
	    grow(&k->names, &k->names_cap, k->names_len + n + 1, 1, 1 << 20))
		return -ENOMEM;
	memcpy(k->names + k->names_len, name, n);
	k->names[k->names_len + n] = '\0';
	k->v[k->n++] = (struct ksym){ addr, (uint32_t)k->names_len };
	k->names_len += n + 1;
	return 0;
}

struct kallsyms *kallsyms__load(const char *path)
{
	FILE *f = sys__fopen(path ? path : "/proc/kallsyms");
	struct kallsyms *k = calloc(1, sizeof(*k));
	char *line = NULL;
	size_t cap = 0, bytes = 0;
	ssize_t len;

	if (!f || !k)
		goto fail;
	while ((len = getline(&line, &cap, f)) > 0 &&
	       k->n < KALLSYMS_MAX_SYMBOLS &&
	       (bytes += (size_t)len) <= KALLSYMS_MAX_BYTES)
		if (add_line(k, line, (size_t)len))
			goto fail;
	free(line);
	line = NULL;
	fclose(f);
	f = NULL;
	if (!k->n)		/* kptr_restrict: every address is 0 */
		goto fail;
	qsort(k->v, k->n, sizeof(*k->v), cmp_ksym);
	return k;
fail:
	free(line);
	if (f)
		fclose(f);
	kallsyms__delete(k);
	return NULL;
}

const char *kallsyms__find(const struct kallsyms *k, uint64_t addr)
{
	/* the last symbol at or before addr */
	size_t lo = LOWER_BOUND((size_t)0, k ? k->n : 0, i,
				k->v[i].addr <= addr);

	return lo ? k->names + k->v[lo - 1].name : NULL;
}

size_t kallsyms__count(const struct kallsyms *k)
{
	return k ? k->n : 0;
}
