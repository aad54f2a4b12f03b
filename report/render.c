/*
 * render.c - what the renderers share (render.h): counts, call sites,
 * which lines are shown, the walk over a forest, and the header above
 * every text report (the run, the inference, the processes, the
 * kernel's share, the expected correctness).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "binary/lines.h"
#include "common/json.h"
#include "common/printable.h"
#include "report/render.h"

void render__count(const struct render *r, double w)
{
	/* a line whose weight is whole (a function's own samples, a
	 * caller every one of them came through) is a count like perf's,
	 * whatever other lines were apportioned */
	bool whole = r->integral || fabs(w - round(w)) < 1e-6;

	fprintf(r->out, whole ? "%11.0f %6.2f%% " : "%11.1f %6.2f%% ", w,
		r->total > 0 ? 100 * w / r->total : 0.0);
}

const char *render__site(const struct render *r, const struct kccf_node *n,
			 char *buf, size_t len)
{
	const struct store_module *m;
	const char *file;
	unsigned line;

	if (!r->v->lines || !n->call_site || !n->site_module)
		return NULL;
	m = run_profile__module(r->p, n->site_module);
	/* a return address: the call is the instruction before it */
	if (!m || lines__find(r->v->lines, m->path, m->build_id,
			      n->call_site - 1, &file, &line))
		return NULL;
	snprintf(buf, len, "%s:%u", strrchr(file, '/') ? strrchr(file, '/') + 1 :
		 file, line);
	return buf;
}

bool render__shown(const struct render *r, const struct kccf_node *n,
		   double root_weight)
{
	if (r->total <= 0 || 100 * n->weight / r->total < r->v->min_percent)
		return false;
	return !r->v->similar || 100 * n->weight >= r->v->similar * root_weight;
}

void render__indent(const struct render *r, uint32_t level)
{
	if (level <= RENDER_INDENT_LEVELS)
		fprintf(r->out, "%*s", 2 * (int)level, "");
	else
		fprintf(r->out, "%*s[%u] ", 2 * RENDER_INDENT_LEVELS, "", level);
}

void render__walk(const struct render *r, const struct kccf *f,
		  uint32_t root, const struct render_walk *w)
{
	double root_weight = kccf__node(f, root)->weight;
	uint32_t i = root;

	for (;;) {
		const struct kccf_node *n = kccf__node(f, i);

		if (render__shown(r, n, root_weight)) {
			w->open(w->arg, f, n);
			if (n->first_child != KCCF_NONE) {
				i = n->first_child;
				continue;
			}
			if (w->close)
				w->close(w->arg);
		}
		while (i != root && kccf__node(f, i)->next_sibling == KCCF_NONE) {
			i = kccf__node(f, i)->parent;
			if (w->close)
				w->close(w->arg);
		}
		if (i == root)
			return;
		i = kccf__node(f, i)->next_sibling;
	}
}

/* The share of @p's samples expected in their true context: each
 * outcome's share times the correct rate the latest validations of its
 * programs measured for that outcome; -1 when none was validated, or
 * the contexts are whole (validation scores them cut).  *@partial: some
 * outcome of @p had no validated rate (counted as 0). */
static double expected_correct(const struct run_profile *p, bool *partial)
{
	const struct infer_stats *s = &p->stats;
	double correct = 0;

	*partial = false;
	if (!p->validated_run || p->whole || s->samples <= 0)
		return -1;
	for (int h = 0; h < CCT_UNKNOWN; h++) {
		if (p->validated[h] > 0)
			correct += s->by_how[h] * p->validated_correct[h] /
				   p->validated[h];
		else if (s->by_how[h] > 0)
			*partial = true;
	}
	return correct / s->samples;
}

/* The line that says how much of the profile to trust: what validation
 * measured for these builds, applied to this profile's outcomes, or
 * that nothing was measured. */
