/*
 * demo.c - the README's demo: a small word-frequency program in which
 * hash() is reached from two call paths (counting and lookup), so its
 * samples form two context identifiers, one per path.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline, noclone))
#define BUCKETS 4096

struct entry { char word[16]; unsigned count; struct entry *next; };
static struct entry *table[BUCKETS];

NOINLINE static uint32_t hash(const char *w)
{
	uint32_t h = 2166136261u;

	for (int r = 0; r < 64; r++)	/* a deliberately slow hash */
		for (const char *p = w; *p; p++)
			h = (h ^ (uint8_t)*p) * 16777619u;
	return h % BUCKETS;
}

NOINLINE static void count(const char *w)
{
	struct entry *e;
	uint32_t h = hash(w);

	for (e = table[h]; e; e = e->next)
		if (!strcmp(e->word, w)) {
			e->count++;
			return;
		}
	e = calloc(1, sizeof(*e));
	snprintf(e->word, sizeof(e->word), "%s", w);
	e->count = 1;
	e->next = table[h];
	table[h] = e;
}

NOINLINE static unsigned lookup(const char *w)
{
	char buf[256];		/* a bigger frame: another stack height */
	struct entry *e;

	snprintf(buf, sizeof(buf), "%s", w);
	for (e = table[hash(buf)]; e; e = e->next)
		if (!strcmp(e->word, buf))
			return e->count;
	return 0;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200000;
	char w[16];
	unsigned long total = 0;

	srand(1);
	for (long i = 0; i < rounds; i++) {
		snprintf(w, sizeof(w), "w%d", rand() % 5000);
		count(w);
		snprintf(w, sizeof(w), "w%d", rand() % 5000);
		total += lookup(w);
	}
	printf("demo: %ld rounds, %lu hits\n", rounds, total);
	return 0;
}
