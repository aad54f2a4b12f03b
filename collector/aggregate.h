/*
 * aggregate.h - sample counts per context identifier, held in memory
 * between two flushes to the database.
 *
 * A CID is (module, function start, height) per (pid, tid, program);
 * beside them, each function's sampled instructions per process.  Samples
 * whose CID could not be formed are counted per (pid, tid, reason,
 * module) instead: never dropped silently.  Memory is bounded by the
 * number of distinct keys between flushes; aggregate__full() tells the
 * caller when to flush early.  Module pointers are borrowed from the
 * module cache, which outlives the aggregate.
 */
#ifndef ICPPD_COLLECTOR_AGGREGATE_H
#define ICPPD_COLLECTOR_AGGREGATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct module;

/* Why a sample has no CID.  Names are stored in the database. */
enum cid_failure {
	CID_NO_USER_REGS,	/* no user registers (kernel thread) */
	CID_NO_MAPPING,		/* pc in no known mapping */
	CID_ANON_CODE,		/* pc in anonymous (JIT) code */
	CID_MODULE_UNREADABLE,	/* module file unreadable or not ELF */
	CID_NO_CFI,		/* no CFI covers the pc */
	CID_CFA_UNSUPPORTED,	/* CFA rule needs memory / unknown op */
	CID_NO_STACK_BASE,	/* stack base unknown: process gone early */
	CID_SP_OUTSIDE_STACK,	/* sp outside every known stack */
	CID_MODULE_CHANGED,	/* the file is not the one mapped */
	CID_NR_FAILURES
};

/* "no_cfi", ... */
const char *cid_failure__name(enum cid_failure f);

struct cid_key {
	const struct module *mod;
	uint64_t func;		/* link-time start address */
	int64_t height;		/* stack base - CFA, bytes */
	uint32_t pid, tid;
	/* The executable the process ran (NULL: unknown): it selects the
	 * path map that explains the CID. */
	const struct module *prog;
};

struct cid_count {
	struct cid_key key;
	const char *func_name;	/* symbol or NULL; owned by the module */
	uint64_t samples;
	uint64_t kernel;	/* of them, taken in the kernel */
};

/* Off-CPU time of a CID (record --off-cpu): the switches out of it,
 * and the time until its thread ran again, apart as blocked (waiting)
 * and runnable (preempted), in ns. */
struct offcpu_count {
	struct cid_key key;
	const char *func_name;
	uint64_t switches, blocked_ns, runnable_ns;
};

/* Samples at one instruction of a function, per process: where in the
 * function the time goes (pprof's leaf addresses and lines).  Not per
 * thread or height: one row per sampled instruction and process. */
struct pc_count {
	const struct module *mod;
	uint64_t func;		/* link-time start address */
	uint32_t offset;	/* of the pc from @func */
	uint32_t pid;
	const char *func_name;	/* symbol or NULL; owned by the module */
	uint64_t samples;
};

/* Samples of CID @key taken in the kernel along one kernel call chain
 * (record --kernel, kallsyms readable): its functions' names, outermost
 * first, ';' between. */
struct kchain_count {
	struct cid_key key;
	const char *func_name;	/* the CID's; owned by the module */
	char *chain;		/* owned by the aggregate */
	uint64_t samples;
};

struct unresolved_count {
	const struct module *mod;	/* NULL when the pc has no module */
	uint32_t pid, tid;
	enum cid_failure reason;
	uint64_t samples;
};

struct thread_name {
	uint32_t pid, tid;
	char comm[16];
};

struct aggregate;

/* @max_keys: distinct keys after which aggregate__full() is true. */
struct aggregate *aggregate__new(size_t max_keys);
void aggregate__delete(struct aggregate *a);

int aggregate__add_cid(struct aggregate *a, const struct cid_key *k,
		       const char *func_name, bool kernel);
/* A switch out of CID @k whose thread ran again @ns later, @preempted
 * (runnable all along) or blocked. */
int aggregate__add_offcpu(struct aggregate *a, const struct cid_key *k,
			  const char *func_name, uint64_t ns, bool preempted);
/* A sample of CID @k at link-time address @pc (ignored when it is not
 * within 4 GiB after the function's start). */
int aggregate__add_pc(struct aggregate *a, const struct cid_key *k,
		      const char *func_name, uint64_t pc);
/* A kernel sample of CID @k along @chain (copied). */
int aggregate__add_kchain(struct aggregate *a, const struct cid_key *k,
			  const char *func_name, const char *chain);
int aggregate__add_unresolved(struct aggregate *a, const struct module *mod,
			      uint32_t pid, uint32_t tid, enum cid_failure why);
/* Remembers a thread's command name (last one wins). */
int aggregate__add_thread(struct aggregate *a, uint32_t pid, uint32_t tid,
			  const char *comm);

bool aggregate__full(const struct aggregate *a);
bool aggregate__empty(const struct aggregate *a);
void aggregate__clear(struct aggregate *a);

/* Iteration for the store; the arrays are valid until the next add or
 * clear. */
const struct cid_count *aggregate__cids(const struct aggregate *a, size_t *n);
const struct pc_count *aggregate__pcs(const struct aggregate *a, size_t *n);
const struct offcpu_count *aggregate__offcpu(const struct aggregate *a,
					     size_t *n);
const struct kchain_count *aggregate__kchains(const struct aggregate *a,
					     size_t *n);
const struct unresolved_count *aggregate__unresolved(const struct aggregate *a,
						     size_t *n);
const struct thread_name *aggregate__threads(const struct aggregate *a,
					     size_t *n);

#endif
