/*
 * cmd_report.c - "icppd report": its options, and the glue from them
 * to the profile they ask for (profile/profile.h, or the fleet's,
 * export/fleet.h) and its view (report/report.h).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/outfile.h"
#include "export/fleet.h"
#include "report/report.h"
#include "schema/store.h"

struct report_opts {
	const char *db, *k, *output, *since, *until, *exe, *comm, *sort;
	const char *from, *host, *base, *dsos, *symbols;
	uint64_t run, pid, tid, max_stack;
	double min_percent, similar, hot, budget, timeout;
	int format;
	bool inclusive, lines, whole, exact, no_demangle, comm_frame;
	bool thread_frame;
	bool no_inline, children, off_cpu, wall;
};

#define OPT(f) offsetof(struct report_opts, f)
static const struct cli_option report_options[] = {
	CLI_OPT_DATABASE(OPT(db)),
	{ "input", 'i', CLI_STRING, OPT(db), "FILE",
	  "the profile database, as -d (perf report's -i)", 0, 0 },
	{ "percent-limit", 0, CLI_DOUBLE, OPT(min_percent), "P",
	  "as --min-percent (perf's name)", 0, 0, .lo = 0, .hi = 100 },
	{ "children", 0, CLI_FLAG, OPT(children), NULL,
	  "text: the top-down table, as perf report --children: each "
	  "function's samples with all it calls (children) and its own "
	  "(self), the heaviest first, and below each what it calls, --k "
	  "levels deep", 0, 0 },
	{ "no-children", 0, CLI_FLAG, 0, NULL, "self weights are the "
	  "default: perf's --no-children is not needed", 0, 0,
	  .flags = CLI_NOTE },
	{ "perf-g", 'g', CLI_FLAG, 0, NULL, "call paths are always shown: "
	  "--k K sets how many callers (inf: whole stacks)", 0, 0,
	  .flags = CLI_NOTE },
	{ "stdio", 0, CLI_FLAG, 0, NULL, "text on standard output is the "
	  "default: perf's --stdio is not needed", 0, 0, .flags = CLI_NOTE },
	{ "max-stack", 0, CLI_UINT, OPT(max_stack), "N",
	  "at most N frames of each stack: its function and N-1 callers "
	  "(perf's name; the same as --k N-1)", 1, UINT32_MAX },
	{ "run", 0, CLI_UINT, OPT(run), "ID",
	  "the run to report (default: the latest that is not training)",
	  1, INT64_MAX },
	{ "since", 0, CLI_STRING, OPT(since), "T",
	  "the runs (daemon segments) from time T: -10m, -2h, -1d, "
	  "2026-11-22T07:00:00 (UTC) or seconds since 1970", 0, 0 },
	{ "until", 0, CLI_STRING, OPT(until), "T",
	  "... up to time T (default now)", 0, 0 },
	{ "from", 0, CLI_STRING, OPT(from), "URL",
	  "the fleet: the runs every host exported to the ClickHouse "
	  "server at URL (icppd export), k-contexts summed there", 0, 0 },
	{ "host", 0, CLI_STRING, OPT(host), "HOST",
	  "with --from: only the runs of host HOST", 0, 0 },
	{ "timeout", 0, CLI_DOUBLE, OPT(timeout), "S",
	  "with --from: the longest each query to the server may take, "
	  "its reply read (default 120)", 0, 0, CLI_SECONDS(0) },
	{ "exe", 0, CLI_STRING, OPT(exe), "PROGRAM",
	  "only the samples of processes running PROGRAM (a path, or a "
	  "name such as cc1)", 0, 0 },
	{ "pid", 'p', CLI_UINT, OPT(pid), "PID",
	  "only the samples of process PID", 1, INT32_MAX },
	{ "comm", 0, CLI_STRING, OPT(comm), "NAME",
	  "only the samples of threads named NAME (the command, as ps "
	  "shows it)", 0, 0 },
	{ "off-cpu", 0, CLI_FLAG, OPT(off_cpu), NULL,
	  "the time threads were blocked, by the call path each switched "
	  "out of (record --off-cpu), in microseconds, instead of the CPU "
	  "samples", 0, 0 },
	{ "wall", 0, CLI_FLAG, OPT(wall), NULL,
	  "wall-clock time: each thread's CPU samples at their period and "
	  "its blocked time (record --off-cpu) together, in microseconds",
	  0, 0 },
	{ "tid", 0, CLI_UINT, OPT(tid), "TID",
	  "only the samples of thread TID", 1, INT32_MAX },
	{ "dsos", 0, CLI_STRING, OPT(dsos), "LIST",
	  "only the samples in these binaries: names (libc.so.6) or paths, "
	  "comma-separated, as perf report's --dsos", 0, 0 },
	{ "symbols", 0, CLI_STRING, OPT(symbols), "LIST",
	  "only the samples in these functions, named as the report names "
	  "them, comma-separated, as perf report's --symbols", 0, 0 },
	{ "sort", 's', CLI_STRING, OPT(sort), "KEYS",
	  "text: a flat table of self samples by KEYS, perf-style: comm, "
	  "pid, dso, sym, comma-separated", 0, 0 },
	{ "comm-frame", 0, CLI_FLAG, OPT(comm_frame), NULL,
	  "folded and svg: start each stack with its command, as "
	  "stackcollapse-perf.pl does", 0, 0 },
	{ "thread-frame", 0, CLI_FLAG, OPT(thread_frame), NULL,
	  "folded and svg: start each stack with its thread, COMM-PID/TID, "
	  "as stackcollapse-perf.pl --tid does", 0, 0 },
	{ "k", 'k', CLI_STRING, OPT(k), "K",
	  "callers per context: 0 flat, 1 edges, ..., inf (default 3 for "
	  "text and json, inf for folded, pprof and svg)", 0, 0 },
	{ "inclusive", 0, CLI_FLAG, OPT(inclusive), NULL,
	  "weigh a context by the samples anywhere below it", 0, 0 },
	{ "min-percent", 0, CLI_DOUBLE, OPT(min_percent), "P",
	  "hide contexts under P % of all samples (default 0.5 for text, "
	  "else 0)", 0, 0, .lo = 0, .hi = 100 },
	{ "similar", 0, CLI_DOUBLE, OPT(similar), "X",
	  "keep the X%-similar part: contexts with at least X % of their "
	  "function's samples", 0, 0, .lo = 0, .hi = 100 },
	{ "hot", 0, CLI_DOUBLE, OPT(hot), "P",
	  "the hot calling context tree: contexts with at least P % of "
	  "all samples (0 < P <= 100), and their callers", 0, 0,
	  .flags = CLI_OPEN_LO, .lo = 0, .hi = 100 },
	{ "format", 'f', CLI_ENUM, OPT(format), "FMT",
	  "text, folded, json, pprof or svg (a flame graph)", 0, 0,
	  .dflt = "text",
	  .choices = report_format_names },
	CLI_OPT_OUTPUT(OPT(output)),
	{ "base", 0, CLI_STRING, OPT(base), "RUN|FILE",
	  "a differential report against run RUN of the database or a "
	  "folded FILE: each function's and context's change of share "
	  "(text, json, folded as flamegraph.pl's two columns); svg: red "
	  "grew, blue shrank", 0, 0 },
	{ "lines", 0, CLI_FLAG, OPT(lines), NULL,
	  "show each caller's call site as file:line (DWARF)", 0, 0 },
	{ "no-inline", 0, CLI_FLAG, OPT(no_inline), NULL,
	  "leave out the functions inlined in each frame (by default "
	  "they are frames of their own, marked \"(inlined)\", where "
	  "DWARF names them)", 0, 0 },
	{ "exact", 0, CLI_FLAG, OPT(exact), NULL,
	  "folded and pprof: apportioned weights as fractions (default: "
	  "whole counts that add up to each function's samples)", 0, 0 },
	{ "no-demangle", 0, CLI_FLAG, OPT(no_demangle), NULL,
	  "C++ names as the symbols spell them (_ZN...), not demangled",
	  0, 0 },
	{ "whole-chains", 0, CLI_FLAG, OPT(whole), NULL,
	  "show every inferred context whole, also callers that only a "
	  "guess puts there (search chains through calls no learned path "
	  "took)", 0, 0 },
	{ "budget", 0, CLI_DOUBLE, OPT(budget), "S",
	  "at most S CPU seconds for the first report of a run to spend "
	  "searching for CIDs no path map explains, and as many reading "
	  "the binaries' calls (once per build); what it leaves unknown is "
	  "counted (default: none, every CID searched, each within its own "
	  "bound of work)", 0, 0, .lo = 0, .hi = 86400 },
};

const struct cli_command report_command = {
	.name = "report",
	.synopsis = "[options]",
	.brief = "call paths of a run: k-calling-context forests, hot contexts",
	.summary = "Show a run's call paths: for each function, its hottest\n"
		   "calling contexts of up to K callers, inferred from the\n"
		   "context identifiers through the training path maps.",
	.options = report_options,
	.noptions = sizeof(report_options) / sizeof(report_options[0]),
	.permute = true,
	.epilog = "Weights marked '~' are partly apportioned among ambiguous\n"
		  "candidates or found by search, not certain.  See\n"
		  "icppd-report(1), and the v_inferred and v_kccf views.\n",
};

#define TEXT_MIN_PERCENT 0.5

#define usage(...) cli__usage(&report_command, __VA_ARGS__)

/* @s as nanoseconds since 1970: "now", -Ns/-Nm/-Nh/-Nd before now,
 * seconds since 1970, or an ISO 8601 UTC date and time. */
