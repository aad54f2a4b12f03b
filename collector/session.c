/*
 * session.c - perf_event file descriptors, rings and ordered delivery.
 */
#define _GNU_SOURCE
#include "collector/session.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/event.h"
#include "collector/procfs.h"
#include "collector/record.h"
#include "collector/ring.h"
#include "common/sys.h"
#include "common/grow.h"
#include "common/runsort.h"

/* The notifier's ring: a COMM record is 56 bytes, a FORK or EXIT 64
 * (the dummy event gets both with COMM: the kernel gives every
 * task's to an event that asks for names), so about 40 processes on
 * one CPU between two reads; more are lost to the eager read only.
 * Where the exec tracepoint wakes poll, the records wake it only once
 * they fill half the ring. */
#define NOTIFY_PAGES 2

struct pending {
	uint64_t time;
	uint64_t seq;		/* read order breaks ties */
	uint64_t off;		/* into arena[which], or ring position */
	unsigned which;		/* 0, 1: an arena; IN_RING + i: ring i */
};

/* A record left in ring i, at its position there, is IN_RING + i. */
#define IN_RING 2u

/* Where a round's records are copied. */
struct arena {
	uint8_t *buf;
	size_t len, cap;
};

struct session {
	int *fds;		/* the main event's first (nmain), then the
				 * side records', the learner's, the
				 * notifier's */
	size_t nfds, nmain;
	/* SESSION_TAKE_TURNS: the main event is off while the learner is
	 * on (@learning), and on otherwise. */
	bool turns, learning;
	struct ring *rings;	/* one per CPU, then the deep learner's */
	struct pollfd *pfds;
	int *ring_cpu;		/* the CPU of each ring */
	size_t nrings;
	size_t cpu_rings;	/* the first, one per CPU: every event's */
	/* The learning event's fds (session__add_learner), also in fds,
	 * from learners_at; and the deep learner's (session__add_learner
	 * with @deep), after them, until session__deepen() swaps the two. */
	int *lfds, *dfds;
	size_t nlfds, ndfds, learners_at;
	uint64_t *switch_ids;	/* session__add_switches()'s events */
	size_t nswitch_ids;
	int *sfds;		/* the switches' learner, and their plain */
	size_t nsfds;		/* event, one on at a time (session__ */
	int *wfds;		/* learn_switches()) when both are open */
	size_t nwfds;
	bool deep;
	/* With deep_pages, the deep learner writes into rings of its own
	 * of that many data pages, mapped when it is turned on: dring[i]
	 * is the CPU ring of dfds[i], whose rings it would share. */
	size_t deep_pages;
	size_t *dring;
	/* their stack copies' sizes, learner's and deep learner's: the
	 * queue keeps only the part of each copy the kernel filled */
	uint64_t stack_bytes[2];
	/* The exec notifier: a dummy event per CPU that writes COMM (and
	 * the tasks') records into a small ring of its own, waking poll at
	 * each, or with the exec tracepoint redirected into the ring, at
	 * each exec (xexec_only: on every CPU). */
	struct ring *xrings;
	struct pollfd *xpfds;
	size_t nxrings;
	bool xexec_only;
	/* The exec tracepoint of each notifier ring: its index in fds (-1:
	 * none), its CPU, and the task and attr it was opened with, so
	 * that session__filter_execs() can open it again with a filter;
	 * xfiltered: one is. */
	int *xtp, *xcpu;
	pid_t xtask;
	struct perf_event_attr xtp_attr;
	bool xfiltered;
	bool enabled;		/* session__enable()d, not disabled since */
	/* Ordering queue: the records not yet delivered.  They stay in
	 * their rings, which the kernel gives no new records until they
	 * are released (session__keep_rest), while the rings have room;
	 * the rest are copied, in two arenas that take turns (cur: the
	 * one this round fills).  The records a round holds over are
	 * this round's, delivered in the next, so the arena of the round
	 * before can be emptied and filled again: a held record is never
	 * copied twice.  Copying the stack samples out of the rings was
	 * a tenth of the recorder's CPU on a deep-stacked compiler. */
	uint64_t *release;	/* per ring, session__keep_rest's */
	struct arena arena[2];
	unsigned cur;
	struct pending *q, *qtmp;	/* qtmp: sort_queue()'s other half */
	size_t nq, qcap, qtmp_cap;
	uint64_t seq;		/* records read */
	uint64_t copied;	/* of them, copied to an arena */
	uint64_t prev_round_max, round_max;
	size_t fresh;		/* q index of the first record of this fill */
	size_t next;		/* q index of the next record to deliver */
	uint64_t limit;		/* deliver records up to this time */
	/* The exec notifier's pass: ring xi, read state xrd (xopen). */
	size_t xi;
	struct ring_read xrd;
	bool xopen;
};

