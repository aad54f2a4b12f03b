/*
 * session.h - the perf_event side of a recording: one event per (CPU,
 * task), one ring buffer per CPU (every task's event on that CPU writes
 * to it through PERF_EVENT_IOC_SET_OUTPUT; the kernel refuses to mmap
 * inherited per-task events, and refuses cross-CPU output), polling, and
 * delivery of records in time order across the rings.
 *
 * Ordering follows perf's "finished round" rule: records read in one
 * round are held until the next round has been read, then everything
 * not newer than the previous round's newest record is delivered.
 * Memory held is therefore about two rounds of records.
 */
#ifndef ICPPD_COLLECTOR_SESSION_H
#define ICPPD_COLLECTOR_SESSION_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct session;


/*
 * Opens @attr on each online CPU for each of @tasks (tasks that vanish
 * meanwhile are skipped) and maps the rings (@ring_pages data pages per
 * CPU, a power of two).  The side records @attr asks for (mappings,
 * names, tasks) come from a dummy event of their own into the same
 * rings, so that the samples can stop with nothing else lost.
 * @flags: SESSION_TAKE_TURNS, the main event samples only while the
 * learning event (session__add_learner) does not: it starts off, and
 * session__learn() switches between the two.  NULL on failure, with a
 * one-line reason in @err and *@errnum set to the errno.
 */
#define SESSION_TAKE_TURNS 1u
struct session *session__open(const struct perf_event_attr *attr,
			      const pid_t *tasks, size_t ntasks,
			      size_t ring_pages, unsigned flags, char *err,
			      size_t errlen, int *errnum);
void session__close(struct session *s);

/*
 * Learning during measurement: a second, sparse event with a stack copy
 * (@attr: its sample format is the main event's plus
 * PERF_SAMPLE_STACK_USER, which is how its records are told apart), on
 * the same tasks and CPUs, writing into the same rings.  With @deep,
 * after the learner: the same with a larger copy, off until
 * session__deepen() puts it in the learner's place (an event's copy
 * size is fixed once opened, and only events open from the start are
 * inherited by every child).  With @deep and @ring_pages, the deep
 * learner writes into rings of its own, @ring_pages data pages per CPU
 * (a power of two), mapped by session__deepen(): a copy four times the
 * size needs four times the room, and only a program whose stacks
 * need the copy pays for it; where they cannot be mapped, into the
 * CPUs' rings.  0, or -errno with a one-line reason in @err (the
 * session is unchanged but for what it had opened, which it closes
 * with the rest).
 */
int session__add_learner(struct session *s, const struct perf_event_attr *attr,
			 const pid_t *tasks, size_t ntasks, bool deep,
			 size_t ring_pages, char *err, size_t errlen);
/*
 * Off-CPU time: a context-switch event (@attr: event__switches()) on the
 * same tasks and CPUs, into the same rings, on as the main event is but
 * never taking turns with the learner; before session__add_learner().
 * Its samples are told apart by their id (an inherited event's samples
 * carry the id of the event opened here): session__switch_ids().  0, or
 * -errno with a one-line reason in @err.
 */
int session__add_switches(struct session *s, const struct perf_event_attr *attr,
			  const pid_t *tasks, size_t ntasks, char *err,
			  size_t errlen);
/* The switch-outs the learner copies the stacks of (@attr: the
 * switches' with PERF_SAMPLE_STACK_USER): on from the start, then as
 * session__learn_switches() says, the plain switch event off while it
 * is on (the kernel shares one switch's sample
 * data between two software events, and the second lost its copy), so
 * the plain one must start off (disabled, not enable_on_exec) when
 * this one is added; after session__add_switches() and
 * session__add_learner(); their ids join the switch ids.  0, or -errno
 * with a one-line reason in @err. */
int session__add_switch_learner(struct session *s,
				const struct perf_event_attr *attr,
				const pid_t *tasks, size_t ntasks, char *err,
				size_t errlen);
/* The plain switch event on, for good (its learner could not start). */
int session__switches_on(struct session *s);
const uint64_t *session__switch_ids(const struct session *s, size_t *n);
/* Turns the learning event on or off, for inherited (child) events too:
 * how the recorder makes bursts; taking turns, the main event the other
 * way.  0 or -errno. */
int session__learn(struct session *s, bool on);
/* Turns the switches' learner (session__add_switch_learner) on and the
 * plain switch event off, or the other way: a switch-out whose CID the
 * map explains needs no stack copy, so the recorder keeps the copies on
 * apart from the learning event, while the switches' CIDs are
 * unexplained.  0 or -errno. */