static int parse_time(const char *s, int64_t *ns)
{
	int64_t now = clock__real_ns();
	static const char *const formats[] = { "%Y-%m-%dT%H:%M:%S",
		"%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d" };
	char *end;
	double v;

	if (!strcmp(s, "now")) {
		*ns = now;
		return 0;
	}
	if (s[0] == '-') {
		v = strtod(s + 1, &end);
		if (end != s + 1 && v >= 0 && end[0] && !end[1] &&
		    strchr("smhd", end[0])) {
			double unit = end[0] == 's' ? 1 : end[0] == 'm' ? 60 :
				      end[0] == 'h' ? 3600 : 86400;

			/* Up to 280 years back, so that no conversion or
			 * subtraction below overflows an int64_t. */
			if (!(v * unit <= 9e9 - (double)(now / 1000000000)))
				return -1;
			*ns = now - (int64_t)(v * unit * 1e9);
			return 0;
		}
		return -1;
	}
	v = strtod(s, &end);
	if (end != s && !*end && v >= 0 && v <= 9e9) {
		*ns = (int64_t)(v * 1e9);
		return 0;
	}
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		struct tm tm = { 0 };
		const char *e = strptime(s, formats[i], &tm);

		time_t t = e && !*e ? timegm(&tm) : -1;

		if (t >= 0 && t <= 9000000000) {	/* year 2255 */
			*ns = (int64_t)t * 1000000000;
			return 0;
		}
	}
	return -1;
}