static void describe_failure(char *err, size_t errlen, int e, pid_t pid,
			     int cpu)
{
	snprintf(err, errlen, "perf_event_open (pid %d, cpu %d): %s%s",
		 (int)pid, cpu, strerror(e), event__hint(e));
}

/*
 * The exec notifier (see session__execs): best effort, so a failure
 * leaves the session without one.  Its fds join s->fds, so enable,
 * disable and close cover them.  The COMM records' event also gets
 * every fork and exit (perf_event_task_match()), two thirds of its
 * records where processes exec (the daemon watching ten makes woke
 * 637 times for 221 execs): where the exec tracepoint opens (root),
 * it wakes poll, once an exec, into the same ring.  Only for a session
 * of one task (the daemon's, a launched command's): an attach to every
 * thread of a process keeps its file descriptors for the samples.
 */
static void open_notifier(struct session *s, const struct perf_event_attr *main,
			  const pid_t *tasks, size_t ntasks, const int *cpus,
			  size_t ncpus)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		/* the sample_id trailer the decoder reads, nothing more */
		.sample_type = main->sample_type & (PERF_SAMPLE_IDENTIFIER |
			PERF_SAMPLE_TID | PERF_SAMPLE_TIME),
		.sample_id_all = 1,
		.comm = 1, .comm_exec = 1, .inherit = main->inherit,
		.disabled = main->disabled,
		.enable_on_exec = main->enable_on_exec,
		.exclude_kernel = 1, .exclude_hv = 1,
		.watermark = 1 };
	struct perf_event_attr tp;
	uint64_t tp_id;
	bool has_tp = ntasks == 1 && !procfs__exec_tracepoint_id(&tp_id);
	/* with the tracepoint, the records wake poll at the ring's half */
	uint32_t half = (uint32_t)(NOTIFY_PAGES * sysconf(_SC_PAGESIZE) / 2);
	int *fds = realloc(s->fds, (s->nfds + ncpus * (ntasks + has_tp)) *
			   sizeof(*fds));

	if (!fds)
		return;
	s->fds = fds;
	s->xrings = calloc(ncpus, sizeof(*s->xrings));
	s->xpfds = calloc(ncpus, sizeof(*s->xpfds));
	s->xtp = calloc(ncpus, sizeof(*s->xtp));
	s->xcpu = calloc(ncpus, sizeof(*s->xcpu));
	if (!s->xrings || !s->xpfds || !s->xtp || !s->xcpu)
		return;
	if (has_tp) {
		event__exec_tracepoint(main, tp_id, &tp);
		s->xtp_attr = tp;
		s->xtask = tasks[0];
	}
	s->xexec_only = has_tp;
	for (size_t c = 0; c < ncpus; c++) {
		int tfd = has_tp ? icppd_sys.perf_event_open(&tp, tasks[0],
				cpus[c], -1, PERF_FLAG_FD_CLOEXEC) : -1;
		int leader = -1;

		a.wakeup_watermark = tfd >= 0 ? half : 1;
		for (size_t t = 0; t < ntasks; t++) {
			int fd = icppd_sys.perf_event_open(&a, tasks[t], cpus[c],
					-1, PERF_FLAG_FD_CLOEXEC);

			if (fd < 0)
				continue;
			s->fds[s->nfds++] = fd;
			if (leader < 0) {
				if (ring__map(&s->xrings[s->nxrings], fd,
					      NOTIFY_PAGES))
					continue;
				s->xpfds[s->nxrings].fd = fd;
				s->xpfds[s->nxrings].events = POLLIN;
				s->xtp[s->nxrings] = -1;
				s->xcpu[s->nxrings] = cpus[c];
				s->nxrings++;
				leader = fd;
			} else {
				icppd_sys.ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT,
						(unsigned long)leader);
			}
		}
		if (tfd >= 0 && leader >= 0 &&
		    !icppd_sys.ioctl(tfd, PERF_EVENT_IOC_SET_OUTPUT,
				     (unsigned long)leader)) {
			s->xtp[s->nxrings - 1] = (int)s->nfds;
			s->fds[s->nfds++] = tfd;
			continue;
		}
		if (tfd >= 0)
			close(tfd);
		s->xexec_only = false;
	}
}

/*
 * Opens @attr for each of @tasks on each CPU ring's CPU, writing into
 * that ring, or with @ring_of into none yet (ring_of[i]: the ring of
 * (*@list)[i]); the fds join s->fds and, with @list, *@list too (room
 * for s->cpu_rings * @ntasks made by the caller).  0, or -errno with a
 * reason in @err.
 */
