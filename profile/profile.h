/*
 * profile.h - the one way to build a profile: "the profile for this
 * selection".  A database is opened (profile__open()), and
 * profile__load() builds what a request asks for, in this order:
 *
 *   1. the selection: a run, the latest run, or a time window of runs;
 *      optionally one process, command or program (--exe, resolved to
 *      the one program of that path or name with samples);
 *   2. its profile (run_profile.h): the stored inference read back or
 *      made now within the CPU budget, or a validation run's true paths;
 *   3. the check that it can be shown with k callers (samples there,
 *      path maps for its programs);
 *   4. DWARF: a line reader for call sites, the functions inlined at
 *      each frame (dwarf.h), drawn as frames of their own;
 *   5. an optional baseline (base.h), a run built by the same steps or
 *      a folded file.
 *
 * report, compare, validate and export call it; none of them calls an
 * inference or inline step itself.  A profile made elsewhere, the
 * fleet's (summed by a ClickHouse server, export/fleet.h, which this
 * folder may not include), comes in through the same call
 * (PROFILE_READ), so a report is one call whatever its source.
 */
#ifndef ICPPD_PROFILE_PROFILE_H
#define ICPPD_PROFILE_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "profile/base.h"
#include "profile/dwarf.h"
#include "profile/run_profile.h"
#include "schema/report_store.h"

struct lines;
struct store;

/* Where a profile's paths come from. */
enum profile_source {
	PROFILE_INFERRED,	/* the selection's CIDs, inferred */
	PROFILE_TRUTH,		/* a validation run's true paths */
	PROFILE_READ,		/* made by @read: the fleet's, summed by a
				 * ClickHouse server (export/fleet.h) */
};

/* What to build: zero, then fill in what differs. */
struct profile_request {
	const char *db;		/* the database's name, in messages */
	/* The samples: sel.run_id, or the window sel.since_ns ..
	 * sel.until_ns when @window, or the latest measurement run when
	 * neither; sel.pid and sel.comm as given */
	struct store_selection sel;
	bool window;
	const char *exe;	/* only the program of this path or name */
	enum profile_source source;
	unsigned flags;		/* RUN_PROFILE_* */
	/* CPU seconds the inference may take; < 0: RUN_PROFILE_BUDGET_S */
	double budget_s;
	/* Refuse what cannot be shown with @k callers (no samples; no path
	 * map for any program when k > 0), and warn of what shows partly
	 * (programs without a map, binaries not readable) */
	bool check;
	uint32_t k;
	bool lines;		/* a line reader for call sites */
	bool inlined;		/* the functions inlined at each frame */
	/* ... drawn into the CCT as frames of their own (pprof shows
	 * them at its locations instead, from @dwarf) */
	bool draw_inlined;
	/* A line reader to use instead of starting one (compare's two
	 * operands share one); it outlives the profile */
	struct lines *shared_lines;
	/* A baseline, at k @base_k: a run id of the database (built as
	 * this request is, the window and latest aside) or a folded file;
	 * NULL: none */
	const char *base;
	uint32_t base_k;
	/* PROFILE_READ: fills *@p (zeroed first) from @read_arg, as
	 * profile__load() returns; no store is read */
	int (*read)(void *read_arg, struct run_profile *p);
	void *read_arg;
};

/* A built profile.  Every pointer is owned, but @lines when shared. */
struct profile {
	struct run_profile p;
	struct lines *lines;		/* NULL unless asked for */
	struct profile_dwarf *dwarf;	/* NULL unless inlined was */
	struct profile_base *base;	/* NULL unless asked for */
	bool own_lines;
};

/* Opens an existing database: writable when the file and its folder
 * are (a report stores its inference and DWARF answers), else
 * read-only.  NULL after logging why, with a hint when it is missing. */
struct store *profile__open(const char *path);

/*
 * Builds @out as @r asks, from store @st, which outlives it (NULL for
 * PROFILE_READ).  0;
 * RUN_PROFILE_NONE (logged) when the selection holds no run or a truth
 * source has no true paths; -1 after logging why.  @out needs
 * profile__exit() whatever the result.
 */
int profile__load(struct store *st, const struct profile_request *r,
		  struct profile *out);

/* Frees what @pr holds, keeping what DWARF said in the store first;
 * leaves it zeroed.  NULL: nothing. */
void profile__exit(struct profile *pr);

#endif