/* --sort's keys into @v; -1 after a usage message. */
static int parse_sort(const char *keys, struct report_view *v)
{
	const char *s = keys;

	if (v->fmt != REPORT_TEXT || v->phi > 0)
		return usage("--sort makes a text table: not with --format "
			     "%s or --hot", report_format_names[v->fmt]);
	while (*s) {
		size_t len = strcspn(s, ",");
		int key = -1;

		for (int i = 0; report_sort_names[i]; i++)
			if (strlen(report_sort_names[i]) == len &&
			    !strncmp(report_sort_names[i], s, len))
				key = i;
		for (size_t i = 0; key >= 0 && i < v->nsort; i++)
			if (v->sort[i] == (enum report_sort)key)
				key = -1;
		if (key < 0)
			return usage("--sort: expected comm, pid, dso or sym, "
				     "each once, separated by commas, not "
				     "'%s'", keys);
		v->sort[v->nsort++] = (enum report_sort)key;
		s += len + (s[len] == ',');
	}
	if (!v->nsort)
		return usage("--sort: expected comm, pid, dso or sym, not ''");
	return 0;
}

/* The view and the selection the options ask for; -1 after a usage
 * message. */
static int check_opts(const struct report_opts *o, struct report_view *v,
		      struct store_selection *sel)
{
	v->fmt = (enum report_format)o->format;
	/* export formats are read as whole stacks by every tool */
	v->k = v->fmt == REPORT_FOLDED || v->fmt == REPORT_PPROF ||
	       v->fmt == REPORT_SVG ? KCCF_INF : 3;
	v->exact = o->exact;
	if (o->k && cli__parse_count("report", "k", o->k, KCCF_INF, &v->k))
		return -1;
	if (o->k && o->max_stack)
		return usage("--k and --max-stack both say how deep: give one");
	if (o->max_stack)
		v->k = (uint32_t)(o->max_stack - 1);
	if ((o->dsos && !*o->dsos) || (o->symbols && !*o->symbols))
		return usage("--%s: expected a comma-separated list, not ''",
			     o->dsos && !*o->dsos ? "dsos" : "symbols");
	v->dsos = o->dsos;
	v->symbols = o->symbols;
	v->inclusive = o->inclusive;
	v->min_percent = !isnan(o->min_percent) ? o->min_percent :
			 v->fmt == REPORT_TEXT ? TEXT_MIN_PERCENT : 0;
	v->similar = o->similar;
	v->phi = o->hot / 100;
	if (o->hot && (o->k || o->similar || o->inclusive || o->exact))
		return usage("--hot shows whole contexts: it takes no --k, "
			     "--similar, --inclusive or --exact");
	if (o->exact && v->fmt != REPORT_FOLDED && v->fmt != REPORT_PPROF)
		return usage("--exact: %s output shows fractions already; "
			     "--exact is for folded and pprof",
			     report_format_names[v->fmt]);
	if (o->inclusive && (v->fmt == REPORT_FOLDED || v->fmt == REPORT_PPROF ||
			     v->fmt == REPORT_SVG))
		return usage("--inclusive: %s output carries self weights "
			     "(its tools add them up)",
			     report_format_names[v->fmt]);
	if (o->since && parse_time(o->since, &sel->since_ns))
		return usage("--since: expected now, -10m (s, m, h, d), seconds "
			     "since 1970 or 2026-11-22T07:00:00, not '%s'",
			     o->since);
	if (o->until && parse_time(o->until, &sel->until_ns))
		return usage("--until: expected now, -10m (s, m, h, d), seconds "
			     "since 1970 or 2026-11-22T07:00:00, not '%s'",
			     o->until);
	if ((o->since || o->until) && o->run)
		return usage("--run and --since/--until choose runs two ways: "
			     "give one");
	if (o->exe && !*o->exe)
		return usage("--exe: expected a program's path or name, not ''");
	if ((v->fmt == REPORT_PPROF || v->fmt == REPORT_SVG) && o->hot)
		return usage("--hot: %s holds whole stacks; use --k inf "
			     "instead", report_format_names[v->fmt]);
	if (o->sort && parse_sort(o->sort, v))
		return -1;
	v->children = o->children;
	if (o->children && (v->fmt != REPORT_TEXT || o->sort || o->hot ||
			    o->base || o->inclusive))
		return usage("--children is the top-down text table (not with "
			     "-f, --sort, --hot, --base or --inclusive); folded, "
			     "svg and pprof hold whole stacks, which their "
			     "tools show top-down");
	if (o->base && (v->fmt == REPORT_PPROF || o->hot || o->sort ||
			o->inclusive || o->from))
		return usage("--base compares self weights in text, json, folded "
			     "or svg (not with --hot, --sort, --inclusive or "
			     "--from); for pprof, write the base to its own "
			     "file and run go tool pprof -diff_base BASE NEW");
	if (o->base && !*o->base)
		return usage("--base: expected a run id or a folded file, not ''");
	if ((o->comm_frame || o->thread_frame) && v->fmt != REPORT_FOLDED &&
	    v->fmt != REPORT_SVG)
		return usage("--%s is for folded and svg output",
			     o->comm_frame ? "comm-frame" : "thread-frame");
	if (o->comm_frame && o->thread_frame)
		return usage("--thread-frame names the command too: give one");
	if (o->comm && !*o->comm)
		return usage("--comm: expected a command name, not ''");
	if ((o->host || o->timeout) && !o->from)
		return usage("--%s is for --from (the fleet's runs)",
			     o->host ? "host" : "timeout");
	if (o->from && (o->run || o->pid || o->tid || o->comm || o->sort ||
			o->hot || o->comm_frame || o->thread_frame ||
			o->inclusive || o->lines))
		return usage("--from reads the fleet's stacks: in any format, "
			     "with --k, --since, --until, --host, --exe, "
			     "--off-cpu and --timeout");
	if (o->wall && o->from)
		return usage("--wall: not with --from (the fleet's stacks "
			     "weigh samples, not time); --off-cpu is");
	if (o->off_cpu && o->wall)
		return usage("--wall holds the off-CPU time already: give one");
	sel->offcpu = o->off_cpu;
	sel->wall = o->wall;
	sel->pid = (int64_t)o->pid;
	sel->tid = (int64_t)o->tid;
	sel->comm = o->comm;
	return 0;
}