static int open_into_rings(struct session *s, const struct perf_event_attr *attr,
			   const pid_t *tasks, size_t ntasks, int *list,
			   size_t *nlist, size_t *ring_of, char *err,
			   size_t errlen)
{
	int *fds = realloc(s->fds, (s->nfds + s->cpu_rings * ntasks) *
			   sizeof(*s->fds));

	if (!fds) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->fds = fds;
	for (size_t r = 0; r < s->cpu_rings; r++)
		for (size_t t = 0; t < ntasks; t++) {
			int fd = icppd_sys.perf_event_open(
				(struct perf_event_attr *)attr, tasks[t],
				s->ring_cpu[r], -1, PERF_FLAG_FD_CLOEXEC);

			if (fd < 0 && errno == ESRCH && ntasks > 1)
				continue;	/* thread gone */
			if (fd < 0 || (!ring_of && icppd_sys.ioctl(fd,
			    PERF_EVENT_IOC_SET_OUTPUT,
			    (unsigned long)s->pfds[r].fd))) {
				int e = errno;

				if (fd >= 0)
					close(fd);
				describe_failure(err, errlen, e, tasks[t],
						 s->ring_cpu[r]);
				return -e;
			}
			s->fds[s->nfds++] = fd;
			if (ring_of)
				ring_of[*nlist] = r;
			if (list)
				list[(*nlist)++] = fd;
		}
	return 0;
}

/*
 * The side records (mappings, names, tasks) apart from the samples: a
 * dummy event per (CPU, task) into the same rings, so that the main
 * event can be turned off (SESSION_TAKE_TURNS) with nothing lost, as
 * an event turned off reports no mappings.  It starts as @main does.
 */
static void side_records(const struct perf_event_attr *main,
			 struct perf_event_attr *out)
{
	*out = (struct perf_event_attr){
		.size = sizeof(*out), .type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		/* the sample_id trailer the decoder reads */
		.sample_type = main->sample_type & (PERF_SAMPLE_IDENTIFIER |
			PERF_SAMPLE_TID | PERF_SAMPLE_TIME),
		.sample_id_all = 1, .mmap2 = main->mmap2, .mmap_data = main->mmap_data,
		.comm = main->comm, .comm_exec = main->comm_exec,
		.task = main->task, .inherit = main->inherit,
		.disabled = main->disabled,
		.enable_on_exec = main->enable_on_exec,
		.exclude_kernel = 1, .exclude_hv = 1 };
}

struct session *session__open(const struct perf_event_attr *attr,
			      const pid_t *tasks, size_t ntasks,
			      size_t ring_pages, unsigned flags, char *err,
			      size_t errlen, int *errnum)
{
	struct session *s = calloc(1, sizeof(*s));
	struct perf_event_attr a = *attr, side;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int *cpus = NULL;
	size_t ncpus = 0;
	int ret;

	*errnum = ENOMEM;
	snprintf(err, errlen, "out of memory");
	if (!s)
		return NULL;
	ret = procfs__online_cpus(&cpus, &ncpus);
	if (ret) {
		*errnum = -ret;
		snprintf(err, errlen, "reading online CPUs: %s", strerror(-ret));
		goto out_free;
	}
	s->fds = calloc(ncpus * ntasks, sizeof(*s->fds));
	s->rings = calloc(ncpus, sizeof(*s->rings));
	s->pfds = calloc(ncpus, sizeof(*s->pfds));
	s->ring_cpu = calloc(ncpus, sizeof(*s->ring_cpu));
	s->release = calloc(ncpus, sizeof(*s->release));
	if (!s->fds || !s->rings || !s->pfds || !s->ring_cpu || !s->release)
		goto out_close;
	/* Wake a quarter full: what a round leaves fits (release_point) */
	a.wakeup_watermark = (uint32_t)(ring_pages * pg / 4);
	/* samples only: the side records come from their own event */
	a.mmap = a.mmap2 = a.mmap_data = 0;
	a.comm = a.comm_exec = a.task = 0;
	s->turns = flags & SESSION_TAKE_TURNS;
	s->learning = s->turns;
	if (s->turns)	/* it starts at the learner's first pause */
		a.enable_on_exec = 0;
	for (size_t c = 0; c < ncpus; c++) {
		int leader = -1;

		for (size_t t = 0; t < ntasks; t++) {
			int fd = icppd_sys.perf_event_open(&a, tasks[t], cpus[c],
					-1, PERF_FLAG_FD_CLOEXEC);

			if (fd < 0) {
				if (errno == ESRCH && ntasks > 1)
					continue;	/* thread gone */
				*errnum = errno;
				describe_failure(err, errlen, errno, tasks[t],
						 cpus[c]);
				goto out_close;
			}
			s->fds[s->nfds++] = fd;
			if (leader < 0) {
				ret = ring__map(&s->rings[s->nrings], fd,
						ring_pages);
				if (ret) {
					*errnum = -ret;
					snprintf(err, errlen, "mmap of the perf "
						 "ring buffer (%zu KiB): %s%s",
						 ring_pages * pg / 1024,
						 strerror(-ret), ret == -EPERM ?
						 " (raise kernel.perf_event_mlock_kb)" : "");
					goto out_close;
				}
				s->pfds[s->nrings].fd = fd;
				s->pfds[s->nrings].events = POLLIN;
				s->ring_cpu[s->nrings] = cpus[c];
				s->cpu_rings = ++s->nrings;
				leader = fd;
			} else if (icppd_sys.ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT,
						   (unsigned long)leader)) {
				*errnum = errno;
				snprintf(err, errlen, "PERF_EVENT_IOC_SET_OUTPUT: %s",
					 strerror(errno));
				goto out_close;
			}
		}
	}
	if (!s->nrings) {
		*errnum = ESRCH;
		snprintf(err, errlen, "no task left to trace");
		goto out_close;
	}
	s->nmain = s->nfds;
	side_records(attr, &side);
	ret = open_into_rings(s, &side, tasks, ntasks, NULL, NULL, NULL, err,
			      errlen);
	if (ret) {
		*errnum = -ret;
		goto out_close;
	}
	open_notifier(s, attr, tasks, ntasks, cpus, ncpus);
	free(cpus);
	return s;

