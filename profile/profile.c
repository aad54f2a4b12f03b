/*
 * profile.c - the profile for a selection (profile.h): the run chosen,
 * inferred, checked, its inlined frames drawn, its baseline built.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binary/lines.h"
#include "common/log.h"
#include "common/sys.h"
#include "profile/folded_keys.h"
#include "profile/profile.h"
#include "schema/store.h"

struct store *profile__open(const char *path)
{
	char err[600];
	struct store *st;

	if (access(path, F_OK)) {
		log_error("%s: no such database (record a run first: icppd "
			  "record -d %s -- COMMAND)", path, path);
		return NULL;
	}
	st = store__writable(path) ?
	     store__open_derived(path, err, sizeof(err)) :
	     store__open_readonly(path, err, sizeof(err));
	if (!st)
		log_error("%s", err);
	return st;
}

/* The latest measurement run of @st into *@id.  0, or -1 after logging
 * that there is none. */
static int latest_run(struct store *st, const char *db, int64_t *id)
{
	int ret = store__latest_run(st, id);

	if (ret == STORE_NONE)
		log_error("%s: no measurement run to report (icppd record -d "
			  "%s -- COMMAND)", db, db);
	else if (ret < 0)
		log_error("%s", store__error(st));
	return ret ? -1 : 0;
}

/* What --exe matched, for resolve_exe(). */
struct exe_matches {
	char first[PATH_MAX];
	char list[640];		/* "PATH, PATH, ..." */
	size_t n;
};

static int add_match(void *arg, const char *path)
{
	struct exe_matches *m = arg;
	size_t used = strlen(m->list);

	if (!m->n++)
		snprintf(m->first, sizeof(m->first), "%s", path);
	if (m->n <= 8)
		snprintf(m->list + used, sizeof(m->list) - used, "%s%s",
			 used ? ", " : "", path);
	else if (m->n == 9)
		snprintf(m->list + used, sizeof(m->list) - used, ", ...");
	return 0;
}

/* The one program with samples in @st that @exe names (a path, made
 * canonical when it exists, or a bare name such as cc1), into @out.
 * 0, or -1 after a line that lists the matches (several) or the
 * programs there are (none). */
static int resolve_exe(struct store *st, const char *db, const char *exe,
		       char *out, size_t len)
{
	struct exe_matches m = { .n = 0 };
	const char *name = exe;
	char real[PATH_MAX];

	if (strchr(name, '/') && realpath(name, real))
		name = real;
	if (store__programs_named(st, name, add_match, &m)) {
		log_error("%s", store__error(st));
		return -1;
	}
	if (m.n == 1) {
		snprintf(out, len, "%s", m.first);
		return 0;
	}
	if (m.n > 1) {
		log_error("--exe %s: %zu programs of that name have samples in "
			  "%s: %s; give the path of one", exe, m.n, db, m.list);
		return -1;
	}
	if (store__programs_named(st, NULL, add_match, &m))
		m.n = 0;
	log_error("--exe %s: no program of that name has samples in %s%s%s%s",
		  exe, db, m.n ? " (programs with samples: " : "",
		  m.n ? m.list : "", m.n ? ")" : "");
	return -1;
}

/* Above this share of the samples in functions without a name, a
 * report says how to name them. */
#define UNNAMED_HINT 0.03

/* Whether frame @id is a function its module names by address alone
 * ("liblzma.so.5.4.1+0x15ae0": stripped, no symbol covers it). */
static bool unnamed(const struct cct *t, int64_t id)
{
	const struct cct_frame *f = cct__frame(t, id);

	return f && f->kind == CCT_FUNCTION && f->module_id &&
	       strstr(f->name, "+0x");
}

/* One hint when functions without a name hold more than UNNAMED_HINT
 * of the samples (their own): where names come from, and the module of
 * the heaviest such context. */
static void hint_unnamed(const struct run_profile *p)
{
	size_t n;
	const struct cct_record *r = cct__records(p->cct, &n);
	double total = 0, none = 0, most = 0;
	int64_t most_module = 0;
	const struct store_module *m;
	const char *name, *urls = getenv("DEBUGINFOD_URLS");

	for (size_t i = 0; i < n; i++) {
		const struct cct_node *nd = cct__node(p->cct, r[i].node);

		total += r[i].weight;
		if (!unnamed(p->cct, nd->frame))
			continue;
		none += r[i].weight;
		if (r[i].weight > most) {
			most = r[i].weight;
			most_module = cct__frame(p->cct, nd->frame)->module_id;
		}
	}
	if (total <= 0 || none <= UNNAMED_HINT * total)
		return;
	m = run_profile__module(p, most_module);
	name = !m ? "?" : strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 :
	       m->path;
	log_warn("%.1f%% of the samples are in functions without a name "
		 "(the heaviest in %s): stripped code; %s", 100 * none / total,
		 name,
		 urls && *urls ? "debuginfod did not have its debug file: "
		 "install its -dbgsym package (Debian) and the report names "
		 "them" : "set DEBUGINFOD_URLS "
		 "(https://debuginfod.debian.net on Debian) or install its "
		 "-dbgsym package, and the report names them");
}

