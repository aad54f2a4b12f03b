/*
 * report_store.h - what reports read from the profile database, and
 * how a run's inferred calling context tree is written back to it.
 *
 * Reads go through callbacks, one row at a time, so the caller keeps
 * only what it builds.  The store's one convention: 0 when done, -1 with
 * store__error() set when anything failed.  A callback returns 0 to go
 * on, a positive value to stop (the walk returns it), or a negative
 * errno to fail: the walk returns -1, store__error() says "what: why"
 * and store__stopped() gives the errno.
 */
#ifndef ICPPD_SCHEMA_REPORT_STORE_H
#define ICPPD_SCHEMA_REPORT_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "schema/store.h"

struct run_row {
	int64_t id;
	char kind[16];		/* record, train, validate */
	char status[16];	/* running, finished, interrupted, failed,
				 * crashed (a later record found its
				 * recorder killed) */
	char event[64];
	char command[256];	/* truncated */
	int64_t samples, unresolved, lost;
	uint64_t period, frequency;
	int64_t started_ns, ended_ns;	/* ended: the last flush of a run
					 * still going */
	int64_t user_ns, system_ns;	/* the command's CPU time; -1: not
					 * measured */
	bool kernel;			/* samples in the kernel count */
	int64_t learned_paths;		/* learning samples unwound whole */
	int64_t learned_once;		/* paths among them seen once; -1:
					 * not counted (before schema 16) */
};

/* The latest measurement run (record or daemon) in *@id, passing over
 * the daemon's segments without samples (its open one, not flushed
 * yet); STORE_NONE when there is none. */
int store__latest_run(struct store *st, int64_t *id);
/* Run @id; STORE_NONE when there is no such run. */
int store__run(struct store *st, int64_t id, struct run_row *out);
/* The lowest and highest run ids (0, 0 when none). */
int store__run_range(struct store *st, int64_t *lo, int64_t *hi);

struct store_module {
	int64_t id;
	const char *path, *build_id;	/* valid in the callback */
};
int store__modules(struct store *st,
		   int (*fn)(void *arg, const struct store_module *m),
		   void *arg);

/* The programs (executables) with samples in the database whose path is
 * @name or, for a @name without '/', whose last component is @name (NULL:
 * every program with samples), by path.  @path is valid in the callback. */
int store__programs_named(struct store *st, const char *name,
			  int (*fn)(void *arg, const char *path), void *arg);

struct store_function {
	int64_t id, module_id;
	uint64_t address;
	const char *name;		/* valid in the callback */
};
int store__functions(struct store *st,
		     int (*fn)(void *arg, const struct store_function *f),
		     void *arg);

/*
 * Which samples a profile is made of: one run, or every run (not
 * training) whose time overlaps [since_ns, until_ns] (the daemon writes
 * one run per segment, so a window is as fine as its segments);
 * optionally one process and one program (its path).
 */
struct store_selection {
	int64_t run_id;		/* > 0: this run; 0: the window */
	int64_t since_ns, until_ns;
	int64_t pid;		/* 0: every process */
	int64_t tid;		/* 0: every thread */
	const char *program;	/* NULL: every program */
	const char *comm;	/* NULL: every command (a thread's name) */
	/* The CIDs' weights in store__run_cids(), _process_cids() and
	 * _comms(): their samples; with @offcpu (record --off-cpu) the
	 * microseconds their threads were blocked after switching out of
	 * them (offcpu_samples); with @wall both, each sample worth its
	 * period in microseconds. */
	bool offcpu, wall;
};

/* The runs of a window: their number, ids and samples; 0 or -1. */
int store__window_runs(struct store *st, const struct store_selection *sel,
		       int64_t *nruns, int64_t *first, int64_t *last,
		       int64_t *samples, int64_t *unresolved);

/* The ids of a window's runs, in order. */
int store__window_run_ids(struct store *st, const struct store_selection *sel,
			  int (*fn)(void *arg, int64_t run_id), void *arg);

/* The programs (modules(id); 0: unknown) whose processes have CIDs in
 * the selection. */
int store__run_programs(struct store *st, const struct store_selection *sel,
			int (*fn)(void *arg, int64_t program_id), void *arg);