out_close:
	session__close(s);
	s = NULL;
out_free:
	free(cpus);
	free(s);
	return NULL;
}

void session__close(struct session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nrings; i++)
		ring__unmap(&s->rings[i]);
	for (size_t i = 0; i < s->nxrings; i++)
		ring__unmap(&s->xrings[i]);
	for (size_t i = 0; i < s->nfds; i++)
		close(s->fds[i]);
	free(s->fds);
	free(s->rings);
	free(s->pfds);
	free(s->ring_cpu);
	free(s->release);
	free(s->dring);
	free(s->lfds);
	free(s->switch_ids);
	free(s->sfds);
	free(s->wfds);
	free(s->dfds);
	free(s->xrings);
	free(s->xpfds);
	free(s->xtp);
	free(s->xcpu);
	free(s->arena[0].buf);
	free(s->arena[1].buf);
	free(s->q);
	free(s->qtmp);
	free(s);
}

static int ioctl_range(const int *fds, size_t n, unsigned long req)
{
	for (size_t i = 0; i < n; i++)
		if (icppd_sys.ioctl(fds[i], req, 0))
			return -errno;
	return 0;
}

int session__add_learner(struct session *s, const struct perf_event_attr *attr,
			 const pid_t *tasks, size_t ntasks, bool deep,
			 size_t ring_pages, char *err, size_t errlen)
{
	size_t n = s->cpu_rings * ntasks;
	int **list = deep ? &s->dfds : &s->lfds;
	size_t *nlist = deep ? &s->ndfds : &s->nlfds;
	struct perf_event_attr a = *attr;
	int ret;

	if (deep ? !s->lfds || s->dfds != NULL : s->lfds != NULL)
		return -EINVAL;		/* one of each, the learner first */
	if (!(*list = calloc(n ? n : 1, sizeof(**list))) ||
	    (deep && ring_pages &&
	     !(s->dring = calloc(n ? n : 1, sizeof(*s->dring))))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->stack_bytes[deep] = a.sample_type & PERF_SAMPLE_STACK_USER ?
			       a.sample_stack_user : 0;
	if (!deep) {
		s->learners_at = s->nfds;
	} else {		/* off until session__deepen() */
		a.disabled = 1, a.enable_on_exec = 0;
		/* its own rings wake the reader a quarter full, as the
		 * CPUs' do (release_point()) */
		s->deep_pages = s->dring ? ring_pages : 0;
		a.watermark = s->deep_pages != 0;
		a.wakeup_watermark = (uint32_t)(s->deep_pages *
				     (size_t)sysconf(_SC_PAGESIZE) / 4);
	}
	ret = open_into_rings(s, &a, tasks, ntasks, *list, nlist,
			      deep ? s->dring : NULL, err, errlen);
	if (ret && deep)	/* what opened stays off, and is closed with
				 * the rest; there is nothing to deepen to */
		s->ndfds = 0;
	return ret;
}

/* The ids of the events the session opened from fd @from on, added to
 * its switch ids.  0 or -errno with why in @err. */
static int note_switch_ids(struct session *s, size_t from, char *err,
			   size_t errlen)
{
	uint64_t *ids = realloc(s->switch_ids, (s->nswitch_ids + s->nfds -
						from + 1) * sizeof(*ids));
	int ret;

	if (!ids) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->switch_ids = ids;
	for (size_t i = from; i < s->nfds; i++)
		if (icppd_sys.ioctl(s->fds[i], PERF_EVENT_IOC_ID,
				    (unsigned long)&s->switch_ids[
				    s->nswitch_ids++])) {
			ret = -errno;
			snprintf(err, errlen, "the context-switch event's id: "
				 "%s", strerror(errno));
			return ret;
		}
	return 0;
}

/* The switch event @attr on @tasks into a list of its own (*@list,
 * *@n), its ids added to the switch ids.  0 or -errno with why. */
static int open_switches(struct session *s, const struct perf_event_attr *attr,
			 const pid_t *tasks, size_t ntasks, int **list,
			 size_t *n, char *err, size_t errlen)
{
	size_t from = s->nfds;
	int ret;

	if (!(*list = calloc(s->cpu_rings * ntasks + 1, sizeof(**list)))) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = open_into_rings(s, attr, tasks, ntasks, *list, n, NULL, err,
			      errlen);
	return ret ? ret : note_switch_ids(s, from, err, errlen);
}

int session__add_switches(struct session *s, const struct perf_event_attr *attr,
			  const pid_t *tasks, size_t ntasks, char *err,
			  size_t errlen)
{
	if (s->lfds || s->switch_ids)
		return -EINVAL;		/* before the learner, once */
	return open_switches(s, attr, tasks, ntasks, &s->wfds, &s->nwfds, err,
			     errlen);
}

int session__add_switch_learner(struct session *s,
				const struct perf_event_attr *attr,
				const pid_t *tasks, size_t ntasks, char *err,
				size_t errlen)
{
	if (!s->lfds || !s->switch_ids || s->sfds)
		return -EINVAL;		/* after both, once */
	return open_switches(s, attr, tasks, ntasks, &s->sfds, &s->nsfds, err,
			     errlen);
}

int session__switches_on(struct session *s)
{
	return ioctl_range(s->wfds, s->nwfds, PERF_EVENT_IOC_ENABLE);
}

const uint64_t *session__switch_ids(const struct session *s, size_t *n)
{
	*n = s->nswitch_ids;
	return s->switch_ids;
}

/* Room for @n rings in each of the session's per-ring arrays. */
static int ring_room(struct session *s, size_t n)
{
	struct ring *rings = realloc(s->rings, n * sizeof(*rings));
	struct pollfd *pfds;
	int *cpu;
	uint64_t *release;

	if (rings)
		s->rings = rings;
	if (!rings || !(pfds = realloc(s->pfds, n * sizeof(*pfds))))
		return -ENOMEM;
	s->pfds = pfds;
	if (!(cpu = realloc(s->ring_cpu, n * sizeof(*cpu))))
		return -ENOMEM;
	s->ring_cpu = cpu;
	if (!(release = realloc(s->release, n * sizeof(*release))))
		return -ENOMEM;
	s->release = release;
	return 0;
}

/*
 * Gives the deep learner its rings: on each CPU, the first of its fds
 * maps one of s->deep_pages and the rest write into it.  Where that
 * cannot be mapped (the locked-memory limit), they write into the
 * CPU's ring, as without deep_pages.  0, or -errno where an fd could be
 * given no ring at all.
 */
static int map_deep_rings(struct session *s)
{
	size_t cpus = s->cpu_rings;

	if (ring_room(s, 2 * cpus))
		return -ENOMEM;
	for (size_t r = 0; r < cpus; r++) {
		int into = -1;

		for (size_t i = 0; i < s->ndfds; i++) {
			int fd = s->dfds[i];

			if (s->dring[i] != r)
				continue;
			if (into < 0 && !ring__map(&s->rings[s->nrings], fd,
						   s->deep_pages)) {
				s->pfds[s->nrings] = (struct pollfd){ fd,
								POLLIN, 0 };
				s->ring_cpu[s->nrings++] = s->ring_cpu[r];
				into = fd;
				continue;
			}
			if (into < 0)
				into = s->pfds[r].fd;
			if (icppd_sys.ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT,
					    (unsigned long)into))
				return -errno;
		}
	}
	return 0;
}

