/*
 * cmd_compare.c - "icppd compare A B": how alike two profiles are, by
 * degree of overlap and hot-edge coverage (inference/metrics.h), over
 * their k-contexts.  A profile is a run's inferred profile (N), the
 * true paths of a validation run (truth:N), or a folded file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "binary/lines.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/outfile.h"
#include "common/sys.h"
#include "inference/kccf.h"
#include "inference/metrics.h"
#include "profile/folded_keys.h"
#include "profile/profile.h"
#include "schema/store.h"

struct compare_opts {
	const char *db, *k, *threshold, *format, *output;
	bool no_inline;
};

#define OPT(f) offsetof(struct compare_opts, f)
static const struct cli_option compare_options[] = {
	{ "database", 'd', CLI_STRING, OPT(db), "FILE",
	  "profile database (default icppd.db)", 0, 0 },
	{ "k", 'k', CLI_STRING, OPT(k), "K",
	  "compare k-contexts: the last K callers of each context "
	  "(default inf: whole contexts)", 0, 0 },
	{ "threshold", 't', CLI_STRING, OPT(threshold), "P",
	  "a context is hot with at least P % of its profile (default 1)",
	  0, 0 },
	{ "format", 'f', CLI_STRING, OPT(format), "FMT",
	  "text (default) or json", 0, 0 },
	{ "output", 'o', CLI_STRING, OPT(output), "FILE",
	  "write to FILE instead of standard output", 0, 0 },
	{ "no-inline", 0, CLI_FLAG, OPT(no_inline), NULL,
	  "runs without their inlined frames, as report --no-inline "
	  "shows them (a comparison with truth:ID never has them)", 0, 0 },
};

const struct cli_command compare_command = {
	.name = "compare",
	.synopsis = "[options] A B",
	.brief = "how alike two call-path profiles are",
	.summary = "Score how alike two profiles are: degree of overlap and\n"
		   "hot-edge coverage of B against the reference A.",
	.options = compare_options,
	.noptions = sizeof(compare_options) / sizeof(compare_options[0]),
	.permute = true,
	.epilog = "A and B: a run id (its inferred profile), truth:ID (the\n"
		  "true paths of validation run ID), or a folded file\n"
		  "(icppd report --format folded, or any flame graph input).\n"
		  "See icppd-compare(1).\n",
};

struct profile_list {
	struct flat_entry *e;
	size_t n, cap;
	uint32_t k;		/* keys are cut to k-contexts as they come */
	bool file;		/* a folded file: read whole, cut later */
};

static int add_entry(void *arg, const char *key, double weight)
{
	struct profile_list *l = arg;

	key = folded__cut(key, l->file ? KCCF_INF : l->k);
	for (size_t i = l->n; i-- > 0 && i + 64 >= l->n;)	/* recent dups */
		if (!strcmp(l->e[i].key, key)) {
			l->e[i].weight += weight;
			return 0;
		}
	if (grow(&l->e, &l->cap, l->n + 1, sizeof(*l->e), 256))
		return -ENOMEM;
	l->e[l->n].key = strdup(key);
	if (!l->e[l->n].key)
		return -ENOMEM;
	l->e[l->n++].weight = weight;
	return 0;
}

/* Cuts every key of @l to its last @k + 1 frames. */
static void cut_keys(struct profile_list *l, uint32_t k)
{
	for (size_t i = 0; i < l->n; i++) {
		const char *t = folded__cut(l->e[i].key, k);

		memmove(l->e[i].key, t, strlen(t) + 1);
	}
}

/* @key's frame @i (0: the outermost), as [*@f, *@f + return). */
static size_t frame_at(const char *key, unsigned i, const char **f)
{
	for (; i && (key = strchr(key, ';')); i--)
		key++;
	*f = key;
	return key && !i ? strcspn(key, ";") : 0;
}

/* Whether some key of @l starts with the frame [@f, @f + @len). */
static bool is_root(const struct profile_list *l, const char *f, size_t len)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strncmp(l->e[i].key, f, len) &&
		    (l->e[i].key[len] == ';' || !l->e[i].key[len]))
			return true;
	return false;
}

