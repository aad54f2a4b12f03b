/*
 * run_profile.h - a run's profile as a weighted CCT: inferred from its
 * CIDs through the path maps in the store (and written back to the
 * store's inferred table), or, for a validation run, the true paths of
 * its samples.  The glue between the store and the inference engine,
 * shared by report and compare.
 */
#ifndef ICPPD_PROFILE_RUN_PROFILE_H
#define ICPPD_PROFILE_RUN_PROFILE_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inference/cct.h"
#include "inference/infer.h"
#include "profile/static_calls.h"
#include "schema/report_store.h"

/* The commands a profile shows by name in its header. */
#define RUN_PROFILE_COMMS 4

struct lines;

struct run_profile {
	struct run_row run;
	struct cct *cct;		/* owned */
	struct infer_stats stats;
	struct store_module *modules;	/* all of the store's, with
					 * strings owned here */
	size_t nmodules, modules_cap;
	size_t programs, unmapped;	/* programs, those without a map */
	char unmapped_path[256];	/* one of them ("" when unknown) */
	char unmapped_list[2048];	/* all, ", " between, cut with
					 * ", ..." past the room */
	bool whole;			/* RUN_PROFILE_WHOLE */
	bool offcpu;			/* weights: microseconds blocked
					 * (store_selection.offcpu) */
	bool wall;			/* ... and of CPU samples: wall
					 * clock (store_selection.wall) */
	bool filtered;			/* the selection chose processes,
					 * a program or a command: shares of
					 * whole runs are not of its total */
	bool mangled;			/* RUN_PROFILE_MANGLED */
	bool flat;			/* RUN_PROFILE_FLAT */
	bool fleet;			/* the fleet's, from ClickHouse: run
					 * says from where, and ... */
	char fleet_read[256];		/* ... this what was summed there */
	/* The heaviest commands (threads' names) of the samples, and how
	 * many there are in all */
	struct run_comm {
		char name[64];
		double samples;
	} comms[RUN_PROFILE_COMMS];
	size_t ncomms;
	double kernel_samples;		/* taken in the kernel (--kernel) */
	struct static_calls *calls;	/* the binaries' direct calls, when
					 * read; owned */
	struct static_calls_stats calls_stats;	/* what reading them did,
						 * now or when the stored
						 * inference was made */
	/* The inference: read back as stored (@reused), or made now within
	 * the budget, which left @over_budget_cids CIDs (their samples in
	 * the runs inferred) unknown; @searches CIDs were searched, in
	 * @inference_cpu_s of CPU time */
	bool reused;
	double budget_s;		/* what it was given */
	int64_t over_budget_cids, searches;
	double over_budget_samples, inference_cpu_s;
	/* RUN_PROFILE_PCS: the sampled instructions, by function and
	 * offset (store__run_pcs()); owned */
	struct store_pc *pcs;
	size_t npcs, pcs_cap;
	/* What the latest validation of each program measured, pooled
	 * (validated_run: the latest of them; 0: none) */
	int64_t validated_run;
	double validated[CCT_NR_HOW], validated_correct[CCT_NR_HOW];
	/* RUN_PROFILE_DEBUGINFO: each module's debug file, opened at its
	 * first nameless function (NULL: none; parallel to @modules) */
	struct module **debug;
	bool *debug_looked;
	struct lines *debug_lines;	/* whose worker looks them up */
	unsigned flags;
	size_t named_by_debuginfo;	/* functions named so */
};

/* What run_profile__infer() does besides inferring. */
enum {
	/* store the inference of the selection's runs (a writable store;
	 * only runs whose stored one no longer holds) */
	RUN_PROFILE_SAVE = 1,
	/* read the direct calls of the binaries whose samples the path
	 * maps do not explain (static_calls.h) */
	RUN_PROFILE_STATIC = 2,
	/* show every context whole, not cut where the candidates
	 * disagree (infer.h); never stored, and not what validation
	 * scores */
	RUN_PROFILE_WHOLE = 4,
	/* C++ names as the symbols spell them, not demangled */
	RUN_PROFILE_MANGLED = 8,
	/* every context under a process frame (cct__process()): one per
	 * command, or one per process (the stored inference serves them:
	 * it is kept per CID, whatever the process) */
	RUN_PROFILE_BY_COMM = 16,
	RUN_PROFILE_BY_PID = 32,
	/* read the sampled instructions of each function too (pcs) */
	RUN_PROFILE_PCS = 64,
	/* a flat profile: each CID's samples on its function, under an
	 * unknown-callers frame, with no path map, call or search read or
	 * made (report --k 0, --sort: self weights need no callers, and
	 * inferring them took most of such a report's time); never
	 * stored */
	RUN_PROFILE_FLAT = 128,
	/* name the functions a stripped binary left nameless from its
	 * separate debug file (binary/debuginfo.h): the build-id tree and
	 * .gnu_debuglink; with _DEBUGINFOD also debuginfod (the network:
	 * never for what the root daemon starts) */
	RUN_PROFILE_DEBUGINFO = 256,
	RUN_PROFILE_DEBUGINFOD = 512,
	/* every context under a frame of its thread, COMM-PID/TID */
	RUN_PROFILE_BY_THREAD = 1024,
};