static void print_expected(const struct render *r)
{
	const struct run_profile *p = r->p;
	bool partial;
	double e = expected_correct(p, &partial);
	const char *sep = " (";

	if (e < 0 && p->whole) {
		fprintf(r->out, "expected correct: not measured for whole "
			"contexts (validation scores them cut where the "
			"candidates disagree)\n");
		return;
	}
	if (e < 0) {
		fprintf(r->out, "expected correct: not measured for this "
			"build (icppd validate -- COMMAND measures it)\n");
		return;
	}
	fprintf(r->out, "expected correct: %s%.1f%%, by the rates validation "
		"run %lld measured", partial ? "at least " : "", 100 * e,
		(long long)p->validated_run);
	for (int h = 0; h < CCT_UNKNOWN; h++) {
		if (p->validated[h] <= 0)
			continue;
		fprintf(r->out, "%s%s %.1f%%", sep,
			cct_how__name((enum cct_how)h),
			100 * p->validated_correct[h] / p->validated[h]);
		sep = ", ";
	}
	fprintf(r->out, "%s\n", *sep == ',' ? ")" : "");
}

/* @s on one line of at most @len - 1 bytes: control characters and
 * runs of blanks as one space (a `perl -e` script spans lines), "..."
 * where it is cut. */
static const char *one_line(const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	/* whole characters only: controls (C0, DEL, C1) as a space, a
	 * byte of invalid UTF-8 as '?', so the header stays one line of
	 * valid UTF-8 whatever the command line held */
	while (*p) {
		size_t k = utf8__len(p);

		if (n + (k ? k : 1) + 1 > len)
			break;
		if (!k) {
			buf[n++] = '?';
			p++;
			continue;
		}
		if (utf8__is_control(p, k) || *p == ' ') {
			if (n && buf[n - 1] != ' ')
				buf[n++] = ' ';
		} else {
			memcpy(buf + n, p, k);
			n += k;
		}
		p += k;
	}
	if (*p && len > 4) {	/* cut: room for "..." at a boundary */
		while (n > len - 4 || (n && ((unsigned char)buf[n] & 0xc0) == 0x80))
			n--;
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	while (n && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	return buf;
}

/* The command's time in the kernel: which samples do not see, or with
 * --kernel those under [kernel]. */
static void print_kernel(const struct render *r)
{
	const struct run_row *run = &r->p->run;

	if (run->user_ns >= 0 && run->system_ns > 0)
		fprintf(r->out, "CPU time %.3f s user, %.3f s system: %.1f%% "
			"in the kernel, %s\n", (double)run->user_ns / 1e9,
			(double)run->system_ns / 1e9,
			100.0 * (double)run->system_ns /
			(double)(run->user_ns + run->system_ns), run->kernel ?
			"sampled (--kernel)" : "not in this profile (record "
			"--kernel samples it)");
	if (run->kernel || r->p->kernel_samples > 0)
		fprintf(r->out, "in the kernel: %.0f samples (%.1f%%), under "
			"[kernel] below the user code that entered it\n",
			r->p->kernel_samples, r->total > 0 ?
			100 * r->p->kernel_samples / r->total : 0.0);
}

/* The heaviest commands, when the samples come from more than one. */
static void print_comms(const struct render *r)
{
	const struct run_profile *p = r->p;
	size_t shown = p->ncomms < RUN_PROFILE_COMMS ? p->ncomms :
		       RUN_PROFILE_COMMS;

	if (p->ncomms < 2)
		return;
	fprintf(r->out, "commands: %zu (", p->ncomms);
	for (size_t i = 0; i < shown; i++) {
		char name[64];

		fprintf(r->out, "%s%s %.1f%%", i ? ", " : "",
			one_line(p->comms[i].name, name, sizeof(name)),
			r->total > 0 ? 100 * p->comms[i].samples / r->total : 0);
	}
	fprintf(r->out, "%s)%s\n", p->ncomms > shown ? ", ..." : "",
		r->v->nsort ? "" :
		"; --sort comm,dso,sym or --comm NAME split them");
}

/* The Good-Turing estimate of a run's samples on paths its learning
 * never unwound: paths seen once over paths learned.  A daemon's
 * segment counts the paths seen once since the daemon's map began, its
 * paths since the segment did: at most 1. */
static double unlearned_share(const struct run_row *run)
{
	double s = (double)run->learned_once / (double)run->learned_paths;

	return s < 1 ? s : 1;
}

/* What the inference read and did: the binaries' calls, what its
 * budget left unknown, and whether it was read back as stored. */
static void print_inference(const struct render *r)
{
	const struct run_profile *p = r->p;
	const struct static_calls_stats *c = &p->calls_stats;
	double n = p->stats.samples > 0 ? p->stats.samples : 1;

	if (c->modules)
		fprintf(r->out, "%llu direct calls read from %u binar%s, for "
			"samples the path maps do not explain\n",
			(unsigned long long)c->calls, c->modules,
			c->modules > 1 ? "ies" : "y");
	if (c->unreadable) {
		char line[512];

		fprintf(r->out, "%s\n", static_calls__unreadable(c, line, sizeof(line)));
	}
	/* the budget is the whole runs' (their inference is stored
	 * whole): a filtered profile's total is not its denominator */
	if ((p->over_budget_cids || c->over_budget) && p->filtered)
		fprintf(r->out, "search budget (%.1f s of CPU) spent: %lld "
			"CIDs of the whole runs (%.0f samples, of every "
			"process) left unknown, %u binar%s not read; "
			"--budget S gives it more\n", p->budget_s,
			(long long)p->over_budget_cids, p->over_budget_samples,
			c->over_budget, c->over_budget == 1 ? "y" : "ies");
	else if (p->over_budget_cids || c->over_budget)
		fprintf(r->out, "search budget (%.1f s of CPU) spent: %lld "
			"CIDs (%.1f%% of the samples) left unknown, %u "
			"binar%s not read; --budget S gives it more\n",
			p->budget_s, (long long)p->over_budget_cids,
			100 * p->over_budget_samples / n, c->over_budget,
			c->over_budget == 1 ? "y" : "ies");
	if (p->run.learned_paths > 0 && p->run.learned_once >= 0)
		fprintf(r->out, "learning: %lld whole paths, %lld seen once: "
			"a next run would have about %.1f%% of its samples on "
			"paths not learned yet (Good-Turing)\n",
			(long long)p->run.learned_paths,
			(long long)p->run.learned_once,
			100.0 * unlearned_share(&p->run));
	if (p->reused)
		fprintf(r->out, "inference: stored by an earlier report "
			"(%.2f s of CPU then, %lld CIDs searched)\n",
			p->inference_cpu_s, (long long)p->searches);
}

/* A recording whose recorder did not end it, said: its samples are
 * those up to its last flush.  (A daemon's newest segment is running by
 * design; Ctrl-C ends a recording as it should.) */
static void print_status(const struct render *r)
{
	const struct run_row *run = &r->p->run;

	if (r->p->fleet || !strcmp(run->kind, "daemon"))
		return;
	if (!strcmp(run->status, "running"))
		fprintf(r->out, "not finished: still recording, or its "
			"recorder was killed (the next record marks it "
			"crashed); the samples up to its last flush\n");
	else if (!strcmp(run->status, "crashed"))
		fprintf(r->out, "not finished: its recorder was killed; the "
			"samples up to its last flush\n");
}

const char *render__unit(const struct render *r)
{
	return r->p->offcpu || r->p->wall ? "us" : "samples";
}

void render__header(const struct render *r)
{
	const struct infer_stats *s = &r->p->stats;
	double n = s->samples > 0 ? s->samples : 1;
	char cmd[100];

	if (r->p->fleet) {
		if (r->p->offcpu)
			fprintf(r->out, "fleet (%s): off-CPU, %.1f ms: the "
				"time blocked, in microseconds (us)\n",
				one_line(r->p->run.command, cmd, sizeof(cmd)),
				s->samples / 1000);
		else
			fprintf(r->out, "fleet (%s): %.0f samples\n",
				one_line(r->p->run.command, cmd, sizeof(cmd)),
				s->samples);
		if (*r->p->fleet_read)
			fprintf(r->out, "read: %s\n", r->p->fleet_read);
	} else if (r->p->wall || r->p->offcpu)
		fprintf(r->out, "run %lld (%s, %s): %s, %.1f ms: %s, in "
			"microseconds (us)\n", (long long)r->p->run.id,
			r->p->run.kind, one_line(r->p->run.command, cmd,
						 sizeof(cmd)),
			r->p->wall ? "wall-clock" : "off-CPU",
			s->samples / 1000, r->p->wall ? "each thread's CPU "
			"samples at their period and its blocked time" :
			"the time blocked, by the call path each thread "
			"switched out of");
	else
		fprintf(r->out, "run %lld (%s, %s): %.0f samples with a "
			"context identifier, %lld without\n",
			(long long)r->p->run.id, r->p->run.kind,
			one_line(r->p->run.command, cmd, sizeof(cmd)),
			s->samples, (long long)r->p->run.unresolved);
	print_status(r);
	if (r->p->flat)
		fprintf(r->out, "flat: each sample's own function, exact; no "
			"call paths inferred\n");
	else
		fprintf(r->out, "inferred: %.1f%% one path fits (precise), "
			"%.1f%% apportioned among several (ambiguous), %.1f%% "
			"composed or searched (searched), %.1f%% unknown "
			"callers\n", 100 * s->by_how[CCT_PRECISE] / n,
			100 * s->by_how[CCT_AMBIGUOUS] / n,
			100 * s->by_how[CCT_SEARCHED] / n,
			100 * s->by_how[CCT_UNKNOWN] / n);
	print_comms(r);
	print_kernel(r);
	if (!r->p->flat && !r->p->fleet)
		print_expected(r);
	if (!r->p->flat && !r->p->fleet)
		print_inference(r);
}

void render__json_stats(const struct render *r)
{
	const struct infer_stats *s = &r->p->stats;
	bool partial;
	double e = expected_correct(r->p, &partial);

	const struct run_row *run = &r->p->run;

	fprintf(r->out, "{\"run_id\": %lld, \"kind\": ", (long long)run->id);
	json__string(r->out, run->kind);
	fprintf(r->out, ", \"command\": ");
	json__string(r->out, run->command);
	fprintf(r->out, ", \"event\": ");
	json__string(r->out, run->event);
	fprintf(r->out, ", \"period\": %llu, \"frequency\": %llu, "
		"\"samples\": ", (unsigned long long)run->period,
		(unsigned long long)run->frequency);
	render__weight(r->out, s->samples);
	fprintf(r->out, ", \"cpu\": ");
	if (run->user_ns < 0 || run->system_ns < 0)
		fprintf(r->out, "null");
	else
		fprintf(r->out, "{\"user_s\": %.6f, \"system_s\": %.6f}",
			(double)run->user_ns / 1e9,
			(double)run->system_ns / 1e9);
	fprintf(r->out, ", \"kernel_sampled\": %s, \"kernel_samples\": ",
		run->kernel ? "true" : "false");
	render__weight(r->out, r->p->kernel_samples);
	fprintf(r->out, ", \"commands\": [");
	for (size_t i = 0; i < r->p->ncomms && i < RUN_PROFILE_COMMS; i++) {
		fprintf(r->out, "%s{\"comm\": ", i ? ", " : "");
		json__string(r->out, r->p->comms[i].name);
		fprintf(r->out, ", \"samples\": ");
		render__weight(r->out, r->p->comms[i].samples);
		fputc('}', r->out);
	}
	fprintf(r->out, "], \"commands_in_all\": %zu", r->p->ncomms);
	fprintf(r->out, ", \"inference\": {");
	for (int h = 0; h < CCT_NR_HOW; h++) {
		fprintf(r->out, "%s\"%s\": ", h ? ", " : "",
			cct_how__name((enum cct_how)h));
		render__weight(r->out, s->by_how[h]);
	}
	fprintf(r->out, "}, \"expected_correct\": ");
	if (e < 0)
		fprintf(r->out, "null");
	else
		fprintf(r->out, "{\"share\": %.6f, \"at_least\": %s, "
			"\"validation_run\": %lld}", e,
			partial ? "true" : "false",
			(long long)r->p->validated_run);
	fprintf(r->out, ", \"learning\": ");
	if (run->learned_paths > 0 && run->learned_once >= 0)
		fprintf(r->out, "{\"paths\": %lld, \"seen_once\": %lld, "
			"\"unlearned_share\": %.6f}",
			(long long)run->learned_paths,
			(long long)run->learned_once,
			unlearned_share(run));
	else
		fprintf(r->out, "null");
}

/* A weight's place in render__round()'s order: by part, group, then
 * largest remainder first. */
struct round_item {
	int64_t part, group;
	double frac;
	size_t i;
};

static int by_part_group_frac(const void *a, const void *b)
{
	const struct round_item *x = a, *y = b;

	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->frac != y->frac)
		return x->frac > y->frac ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* 1e-9: a sum of shares that should be whole is not quite */
static double floor_of(double w)
{
	return floor(w + 1e-9);
}

/* Adds 1 to the first @extra of @n counts @out[it[..].i] (largest
 * remainders first). */
static void add_ones(const struct round_item *it, size_t n, int64_t extra,
		     int64_t *out)
{
	for (size_t j = 0; j < n && extra > 0; j++, extra--)
		out[it[j].i]++;
}

/*
 * Two steps of largest remainder: a part's groups get the part's sum
 * rounded (each its own sum's floor or ceiling), then a group's weights
 * get its count.  One step within groups alone rounded each group by
 * itself: a command whose groups held halves (a function inlined in
 * one process and not in another splits both by the pcs of both) got
 * a sample more than it had.
 */
int render__round(const double *w, const int64_t *group,
		  const int64_t *part, size_t n, int64_t *out)
{
	struct round_item *it = malloc((n ? n : 1) * sizeof(*it));
	struct round_item *gs = malloc((n ? n : 1) * sizeof(*gs));
	int64_t *gcount = malloc((n ? n : 1) * sizeof(*gcount));
	size_t ng = 0;

	if (!it || !gs || !gcount) {
		free(it);
		free(gs);
		free(gcount);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		double fl = floor_of(w[i]);

		out[i] = (int64_t)fl;
		it[i] = (struct round_item){ part ? part[i] : 0, group[i],
					     w[i] - fl, i };
	}
	qsort(it, n, sizeof(*it), by_part_group_frac);
	/* the groups, each as an item of its part: its sum's remainder */
	for (size_t s = 0, e; s < n; s = e) {
		double sum = 0;

		for (e = s; e < n && it[e].part == it[s].part &&
			    it[e].group == it[s].group; e++)
			sum += w[it[e].i];
		gcount[ng] = (int64_t)floor_of(sum);
		gs[ng] = (struct round_item){ it[s].part, 0,
					      sum - (double)gcount[ng], ng };
		ng++;
	}
	qsort(gs, ng, sizeof(*gs), by_part_group_frac);
	for (size_t s = 0, e; s < ng; s = e) {
		double sum = 0;
		int64_t floors = 0;

		for (e = s; e < ng && gs[e].part == gs[s].part; e++) {
			sum += (double)gcount[gs[e].i] + gs[e].frac;
			floors += gcount[gs[e].i];
		}
		add_ones(gs + s, e - s, llround(sum) - floors, gcount);
	}
	for (size_t s = 0, e, g = 0; s < n; s = e, g++) {
		int64_t floors = 0;

		for (e = s; e < n && it[e].part == it[s].part &&
			    it[e].group == it[s].group; e++)
			floors += out[it[e].i];
		add_ones(it + s, e - s, gcount[g] - floors, out);
	}
	free(it);
	free(gs);
	free(gcount);
	return 0;
}

void render__weight(FILE *out, double w)
{
	if (fabs(w - round(w)) < 1e-6)
		fprintf(out, "%.0f", w);
	else
		fprintf(out, "%.3f", w);
}