/*
 * stackcollapse-perf.pl starts every stack with the command's name
 * (icppd report --comm-frame too).  When under 10 % of folded file @a's
 * weight starts at an outermost frame of @b but over half of it does one
 * frame further in, @a has such a first frame and @b has not: it is
 * dropped, with a note, and the two compare frame for frame.
 */
static void strip_comm_frames(struct profile_list *a,
			      const struct profile_list *b, const char *name)
{
	double total = 0, first = 0, second = 0;
	const char *f;
	size_t len;

	if (!a->file)
		return;
	/* the heaviest keys decide; a sample of 256 keeps this linear */
	for (size_t i = 0; i < a->n; i += a->n / 256 + 1) {
		total += a->e[i].weight;
		if ((len = frame_at(a->e[i].key, 0, &f)) && is_root(b, f, len))
			first += a->e[i].weight;
		if ((len = frame_at(a->e[i].key, 1, &f)) && is_root(b, f, len))
			second += a->e[i].weight;
	}
	if (!(total > 0 && first < 0.1 * total && second > 0.5 * total))
		return;
	for (size_t i = 0; i < a->n; i++) {
		char *sc = strchr(a->e[i].key, ';');

		if (sc)
			memmove(a->e[i].key, sc + 1, strlen(sc + 1) + 1);
	}
	log_warn("compare: %s starts each stack with a command's name (as "
		 "stackcollapse-perf.pl writes it): compared without that "
		 "first frame", name);
}

/* folded__keys()'s contexts into a list. */
static int add_context(void *arg, const char *key, int64_t group,
		       double weight)
{
	(void)group;
	return add_entry(arg, key, weight);
}

static int read_folded(const char *path, struct profile_list *l)
{
	FILE *f = sys__fopen(path);
	char *line = NULL;
	size_t cap = 0;
	unsigned long no = 0;
	double total = 0;
	int ret = 0;

	if (!f) {
		log_error("cannot read %s: %s (expected a run id, truth:ID or "
			  "a folded file)", path, strerror(errno));
		return -1;
	}
	l->file = true;		/* whole keys: a first frame may go */
	while (!ret && getline(&line, &cap, f) >= 0) {
		double w;
		int got;

		no++;
		got = folded__line(line, &w);
		if (got > 0)
			continue;
		if (got < 0) {
			log_error("%s:%lu: expected 'frame;...;frame WEIGHT', "
				  "WEIGHT a finite number >= 0", path, no);
			ret = -1;
		} else if (!isfinite(total += w)) {
			log_error("%s:%lu: the weights add up to more than a "
				  "double holds", path, no);
			ret = -1;
		} else if (add_entry(l, line, w)) {
			log_error("out of memory");
			ret = -1;
		}
	}
	free(line);
	fclose(f);
	return ret;
}

/* Loads operand @arg into @l: a run as a report shows it (its inlined
 * frames drawn when @lines reads DWARF), a validation run's true paths
 * (truth:ID), or a folded file. */
static int load(struct store **st, const char *db, const char *arg,
		struct profile_list *l, struct lines *lines)
{
	struct profile p;
	bool truth = !strncmp(arg, "truth:", 6);
	const char *num = truth ? arg + 6 : arg;
	struct profile_request r = { .db = db, .budget_s = -1,
		.source = truth ? PROFILE_TRUTH : PROFILE_INFERRED,
		.flags = RUN_PROFILE_STATIC | RUN_PROFILE_DEBUGINFO |
			 RUN_PROFILE_DEBUGINFOD | (lines ? RUN_PROFILE_PCS : 0),
		.inlined = lines != NULL, .draw_inlined = true, .shared_lines = lines };
	char *end;
	long long id;
	int ret;