/* What profile__load() is to do for this report. */
static unsigned profile_flags(const struct report_opts *o,
			      const struct report_view *v)
{
	/* names and lines a stripped binary lacks, from its debug file */
	unsigned flags = RUN_PROFILE_SAVE | RUN_PROFILE_STATIC |
			 RUN_PROFILE_DEBUGINFO | RUN_PROFILE_DEBUGINFOD;

	if (o->whole)
		flags |= RUN_PROFILE_WHOLE;
	if (o->no_demangle)
		flags |= RUN_PROFILE_MANGLED;
	for (size_t i = 0; i < v->nsort; i++)
		if (v->sort[i] == REPORT_SORT_PID)
			flags |= RUN_PROFILE_BY_PID;
		else if (v->sort[i] == REPORT_SORT_COMM)
			flags |= RUN_PROFILE_BY_COMM;
	if (v->fmt == REPORT_PPROF)	/* pid and comm labels; leaf pcs */
		flags |= RUN_PROFILE_BY_PID | RUN_PROFILE_PCS;
	if (!o->no_inline)		/* what was inlined at the leaf pcs */
		flags |= RUN_PROFILE_PCS;
	if (o->comm_frame)
		flags |= RUN_PROFILE_BY_COMM;
	if (o->thread_frame)	/* folded and svg: no --sort */
		flags |= RUN_PROFILE_BY_THREAD;
	/* self weights alone: no callers to infer (JSON keeps the
	 * inference's figures) */
	if (v->nsort || (v->k == 0 && !v->inclusive && v->phi <= 0 &&
			 (v->fmt == REPORT_TEXT || v->fmt == REPORT_FOLDED)))
		flags |= RUN_PROFILE_FLAT;
	return flags & RUN_PROFILE_BY_PID ? flags & ~RUN_PROFILE_BY_COMM :
	       flags;
}