int session__learn_switches(struct session *s, bool on);
/* The deep learner takes the learner's place for the rest of the
 * session, on at once when @on (the learner is on), its rings mapped
 * first.  0, -ENOENT when there is none or it already did, or -errno
 * (the learner stays). */
int session__deepen(struct session *s, bool on);

/* Enables every event (attach mode; launch mode uses enable_on_exec),
 * but a main event waiting for the learner's turn to end. */
int session__enable(struct session *s);
int session__disable(struct session *s);

enum {
	SESSION_DATA = 1,	/* a ring passed its watermark */
	SESSION_EXTRA = 2,	/* one of @extra is readable */
	SESSION_HUP = 4,	/* every traced task has exited */
	SESSION_EXEC = 8,	/* the exec notifier has records */
};

/* Waits up to @timeout_ms for data or one of the @nextra file
 * descriptors @extra.  Returns a mask of SESSION_*, 0 on timeout, or
 * -errno. */
int session__wait(struct session *s, const int *extra, size_t nextra,
		  int timeout_ms);

/*
 * Execs as soon as the kernel reports them, for reading a new image's
 * stack base before a short-lived process is gone: a dummy event per
 * CPU writes COMM records to a small ring that wakes poll at each
 * (SESSION_EXEC), while the sampling rings wake only a quarter full.
 * The kernel gives that event every fork and exit too; where the exec
 * tracepoint can be opened (root), it wakes poll in their place, once
 * an exec, and the records only when they fill half the ring.
 * session__next_exec() gives the next exec since the last pass, or
 * false at the end of one.  These records are duplicates: the sampling
 * rings carry the same execs in order.  A session whose notifier could
 * not be opened has none.
 */
struct session_exec {
	uint32_t pid;
	uint64_t time;
	char comm[16];		/* the new image's command name */
};
bool session__next_exec(struct session *s, struct session_exec *e);
/* Whether the notifier covers every CPU (it wakes poll at each exec). */
bool session__notifies_execs(const struct session *s);
/* ... and wakes it at execs only, not at each fork and exit. */
bool session__notifies_execs_only(const struct session *s);
/*
 * With the exec tracepoint, only the execs that @filter passes (an
 * ftrace filter over sched_process_exec's fields: event__exec_filter())
 * wake poll; NULL: every exec again.  The others' records still come,
 * when they fill half the ring.  0; -EOPNOTSUPP without the
 * tracepoint; or -errno (the filter refused), the rings that were done
 * filtered and the rest as they were.
 */
int session__filter_execs(struct session *s, const char *filter);

/*
 * Reading the sampling rings, one round at a time, pulled by the caller
 * (the recorder), as perf reads its mmaps:
 *
 *   n = session__fill(s);        every ring into the ordering queue;
 *   session__fresh(s, 0..n-1)    the records just read, in ring order,
 *                                for a look before any is delivered;
 *   session__order(s, final);    what is safe to deliver (all when
 *                                @final: records of a later round may
 *                                still be older than this round's last);
 *   while ((h = session__next(s)))   ...those, in time order;
 *   session__keep_rest(s);       the rest waits for the next round.
 *
 * fill returns the count or -ENOMEM; keep_rest 0 or -ENOMEM.  A record
 * is valid until keep_rest.
 *
 * Records wait in their rings, which the kernel does not write over
 * until keep_rest gives them back, while a ring's held records span a
 * quarter of it at most; past that, and where a record wrapped the
 * ring's end, the queue copies them.
 */
int session__fill(struct session *s);
const struct perf_event_header *session__fresh(const struct session *s,
					       size_t i);
void session__order(struct session *s, bool final);
const struct perf_event_header *session__next(struct session *s);
int session__keep_rest(struct session *s);
/*
 * Between rounds, while the caller cannot deliver (a long flush): reads
 * every ring into the queue as fill does (session__fresh(s, 0..n-1)
 * are the records just read, for the same look), then copies every
 * record a ring still holds and gives the rings back all they were
 * read to, so that the kernel never waits on the caller.  The next
 * round delivers them.  The number of records read, or -errno.  A
 * session is one thread's at a time: the recorder hands it to a thread
 * of its own for a flush's length, and that thread spills.
 */
int session__spill(struct session *s);

/* Ring corruption events seen (records skipped). */
unsigned long session__corrupt(const struct session *s);
/* Records the queue copied out of the rings, of all it read. */
void session__copied(const struct session *s, uint64_t *copied,
		     uint64_t *read);

#endif