struct store_cid {
	int64_t program_id, function_id, height, samples;
	int64_t kernel;		/* of @samples, those in the kernel */
	int64_t pid;		/* store__run_process_cids() by process or
				 * thread */
	const char *comm;	/* store__run_process_cids(): the thread's
				 * command ("?" when unknown), by thread
				 * COMM-PID/TID, valid in the callback */
};
/* How store__run_process_cids() groups the samples: by command; by
 * process and command; by thread (stackcollapse-perf.pl --tid). */
enum store_group { STORE_BY_COMM, STORE_BY_PID, STORE_BY_THREAD };
/* The selection's samples by (program, function, height), all threads
 * together. */
int store__run_cids(struct store *st, const struct store_selection *sel,
		    int (*fn)(void *arg, const struct store_cid *c), void *arg);
/* ... by command, process or thread (@by), and CID. */
int store__run_process_cids(struct store *st,
			    const struct store_selection *sel,
			    enum store_group by,
			    int (*fn)(void *arg, const struct store_cid *c),
			    void *arg);
/* The selection's samples at one instruction of a function. */
struct store_pc {
	int64_t function_id;
	uint32_t offset;	/* from the function's start */
	int64_t samples;	/* > 0 */
};
/* ... by function and offset, processes together, in that order; rows
 * a crafted database holds out of range are left out. */
int store__run_pcs(struct store *st, const struct store_selection *sel,
		   int (*fn)(void *arg, const struct store_pc *pc), void *arg);
/* The rows of function @function_id among @n such rows @pcs (sorted by
 * function): their number, from *@first. */
size_t store__pcs_of(const struct store_pc *pcs, size_t n,
		     int64_t function_id, size_t *first);
/* The selection's kernel call chains (record --kernel): per CID, each
 * chain's names and samples, over all its processes. */
struct store_kchain {
	int64_t program_id, function_id, height;
	const char *chain;		/* valid in the callback */
	int64_t samples;
};
int store__run_kchains(struct store *st, const struct store_selection *sel,
		       int (*fn)(void *arg, const struct store_kchain *k),
		       void *arg);
/* The selection's samples by command, the heaviest first. */
int store__run_comms(struct store *st, const struct store_selection *sel,
		     int (*fn)(void *arg, const char *comm, int64_t samples),
		     void *arg);

struct store_node {
	int64_t id, parent_id;	/* parent_id 0: an outermost frame */
	int64_t function_id, context_id, height, call_site, self, total;
};
/* The nodes of @program_id's map for @map_run (0: training; a
 * validation run: its true paths), parents first.  STORE_NONE when
 * there is no such map. */
int store__map_nodes(struct store *st, int64_t program_id, int64_t map_run,
		     int (*fn)(void *arg, const struct store_node *n),
		     void *arg);

/* The samples run @run_id's learning unwound whole, by the map node
 * their paths end at (@samples > 0).  0 or -1. */
int store__run_learned(struct store *st, int64_t run_id,
		       int (*fn)(void *arg, int64_t node_id, int64_t samples),
		       void *arg);

/* Learned samples in the path maps of the programs run @run_id
 * sampled: grows when one of its builds learns. */
int store__run_map_samples(struct store *st, int64_t run_id,
			   int64_t *samples);

/* A run's stored inference: what it was computed from (the learned
 * samples of its programs' maps, the run's samples, the budget), and
 * what the inference did, for the report's header. */
struct inference_stamp {
	int64_t map_samples, run_samples;
	double budget_s;		/* the search budget it had */
	int64_t static_calls;		/* direct calls read */
	int64_t static_modules;		/* binaries read */
	int64_t unreadable;		/* binaries that could not be */
	char unreadable_path[256];	/* one of them, and why */
	char unreadable_why[64];
	int64_t over_budget_cids;	/* left unknown: the budget ran out */
	double over_budget_samples;	/* their samples */
	int64_t over_budget_modules;	/* binaries not read: over budget */
	int64_t searches;		/* CIDs searched */
	double cpu_s;			/* CPU time the inference took */
};

/*
 * The direct calls of build @build_id, as build_calls__pack() wrote
 * them (what the store holds is not checked here: unpack it so): 1 with
 * *@blob malloc'ed, *@len bytes; 0 when there is none or it is larger
 * than @max; -1.  A database that can be written marks them read by
 * its newest run (retention drops them with that run).
 */
int store__build_calls(struct store *st, const char *build_id, size_t max,
		       void **blob, size_t *len);
/* Keeps @blob (@len bytes) as build @build_id's calls.  0 or -1. */
int store__put_build_calls(struct store *st, const char *build_id,
			   const void *blob, size_t len);