/* Refuses what cannot be shown with k = @k: no samples (-1 after
 * logging why; @filtered: the samples were chosen by process).  Names
 * the programs without a map, whose samples stand under unknown
 * callers. */
static int check(const struct run_profile *p, const char *db, bool filtered,
		 uint32_t k)
{
	if (p->stats.samples <= 0 && (p->offcpu || p->wall)) {
		log_error("%s has no off-CPU time%s (icppd record --off-cpu "
			  "-- COMMAND records it)", p->run.id ? "the run" :
			  "that window", filtered ? " in the processes or "
			  "threads chosen" : "");
		return -1;
	}
	if (p->stats.samples <= 0) {
		if (p->run.id)
			log_error("run %lld has no samples with a context "
				  "identifier%s (%lld samples, %lld unresolved: "
				  "see v_unresolved)", (long long)p->run.id,
				  filtered ? " in the processes or threads "
				  "chosen" : "",
				  (long long)p->run.samples,
				  (long long)p->run.unresolved);
		else
			log_error("no samples with a context identifier in that "
				  "window%s (%s)", filtered ? " in the processes "
				  "or threads chosen" : "", p->run.command);
		return -1;
	}
	/* Samples without a map are still the run's: each CID stands
	 * under its unknown callers, as perf shows a frame it could not
	 * unwind past, and the note says how to learn them.  A flat
	 * profile (k = 0, --sort) shows no callers to miss. */
	if (p->unmapped && p->unmapped == p->programs && k != 0)
		log_warn("no path map for %s%s: %s samples appear under "
			 "[unknown callers ...]; record without --no-learn, "
			 "or train first (icppd train -d %s -- %s), to learn "
			 "call paths, or use --k 0 for a flat profile",
			 p->programs > 1 ? "any of its programs: " : "",
			 p->unmapped_list, p->programs > 1 ? "their" : "its",
			 db, p->run.id && p->run.command[0] ?
			 p->run.command : "COMMAND ...");
	else if (p->unmapped && k != 0)
		log_warn("%zu of %zu programs have no path map (%s): their "
			 "samples appear under [unknown callers ...]",
			 p->unmapped, p->programs, p->unmapped_list);
	/* said on stderr too: folded, pprof and JSON have no header, and
	 * another user's report differs from the owner's for this alone */
	if (p->calls_stats.unreadable && k != 0) {
		char line[512];

		log_warn("%s", static_calls__unreadable(&p->calls_stats,
						     line, sizeof(line)));
	}
	return 0;
}

/* The run, program and window @r asks for, into @sel (@exe holds the
 * program's path).  -1 after logging why. */
static int select_runs(struct store *st, const struct profile_request *r,
		       struct store_selection *sel, char *exe, size_t len)
{
	*sel = r->sel;
	if (r->exe) {
		if (resolve_exe(st, r->db, r->exe, exe, len))
			return -1;
		sel->program = exe;
	}
	if (r->window)
		sel->run_id = 0;
	else if (!sel->run_id && latest_run(st, r->db, &sel->run_id))
		return -1;
	return 0;
}

static double budget_of(const struct profile_request *r)
{
	return r->budget_s < 0 ? RUN_PROFILE_BUDGET_S : r->budget_s;
}

/* Draws @p's inlined frames when @r asks.  -1 after logging why. */
static int draw_inlined(const struct profile_request *r,
			struct profile_dwarf *d, struct run_profile *p)
{
	if (!r->draw_inlined || !d || !profile__inline(p, d))
		return 0;
	log_error("out of memory drawing inlined functions");
	return -1;
}

/* A baseline of run @id, chosen as @sel chooses processes and built as
 * @pr was.  NULL after logging why. */
