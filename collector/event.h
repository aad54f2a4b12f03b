/*
 * event.h - choosing and encoding the sampling event with libpfm4.
 *
 * With no event named, icppd prefers a precise (PEBS) event: the sample
 * registers are then those of the instruction that overflowed the
 * counter, not of wherever the interrupt landed.  Only perf_event_open
 * tells whether one works (libpfm4 encodes PEBS events on machines
 * without a PMU), so each candidate is test-opened on icppd itself, and
 * the first that opens wins; cpu-clock is the fallback.
 */
#ifndef ICPPD_COLLECTOR_EVENT_H
#define ICPPD_COLLECTOR_EVENT_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_choice {
	struct perf_event_attr attr;	/* ready for perf_event_open */
	char name[128];			/* as the user or icppd named it */
	char canonical[256];		/* libpfm4's fully qualified form */
	bool precise;			/* precise_ip > 0 */
	bool freq;			/* attr holds a frequency */
	uint64_t rate;			/* Hz when freq, else period */
	char note[256];			/* why the default fell back, or "" */
};

/* Default rates: a software clock at 1000 Hz; a precise event every
 * 1000003 events (a prime, so it does not alias with loop periods).  */
#define ICPPD_DEFAULT_FREQ 1000
#define ICPPD_DEFAULT_PERIOD 1000003ULL

/*
 * Fills @ev for @name (NULL: the default) sampled at @freq Hz or every
 * @period events (at most one non-zero; both zero: the default rate).
 * Sets the sample format icppd needs (see record.h): user space only,
 * no call chain, SP/BP/IP, eligible for free-running PEBS when a period
 * is used.  0, or -errno with a one-line reason in @err.
 */
int event__choose(const char *name, uint64_t freq, uint64_t period,
		  struct event_choice *ev, char *err, size_t errlen);

/* Training and validation runs: each sample also carries a copy of
 * @bytes (a multiple of 8, at most 65528) of the user stack from SP up. */
void event__add_stack(struct event_choice *ev, uint32_t bytes);

/*
 * The learning event of a measurement run whose main event is @main
 * (its tasks, inheritance and enable_on_exec): cpu-clock at @hz, or
 * with @hz 0 the main event itself at its own rate (to take turns with
 * it: session.h); the same sample format plus a copy of @bytes of the
 * user stack (which is how its samples are told apart in the shared
 * rings), and no side records.
 */
void event__learner(const struct perf_event_attr *main, uint32_t bytes,
		    uint64_t hz, struct perf_event_attr *out);

/* Samples @factor times as often (a frequency times @factor, a period
 * divided by it): training's denser default. */
void event__scale_rate(struct event_choice *ev, unsigned factor);

/*
 * The events of every PMU libpfm4 finds on this machine (the OS's
 * generic ones, perf::, and the CPU's), each encoded and test-opened on
 * icppd itself as a sampling event: @fn gets the PMU's name and
 * description, the event's name and description, and 0 when
 * perf_event_open took it, else -errno (-EINVAL also when libpfm4
 * cannot encode it alone: it needs a unit mask).  Names that encode to
 * the same event are one entry, the others in @aliases.  0, or -ENODEV
 * (libpfm4 does not start) or -ENOMEM with a reason in @err.
 */
struct event_entry {
	const char *pmu, *pmu_desc, *name, *desc;
	int open_err;
	bool precise;		/* libpfm4 says it can sample precisely */
	const char *aliases;	/* "CPU-CLOCK, ..." or NULL */
};
int event__list(void (*fn)(void *arg, const struct event_entry *e),
		void *arg, char *err, size_t errlen);

/* The context-switch event of record --off-cpu, from the main event
 * @main: every switch-out a sample in @main's format (the user
 * registers the thread entered the kernel with), with PERF_RECORD_SWITCH
 * records for the switches back in.  Not excluding the kernel, where
 * switches happen: it needs what --kernel needs (root, CAP_PERFMON or
 * kernel.perf_event_paranoid <= 1). */
void event__switches(const struct perf_event_attr *main,
		     struct perf_event_attr *out);
/* @a with a user stack copy of @bytes: the learner's at switches (on
 * while the plain switch event is off, so it reports the switches back
 * in too). */
void event__learner_copy(struct perf_event_attr *a, uint32_t bytes);

/*
 * The exec tracepoint (sched:sched_process_exec, tracefs id @id) as an
 * event of the tasks and inheritance of @main that samples each exec,
 * header only, and wakes poll at each (the exec notifier's: session.c).
 * It does not exclude the kernel, where the tracepoint fires, so
 * opening it needs what --kernel needs.
 */
void event__exec_tracepoint(const struct perf_event_attr *main, uint64_t id,
			    struct perf_event_attr *out);

/*
 * The exec tracepoint's filter (session__filter_execs()) that passes
 * the execs of a file named one of @files (the exec's path is the name
 * or ends in "/" and it), of a command named one of @comms (a command
 * name is the file's, cut to 15 bytes: a longer one passes every file
 * whose name starts with its first 15), and of the processes @pids,
 * into @buf.  0; -1 where a name is empty, holds a byte a filter's
 * string cannot (a quote, a backslash, a glob's *?[], one not
 * printable), or is longer than a filter's string may be, or where
 * the filter is longer than @len or than a filter may be (4095 bytes):
 * then no filter can pass them all.
 */
int event__exec_filter(const char *const *files, size_t nfiles,
		       const char *const *comms, size_t ncomms,
		       const uint32_t *pids, size_t npids, char *buf,
		       size_t len);

/* A one-line hint for a perf_event_open errno, or "". */
const char *event__hint(int err);

#endif