int session__deepen(struct session *s, bool on)
{
	int *t = s->lfds;
	size_t nt = s->nlfds;
	int ret = 0;

	if (s->deep || !s->ndfds)
		return -ENOENT;
	if (s->deep_pages) {
		ret = map_deep_rings(s);
		/* once, failed or not: the rings it mapped stay, and the
		 * arrays have room for one set */
		s->deep_pages = 0;
		if (ret)
			return ret;
	}
	/* the deep one starts before the other stops: a sample counted
	 * twice at worst, none missed */
	if (on && (ret = ioctl_range(s->dfds, s->ndfds, PERF_EVENT_IOC_ENABLE)))
		return ret;
	if (on)
		ioctl_range(s->lfds, s->nlfds, PERF_EVENT_IOC_DISABLE);
	s->lfds = s->dfds, s->nlfds = s->ndfds;
	s->dfds = t, s->ndfds = nt;
	s->deep = true;
	return 0;
}

int session__learn(struct session *s, bool on)
{
	unsigned long req = on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE;
	int ret;

	/* taking turns, the main event stops first and starts last: no
	 * moment has both (a sample counted twice) */
	if (s->turns && on && (ret = ioctl_range(s->fds, s->nmain,
					  PERF_EVENT_IOC_DISABLE)))
		return ret;
	ret = ioctl_range(s->lfds, s->nlfds, req);
	/* the main event samples again if the learner could not start */
	if (s->turns && (on ? ret != 0 : !ret)) {
		int r = ioctl_range(s->fds, s->nmain, PERF_EVENT_IOC_ENABLE);

		ret = ret ? ret : r;
	}
	if (!ret)
		s->learning = on;
	return ret;
}