static struct profile_base *base_run(struct store *st,
				     const struct profile_request *r,
				     const struct store_selection *sel,
				     int64_t id, struct profile *pr)
{
	struct store_selection bs = *sel;
	struct run_profile bp = { 0 };
	struct profile_base *b = NULL;
	int err = 0;

	bs.run_id = id;
	bs.since_ns = 0;
	bs.until_ns = INT64_MAX;
	if (!run_profile__infer_within(st, &bs, r->flags, budget_of(r), &bp) &&
	    !check(&bp, r->db, sel->pid || sel->tid || r->exe || sel->comm,
		   r->base_k) &&
	    !draw_inlined(r, pr->dwarf, &bp) &&
	    !(b = profile_base__of(&bp, r->base_k, &err)))
		folded__forest_error(err);
	run_profile__exit(&bp);
	return b;
}

/* A baseline from folded file @path: a regular file, opened without
 * blocking (a FIFO would hang).  NULL after logging why. */
static struct profile_base *base_file(const struct profile_request *r)
{
	struct profile_base *b;
	size_t line = 0;
	int err = 0, fd = sys__open(r->base, O_RDONLY | O_NONBLOCK, 0);
	struct stat sb;
	FILE *f;

	if (fd >= 0 && (fstat(fd, &sb) || !S_ISREG(sb.st_mode))) {
		close(fd);
		fd = -1;
		errno = EINVAL;
	}
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		log_error("report: --base %s: %s (a run id of %s, or a folded "
			  "file)", r->base, errno == EINVAL ?
			  "not a regular file" : strerror(errno), r->db);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	b = profile_base__read(f, r->base_k, &err, &line);
	fclose(f);
	if (err == -EINVAL)
		log_error("report: --base %s: line %zu is not a folded stack "
			  "(frame;frame;... COUNT)", r->base, line);
	else if (err)
		log_error("report: --base %s: %s", r->base, strerror(-err));
	return b;
}

/* --base: a run id of the database, or a folded file. */
static struct profile_base *load_base(struct store *st,
				      const struct profile_request *r,
				      const struct store_selection *sel,
				      struct profile *pr)
{
	char *end;
	unsigned long long id = strtoull(r->base, &end, 10);

	if (*r->base != '-' && !*end)
		return base_run(st, r, sel, (int64_t)id, pr);
	return base_file(r);
}

/* The line reader and DWARF answers @r asks for.  -1 after logging. */
static int open_dwarf(struct store *st, const struct profile_request *r,
		      struct profile *pr)
{
	if (!r->lines && !r->inlined)
		return 0;
	/* not p.debug_lines, the reader the inference started to name a
	 * stripped binary's functions: a debuglink's candidates are anyone's
	 * to place, and the workers they cost (LINES_MAX_DEATHS) must not
	 * take the other modules' lines with them */
	pr->lines = r->shared_lines;
	if (!pr->lines) {
		if (!(pr->lines = lines__new()))
			return -1;
		pr->own_lines = true;
	}
	if (r->inlined && !(pr->dwarf = profile_dwarf__new(&pr->p, pr->lines,
							   st))) {
		log_error("out of memory");
		return -1;
	}
	return 0;
}

int profile__load(struct store *st, const struct profile_request *r,
		  struct profile *pr)
{
	struct store_selection sel;
	char exe[PATH_MAX];
	int ret;

	memset(pr, 0, sizeof(*pr));
	sel = r->sel;		/* select_runs() resolves it further */
	if (r->source == PROFILE_READ) {
		ret = r->read(r->read_arg, &pr->p);
	} else if (r->source == PROFILE_TRUTH) {
		ret = run_profile__truth(st, r->sel.run_id, &pr->p);
	} else {
		if (select_runs(st, r, &sel, exe, sizeof(exe)))
			return -1;
		ret = run_profile__infer_within(st, &sel, r->flags,
						budget_of(r), &pr->p);
	}
	if (ret)
		return ret == RUN_PROFILE_NONE ? RUN_PROFILE_NONE : -1;
	if (r->check && check(&pr->p, r->db, sel.pid || sel.tid || r->exe ||
			      sel.comm, r->k))
		return -1;
	if (r->check)
		hint_unnamed(&pr->p);	/* once: not of a --base run too */
	if (open_dwarf(st, r, pr) || draw_inlined(r, pr->dwarf, &pr->p))
		return -1;
	if (r->base && !(pr->base = load_base(st, r, &sel, pr)))
		return -1;
	return 0;
}

void profile__exit(struct profile *pr)
{
	if (!pr)
		return;
	profile_base__delete(pr->base);
	/* before the store closes: it keeps what DWARF said */
	profile_dwarf__delete(pr->dwarf);
	if (pr->own_lines)
		lines__delete(pr->lines);
	run_profile__exit(&pr->p);
	memset(pr, 0, sizeof(*pr));
}
