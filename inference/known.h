/*
 * known.h - the CIDs that earlier runs' path maps explain, as a set of
 * 64-bit keys: what a record reads back of the runs before it, so that
 * a leaf copy whose CID they explain is left to their paths (unwound
 * one time in --leaf-known, as one this run's paths explain) and the
 * learner's bursts judge only what nothing explains.
 *
 * A key stands for (program, module, function, height): the program's
 * and the module's build ids (their paths where they have none), the
 * function and the height hashed, so that it means the same in every
 * process and every database.  Two CIDs with one key
 * (2^-64 a pair) cost a copy not unwound: the sample is inferred from
 * its CID, as any sample without a copy is.  Key 0 is never made.
 */
#ifndef ICPPD_INFERENCE_KNOWN_H
#define ICPPD_INFERENCE_KNOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inference/pathmap.h"

/* At most this many keys in a set, and in a program's stored blob
 * (16 MiB of slots at the set's load of one half, 8 MiB of blob): past
 * it nothing more is added, and what is there still holds. */
#define KNOWN_MAX ((size_t)1 << 20)

struct module;
struct known_set;

struct known_set *known__new(void);
void known__delete(struct known_set *k);

/* The key of CID (@mod, @func, @height) in program @prog's maps. */
uint64_t known__key(struct known_set *k, const struct module *prog,
		    const struct module *mod, uint64_t func, int64_t height);

/* Forgets the modules whose keys were remembered: after a module
 * cache's eviction, whose addresses a new module may take. */
void known__forget_modules(struct known_set *k);

/* Adds @key.  0, -ENOSPC (KNOWN_MAX) or -ENOMEM (the set as it was). */
int known__add(struct known_set *k, uint64_t key);
bool known__has(const struct known_set *k, uint64_t key);
size_t known__count(const struct known_set *k);

/* Whether program @prog's stored keys were read into the set (at most
 * once a program), and marking it so.  0 or -ENOMEM. */
bool known__read(struct known_set *k, const struct module *prog);
int known__mark_read(struct known_set *k, const struct module *prog);

/* A key with the program it belongs to, for the store. */
struct known_key {
	const struct module *prog;
	uint64_t key;
};

/*
 * The keys of @pm's nodes from index @from on that @k lacks, appended
 * to *@v (*@n, room *@cap; grown): every whole path's node, and a
 * fragment's node where @top_known says its fragment's outermost frame
 * is explained (as a leaf copy cut short counts explained: its frames
 * are exact, what lies above its top is the paths').  0 or -ENOMEM.
 */
int known__collect(struct known_set *k, struct pathmap *pm, size_t from,
		   bool (*top_known)(void *arg, const struct pm_node *top),
		   void *arg, struct known_key **v, size_t *n, size_t *cap);

/* @v[0, @n) sorted by program, then key, repeats dropped: the new
 * count. */
size_t known__sort(struct known_key *v, size_t n);

#endif