int session__learn_switches(struct session *s, bool on)
{
	/* the copies on, the plain switches off, or the other way: two
	 * software events of one switch share the kernel's sample data,
	 * and the second lost its stack copy (its size 0, the record as
	 * long as a copy: on 6.x kernels).  The one turned on first: no
	 * switch between them goes uncounted (one counted twice is a
	 * second switch-out, closed as unmatched). */
	int ret;

	if (!s->nsfds)
		return 0;
	ret = ioctl_range(on ? s->sfds : s->wfds, on ? s->nsfds : s->nwfds,
			  PERF_EVENT_IOC_ENABLE);
	if (!ret)
		ret = ioctl_range(on ? s->wfds : s->sfds,
				  on ? s->nwfds : s->nsfds,
				  PERF_EVENT_IOC_DISABLE);
	return ret;
}

int session__enable(struct session *s)
{
	/* the main event waits while the learner has its turn; of the
	 * learners, only the one in use */
	size_t from = s->turns && s->learning ? s->nmain : 0;
	size_t to = s->lfds ? s->learners_at : s->nfds;
	int ret = ioctl_range(s->fds + from, to - from, PERF_EVENT_IOC_ENABLE);

	if (!ret)
		ret = ioctl_range(s->lfds, s->nlfds, PERF_EVENT_IOC_ENABLE);
	/* the learner starts on: the switches' copies, not the plain
	 * ones (session__learn_switches()) */
	if (!ret && s->nsfds && !(ret = ioctl_range(s->sfds, s->nsfds,
						    PERF_EVENT_IOC_ENABLE)))
		ret = ioctl_range(s->wfds, s->nwfds, PERF_EVENT_IOC_DISABLE);
	s->enabled = !ret;
	return ret;
}

int session__disable(struct session *s)
{
	s->enabled = false;
	return ioctl_range(s->fds, s->nfds, PERF_EVENT_IOC_DISABLE);
}

int session__wait(struct session *s, const int *extra, size_t nextra,
		  int timeout_ms)
{
	struct pollfd pfds[s->nrings + s->nxrings + nextra + 1];
	size_t n = s->nrings, hup = 0, x = s->nrings + s->nxrings;
	int ret, mask = 0;

	memcpy(pfds, s->pfds, n * sizeof(*pfds));
	memcpy(pfds + n, s->xpfds, s->nxrings * sizeof(*pfds));
	n = x;
	for (size_t i = 0; i < nextra; i++)
		pfds[n++] = (struct pollfd){ .fd = extra[i], .events = POLLIN };
	ret = poll(pfds, n, timeout_ms);
	if (ret < 0)
		return errno == EINTR ? 0 : -errno;
	for (size_t i = 0; i < s->nrings; i++) {
		if (pfds[i].revents & POLLIN)
			mask |= SESSION_DATA;
		if (pfds[i].revents & POLLHUP)
			hup++;
	}
	for (size_t i = s->nrings; i < x; i++)
		if (pfds[i].revents & POLLIN)
			mask |= SESSION_EXEC;
	if (hup == s->nrings)
		mask |= SESSION_HUP;
	for (size_t i = x; i < n; i++)
		if (pfds[i].revents & (POLLIN | POLLHUP))
			mask |= SESSION_EXTRA;
	return mask;
}

bool session__notifies_execs(const struct session *s)
{
	return s->cpu_rings && s->nxrings == s->cpu_rings;
}

bool session__notifies_execs_only(const struct session *s)
{
	return session__notifies_execs(s) && s->xexec_only;
}

/*
 * A tracepoint's filter is set once (ftrace_profile_set_filter()
 * refuses a second: EEXIST), so each ring's exec tracepoint is opened
 * again, filtered, and takes the old one's place: opened before the
 * old is closed, an exec between them wakes poll twice, never none.
 */