/* The profile the options ask for: the fleet's, from @fq, with --from. */
static void request_of(const struct report_opts *o,
		       const struct report_view *v,
		       const struct store_selection *sel,
		       struct fleet_query *fq, struct profile_request *r)
{
	if (o->from) {
		*fq = (struct fleet_query){ .url = o->from, .k = v->k,
			.since_ns = sel->since_ns,
			.until_ns = sel->until_ns == INT64_MAX ? 0 :
				    sel->until_ns,
			.host = o->host, .exe = o->exe, .offcpu = o->off_cpu,
			.timeout_s = o->timeout > 0 && o->timeout < 1 ? 1 :
				     (long)o->timeout };
		*r = (struct profile_request){ .source = PROFILE_READ,
			.read = fleet__read, .read_arg = fq };
		return;
	}
	r->db = o->db;
	r->sel = *sel;
	r->sel.run_id = (int64_t)o->run;
	r->window = o->since || o->until;
	r->exe = o->exe;
	r->flags = profile_flags(o, v);
	r->budget_s = o->budget;
	r->check = true;
	r->k = v->nsort ? 0 : v->k;	/* a flat table needs no map */
	r->lines = o->lines;
	r->inlined = !o->no_inline;
	r->draw_inlined = v->fmt != REPORT_PPROF;	/* pprof: at its
							 * locations */
	r->base = o->base;
	r->base_k = v->k;
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { .min_percent = NAN, .budget = -1 };
	struct report_view v = { 0 };
	struct profile_request rq = { 0 };
	struct fleet_query fq;
	struct profile pr = { 0 };
	struct store_selection sel = { .until_ns = INT64_MAX };
	struct store *st = NULL;
	struct outfile out = { 0 };
	int idx, ret = 1;

	cli__defaults(&report_command, &o);
	idx = cli__parse(&report_command, argc, argv, &o);
	if (idx < 0)
		return idx == -1 ? 0 : 2;
	if (idx < argc) {
		usage("unexpected argument '%s'", argv[idx]);
		return 2;
	}
	if (check_opts(&o, &v, &sel))
		return 2;
	if (v.fmt == REPORT_PPROF && !o.output && isatty(STDOUT_FILENO)) {
		usage("-f pprof writes gzipped protobuf, which a terminal "
		      "cannot show: give -o FILE (or redirect the output)");
		return 2;
	}
	if (outfile__open(&out, o.output))
		return 1;
	v.out = out.f;
	v.p = &pr.p;
	request_of(&o, &v, &sel, &fq, &rq);
	cli__use_calls_cache();
	if ((!o.from && !(st = profile__open(o.db))) ||
	    profile__load(st, &rq, &pr))
		goto out;
	v.lines = o.lines ? pr.lines : NULL;
	v.dwarf = pr.dwarf;
	v.base = pr.base;
	if (report__write(&v))
		goto out;
	ret = 0;
out:
	profile__exit(&pr);	/* before the store closes */
	store__close(st);
	if (outfile__close(&out, !ret))
		ret = 1;
	return ret;
}