/* The CPU time a report's inference may take searching, and as much
 * reading the binaries' calls (once per build: the database keeps
 * them), when nobody says otherwise: none.  Each CID's search has its
 * own bound of work (infer_limits.max_states), so the whole is bounded
 * by the CIDs, and what a report shows does not hang on the machine's
 * speed, its load or its cache.  The 0.8 s this was left a 10 kHz
 * clang++ trickle record's first report 25 % of its samples under
 * unknown callers and its k = 3 ratio at 0.76, against 1 % and 0.85
 * searching every CID, for 2-3 s more of that report's 5-9 s
 * (docs/benchmarks.md, "Issue 53: a search that finishes"). */
#define RUN_PROFILE_BUDGET_S HUGE_VAL

/* "Nothing there": the run does not exist, the window holds none, or a
 * validation run has no true paths (docs/architecture.md, errors). */
#define RUN_PROFILE_NONE 1

/*
 * The profile of the samples @sel selects (a run, or a time window of
 * runs, optionally one process, program or command), as @flags say.
 *
 * A run is inferred once: the first report infers every CID of the
 * whole run (its path maps; with RUN_PROFILE_STATIC the binaries'
 * direct calls too) and, with RUN_PROFILE_SAVE and a writable store,
 * stores each CID's explanation; every later profile of the run, in
 * any format and choice of processes, reads them back, until the run
 * or the map of one of its programs grows (or a larger budget is given
 * where this one ran out).  Inferring takes at most about @budget_s of
 * CPU: lookups always, the CIDs that need a search the heaviest first
 * while the budget lasts, binaries decoded only while their size fits
 * in what is left; the rest stays unknown, counted (over_budget_*).
 * RUN_PROFILE_WHOLE and _FLAT profiles are views, inferred as read.
 * 0, or -1 after logging why; RUN_PROFILE_NONE (logged) when the run
 * does not exist or the window holds none.
 */
int run_profile__infer_within(struct store *st,
			      const struct store_selection *sel,
			      unsigned flags, double budget_s,
			      struct run_profile *p);

/* run_profile__infer_within() with RUN_PROFILE_BUDGET_S. */
int run_profile__infer(struct store *st, const struct store_selection *sel,
		       unsigned flags, struct run_profile *p);

/* The true paths that validation run @run_id unwound, as a profile:
 * every record precise.  0, RUN_PROFILE_NONE (not logged) when the run
 * has no true paths, or -1 after logging why. */
int run_profile__truth(struct store *st, int64_t run_id,
		       struct run_profile *p);

/* What a report of a validation run shows for one of its true paths. */
struct run_score {
	const char *program;		/* valid in the call */
	int64_t program_id, function_id;
	const char *function;		/* the leaf; valid in the call */
	enum cct_how how;
	size_t solutions;		/* contexts the samples are split over */
	double samples;			/* ending in this true path */
	double correct;			/* the weight of contexts whose every
					 * frame is true: the true one, and
					 * ones cut short under unknown
					 * callers */
	double cut;			/* of @correct, the cut ones */
	double correct_k;		/* the weight of contexts whose frames
					 * a report with k callers shows are
					 * true (the leaf and k callers, or
					 * fewer above a cut): @correct and
					 * more */
};

/*
 * Scores validation run @run_id by what a report of it would show: each
 * of its true paths (its own map) has its CID inferred as
 * run_profile__infer() with RUN_PROFILE_STATIC does, from the training
 * and learned maps and the binaries' direct calls, never from the run's
 * own true paths; @fn gets each, with the weight the true context got
 * (and that of contexts true as far as a report with @k callers shows).
 * A non-zero return from @fn (-ENOMEM) stops.  0, RUN_PROFILE_NONE (not
 * logged) when the run has no true paths, -1 after logging why.
 */
int run_profile__score(struct store *st, int64_t run_id, unsigned k,
		       int (*fn)(void *arg, const struct run_score *s),
		       void *arg);

void run_profile__exit(struct run_profile *p);

/* The module of @id, or NULL. */
const struct store_module *run_profile__module(const struct run_profile *p,
						 int64_t id);

#endif