int session__filter_execs(struct session *s, const char *filter)
{
	bool any = false;

	for (size_t i = 0; s->xtp && i < s->nxrings; i++)
		any |= s->xtp[i] >= 0;
	if (!any)
		return -EOPNOTSUPP;
	if (!filter && !s->xfiltered)
		return 0;
	for (size_t i = 0; i < s->nxrings; i++) {
		struct perf_event_attr a = s->xtp_attr;
		int fd;

		if (s->xtp[i] < 0)
			continue;
		if (s->enabled)
			a.disabled = a.enable_on_exec = 0;
		fd = icppd_sys.perf_event_open(&a, s->xtask, s->xcpu[i], -1,
					       PERF_FLAG_FD_CLOEXEC);
		if (fd < 0)
			return -errno;
		if ((filter && icppd_sys.ioctl(fd, PERF_EVENT_IOC_SET_FILTER,
					       (unsigned long)filter)) ||
		    icppd_sys.ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT,
				    (unsigned long)s->xpfds[i].fd)) {
			int e = errno;

			close(fd);
			return -e;
		}
		close(s->fds[s->xtp[i]]);
		s->fds[s->xtp[i]] = fd;
		s->xfiltered = filter != NULL;
	}
	return 0;
}

bool session__next_exec(struct session *s, struct session_exec *e)
{
	while (s->xi < s->nxrings) {
		struct ring *r = &s->xrings[s->xi];
		const struct perf_event_header *h;
		struct rec_comm c;

		if (!s->xopen) {
			ring__read_begin(r, &s->xrd);
			s->xopen = true;
		}
		while ((h = ring__read_next(r, &s->xrd)))
			if (h->type == PERF_RECORD_COMM &&
			    !record__parse_comm(h, &c) && c.exec) {
				*e = (struct session_exec){ c.pid, c.sid.time };
				snprintf(e->comm, sizeof(e->comm), "%s", c.comm);
				return true;
			}
		ring__read_end(r, &s->xrd);
		s->xopen = false;
		s->xi++;
	}
	s->xi = 0;		/* the next call starts a new pass */
	return false;
}

static const struct perf_event_header *record_at(const struct session *s,
						const struct pending *p)
{
	if (p->which >= IN_RING)
		return ring__at(&s->rings[p->which - IN_RING], p->off);
	return (const void *)(s->arena[p->which].buf + p->off);
}

/* Copies @h to the arena @a; its offset there in *@off. */
static int copy_out(struct session *s, struct arena *a,
		    const struct perf_event_header *h, uint64_t *off)
{
	/* the deep learner's records are the ones longer than its copy */
	uint64_t copy = s->stack_bytes[1] && h->size > s->stack_bytes[1] ?
			s->stack_bytes[1] : s->stack_bytes[0];

	if (grow(&a->buf, &a->cap, a->len + h->size, 1, 1 << 16))
		return -ENOMEM;
	s->copied++;
	*off = a->len;
	/* A deep copy of a shallow stack is mostly padding: copied whole,
	 * it was most of what the recorder copied and of the arena's
	 * size. */
	a->len += record__copy_trimmed(h, copy, a->buf + a->len);
	return 0;
}

/* Queues @h, read from ring @i at position @pos: left there when it is
 * whole there, else copied. */