/* The longest chain text kept. */
#define STORE_MAX_CHAIN 8192

/*
 * The functions inlined at address @address of build @build_id that a
 * report read from its DWARF before (profile__inline()), into @chain
 * (@len bytes, at least STORE_MAX_CHAIN + 1): names outermost first,
 * '\n' between ("" for none).  One lookup of the table's key, whatever
 * else the build holds: a report asks for the addresses it needs.
 * 1, 0 when there is no such row (or one longer than STORE_MAX_CHAIN),
 * or -1.
 */
int store__inlined_at(struct store *st, const char *build_id,
		      uint64_t address, char *chain, size_t len);
/* Keeps the @n chains @chains of build @build_id at @addresses, over
 * what was there (a row a reader could not use; @chains[i] NULL: the
 * row there stays, a row read), and marks each of the @n rows read by
 * the newest run (retention drops them with the last run that read
 * them).  0, or -1 (a read-only database keeps nothing: the chains are
 * read again). */
int store__keep_inlined(struct store *st, const char *build_id,
			const uint64_t *addresses, char *const *chains,
			size_t n);

/* The stamp of run @run_id's stored inference; STORE_NONE when there
 * is none. */
int store__inference_stamp(struct store *st, int64_t run_id,
			   struct inference_stamp *out);

/* Writing an inference, in one transaction: begin (drops the run's old
 * rows), contexts and unknown frames as needed, rows, then commit (or
 * rollback on any failure). */
int store__inference_begin(struct store *st, int64_t run_id);
int store__context(struct store *st, int64_t parent_id, int64_t function_id,
		   int64_t *id);
/* The function (@module_id, @address), added with @name (display) and
 * @symbol (may be NULL) if it has no row yet. */
int store__function_row(struct store *st, int64_t module_id,
			uint64_t address, const char *name, const char *symbol,
			int64_t *id);
int store__unknown_frame(struct store *st, int64_t function_id,
			 int64_t height, int64_t *id);
int store__inferred_row(struct store *st, int64_t run_id, int64_t context_id,
			int64_t unknown_id, const char *how, int64_t exact,
			double samples);

/* One context a CID's samples go to, with its share of them: every
 * sample of the CID in the run, whatever its process. */
struct store_explained {
	int64_t program_id, function_id, height;
	int64_t context_id;		/* its leaf is the CID's function */
	int64_t unknown_id;		/* unknown_frames(id) above it; 0 */
	int64_t unknown_function, unknown_height;	/* read back */
	const char *how;		/* cct_how__name() */
	int64_t exact;
	double share;
	double own;			/* of @share, the samples unwound
					 * to this context: precise */
};
int store__explained_row(struct store *st, int64_t run_id,
			 const struct store_explained *e);
/* Context @context_id was called from @call_site (the heaviest). */
int store__explained_site(struct store *st, int64_t run_id,
			  int64_t context_id, int64_t call_site);
int store__inference_commit(struct store *st, int64_t run_id,
			    const struct inference_stamp *stamp);
void store__inference_rollback(struct store *st);

/* Run @run_id's stored explanations, by CID (@how valid in the call). */
int store__explained(struct store *st, int64_t run_id,
		     int (*fn)(void *arg, const struct store_explained *e),
		     void *arg);

/* A context, its parent (0: outermost), function and call site (0:
 * none stored). */
struct store_context {
	int64_t id, parent_id, function_id, call_site;
};
/* Many reads as one: one read transaction (BEGIN DEFERRED) from the
 * first read until store__reads_end(), in place of one lock of the
 * database per statement (a report's inlined frames ask for each
 * address of its profile).  Writes wait for store__reads_end().
 * 0, or -1 (none begun: inside another transaction). */
int store__reads_begin(struct store *st);
void store__reads_end(struct store *st);

/* The contexts run @run_id's explanations end in, and their ancestors,
 * in no particular order. */
int store__explained_contexts(struct store *st, int64_t run_id,
			      int (*fn)(void *arg,
					const struct store_context *c),
			      void *arg);
/* The same from explained_sites alone, which lists every one of them
 * where this build stored the inference: STORE_NONE (nothing read)
 * where an explanation's context is not listed (an older build's rows).
 * The ancestors are the caller's to check. */
int store__sited_contexts(struct store *st, int64_t run_id,
			  int (*fn)(void *arg, const struct store_context *c),
			  void *arg);

#endif