	errno = 0;
	id = strtoll(num, &end, 10);
	if (errno || end == num || *end || id <= 0) {
		if (truth) {
			log_error("%s: expected truth:RUN_ID", arg);
			return -1;
		}
		return read_folded(arg, l);
	}
	if (!*st && !(*st = profile__open(db)))
		return -1;
	r.sel.run_id = id;
	ret = profile__load(*st, &r, &p);
	if (ret == RUN_PROFILE_NONE && truth)
		log_error("run %lld has no true paths: only icppd validate "
			  "records them", id);
	if (!ret && (ret = folded__keys(p.p.cct, l->k, add_context, l)))
		folded__forest_error(ret);
	profile__exit(&p);
	return ret ? -1 : 0;
}

static void free_list(struct profile_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->e[i].key);
	free(l->e);
}

int cmd_compare(int argc, char **argv)
{
	struct compare_opts o = { .db = "icppd.db" };
	struct profile_list a = { 0 }, b = { 0 };
	struct compare_result r;
	struct store *st = NULL;
	struct outfile out = { 0 };
	struct lines *lines = NULL;
	uint32_t k = KCCF_INF;
	double threshold = 1;
	bool json;
	int idx = cli__parse(&compare_command, argc, argv, &o), ret = 1;
	char *end;

	if (idx < 0)
		return idx == -1 ? 0 : 2;
	json = o.format && !strcmp(o.format, "json");
	if (argc - idx != 2 || (o.format && !json && strcmp(o.format, "text"))) {
		fprintf(stderr, "icppd: compare: %s\nTry 'icppd compare "
			"--help'.\n", argc - idx != 2 ? "expected two profiles, "
			"A and B" : "--format: expected text or json");
		return 2;
	}
	if (o.k && cli__parse_count("compare", "k", o.k, KCCF_INF, &k))
		return 2;
	if (o.threshold) {
		threshold = strtod(o.threshold, &end);
		if (end == o.threshold || *end || !(threshold > 0) ||
		    threshold > 100) {
			fprintf(stderr, "icppd: compare: --threshold: expected "
				"a percentage > 0 and <= 100, not '%s'\n"
				"Try 'icppd compare --help'.\n", o.threshold);
			return 2;
		}
	}
	a.k = b.k = k;
	/* truth paths are physical: frames as validation scores them */
	if (!o.no_inline && strncmp(argv[idx], "truth:", 6) &&
	    strncmp(argv[idx + 1], "truth:", 6) && !(lines = lines__new()))
		return 1;
	if (outfile__open(&out, o.output)) {
		lines__delete(lines);
		return 1;
	}
	if (load(&st, o.db, argv[idx], &a, lines) ||
	    load(&st, o.db, argv[idx + 1], &b, lines))
		goto out;
	strip_comm_frames(&a, &b, argv[idx]);
	strip_comm_frames(&b, &a, argv[idx + 1]);
	cut_keys(&a, k);
	cut_keys(&b, k);
	metrics__merge(a.e, &a.n);
	metrics__merge(b.e, &b.n);
	metrics__compare(a.e, a.n, b.e, b.n, threshold / 100, &r);
	if (json)
		fprintf(out.f, "{\"overlap\": %.6f, \"coverage\": %.6f, "
			"\"hot_a\": %zu, \"hot_both\": %zu, \"contexts_a\": %zu, "
			"\"contexts_b\": %zu, \"common\": %zu, \"samples_a\": "
			"%.6f, \"samples_b\": %.6f}\n", r.overlap, r.coverage,
			r.hot_a, r.hot_both, a.n, b.n, r.common, r.total_a,
			r.total_b);
	else
		fprintf(out.f, "degree of overlap: %.4f\nhot-edge coverage "
			"(>= %g%%): %.4f (%zu of %zu hot contexts of A are hot "
			"in B)\ncontexts: %zu in A, %zu in B, %zu in both\n",
			r.overlap, threshold, r.coverage, r.hot_both, r.hot_a,
			a.n, b.n, r.common);
	ret = 0;
out:
	if (outfile__close(&out, !ret))
		ret = 1;
	free_list(&a);
	free_list(&b);
	lines__delete(lines);
	store__close(st);
	return ret;
}