static int enqueue(struct session *s, const struct perf_event_header *h,
		   size_t i, uint64_t pos)
{
	struct pending p = { 0, s->seq, pos, IN_RING + (unsigned)i };

	/* A record without a time stamp cannot be ordered: deliver it at
	 * the front (the collector counts it as malformed). */
	if (record__time(h, &p.time))
		p.time = 0;
	if (grow(&s->q, &s->qcap, s->nq + 1, sizeof(*s->q), 1024))
		return -ENOMEM;
	if (!ring__in_place(&s->rings[i], h)) {
		p.which = s->cur;
		if (copy_out(s, &s->arena[s->cur], h, &p.off))
			return -ENOMEM;
	}
	s->q[s->nq++] = p;
	s->seq++;
	if (p.time > s->round_max)
		s->round_max = p.time;
	return 0;
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Sorts the queue by (time, seq).  It is a few runs in order already:
 * what the last round kept, then each ring's records, which its CPU
 * wrote in time order.  Merging those runs (common/runsort.h) halved
 * the daemon's CPU while a user churned mappings, where qsort sorted
 * from scratch.  qsort without the memory to merge.
 */
static void sort_queue(struct session *s)
{
	struct pending *sorted;
	size_t cap;

	if (grow(&s->qtmp, &s->qtmp_cap, s->nq, sizeof(*s->q), 1024)) {
		qsort(s->q, s->nq, sizeof(*s->q), cmp_pending);
		return;
	}
	sorted = runsort(s->q, s->qtmp, s->nq, sizeof(*s->q), cmp_pending);
	if (sorted != s->q) {	/* the other half becomes the queue */
		s->qtmp = s->q;
		s->q = sorted;
		cap = s->qcap;
		s->qcap = s->qtmp_cap;
		s->qtmp_cap = cap;
	}
}

int session__fill(struct session *s)
{
	int ret = 0;

	s->fresh = s->nq;
	for (size_t i = 0; i < s->nrings && !ret; i++) {
		struct ring_read rd;
		const struct perf_event_header *h;

		ring__read_begin(&s->rings[i], &rd);
		for (uint64_t pos = rd.tail; !ret &&
		     (h = ring__read_next(&s->rings[i], &rd)); pos = rd.tail)
			ret = enqueue(s, h, i, pos);
		ring__read_hold(&s->rings[i], &rd);
	}
	return ret ? ret : (int)(s->nq - s->fresh);
}

const struct perf_event_header *session__fresh(const struct session *s,
					       size_t i)
{
	return record_at(s, &s->q[s->fresh + i]);
}

void session__order(struct session *s, bool final)
{
	s->limit = final ? UINT64_MAX : s->prev_round_max;
	s->prev_round_max = s->round_max;
	if (s->nq)	/* an idle round has no queue yet */
		sort_queue(s);
	s->next = 0;
}

const struct perf_event_header *session__next(struct session *s)
{
	if (s->next >= s->nq || s->q[s->next].time > s->limit)
		return NULL;
	return record_at(s, &s->q[s->next++]);
}

/* Where @r is given back to after a round that keeps its records from
 * @from on (UINT64_MAX: none of them): there while they span a quarter
 * of it at most (the kernel wakes the reader when a quarter of it is
 * written, which leaves half to spare), else all it read. */
static uint64_t release_point(const struct ring *r, uint64_t from)
{
	return from != UINT64_MAX && r->read - from <= r->size / 4 ? from
								    : r->read;
}

/*
 * Moves what is left to the front of the queue.  Its records stay where
 * they are, but for those of a ring given back past them and one of an
 * older round still held (a round's every record is older than the
 * limit of the next, so only a caller that stopped early leaves one):
 * they join this round's arena before the other arena is emptied and
 * the rings are given back what they no longer hold.
 */
int session__keep_rest(struct session *s)
{
	size_t done = s->next;
	unsigned old = !s->cur;
	struct arena *a = &s->arena[s->cur];

	for (size_t r = 0; r < s->nrings; r++)
		s->release[r] = UINT64_MAX;
	for (size_t i = done; i < s->nq; i++) {
		const struct pending *p = &s->q[i];

		if (p->which >= IN_RING &&
		    p->off < s->release[p->which - IN_RING])
			s->release[p->which - IN_RING] = p->off;
	}
	for (size_t r = 0; r < s->nrings; r++)
		s->release[r] = release_point(&s->rings[r], s->release[r]);
	for (size_t i = done; i < s->nq; i++) {
		struct pending *p = &s->q[i];
		const struct perf_event_header *h = record_at(s, p);
		uint64_t off = a->len;

		if (p->which == old) {	/* copied (and trimmed) already */
			if (grow(&a->buf, &a->cap, a->len + h->size, 1,
				 1 << 16))
				return -ENOMEM;
			memcpy(a->buf + a->len, h, h->size);
			a->len += h->size;
		} else if (p->which < IN_RING ||
			   p->off >= s->release[p->which - IN_RING]) {
			continue;	/* where it is, and stays */
		} else if (copy_out(s, a, h, &off)) {
			return -ENOMEM;
		}
		p->off = off;
		p->which = s->cur;
	}
	for (size_t i = done; i < s->nq; i++)
		s->q[i - done] = s->q[i];
	for (size_t r = 0; r < s->nrings; r++)
		ring__release(&s->rings[r], s->release[r]);
	s->arena[old].len = 0;
	s->cur = old;
	s->nq -= done;
	s->next = 0;
	return 0;
}

int session__spill(struct session *s)
{
	int n = session__fill(s);

	if (n < 0)
		return n;
	for (size_t i = 0; i < s->nq; i++) {
		struct pending *p = &s->q[i];
		uint64_t off;

		if (p->which < IN_RING)
			continue;	/* copied already */
		if (copy_out(s, &s->arena[s->cur], record_at(s, p), &off))
			return -ENOMEM;
		p->off = off;
		p->which = s->cur;
	}
	for (size_t r = 0; r < s->nrings; r++)
		ring__release(&s->rings[r], s->rings[r].read);
	return n;
}

void session__copied(const struct session *s, uint64_t *copied,
		     uint64_t *read)
{
	*copied = s->copied;
	*read = s->seq;
}

unsigned long session__corrupt(const struct session *s)
{
	unsigned long n = 0;

	for (size_t i = 0; i < s->nrings; i++)
		n += s->rings[i].corrupt;
	return n;
}
