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

/* The notifier's ring: a COMM record is 56 bytes, so 73 execs on one
 * CPU between two reads; more are lost to the eager read only. */
#define NOTIFY_PAGES 1

struct pending {
	uint64_t time;
	uint64_t seq;		/* read order breaks ties */
	size_t off;		/* into the arena */
};

struct session {
	int *fds;
	size_t nfds;
	struct ring *rings;	/* one per CPU */
	struct pollfd *pfds;
	size_t nrings;
	/* The exec notifier: a dummy event per CPU that writes only COMM
	 * records into a small ring of its own, waking poll at each. */
	struct ring *xrings;
	struct pollfd *xpfds;
	size_t nxrings;
	/* Ordering queue: copies of records not yet delivered. */
	uint8_t *arena;
	size_t arena_len, arena_cap;
	struct pending *q;
	size_t nq, qcap;
	uint64_t seq;
	uint64_t prev_round_max, round_max;
	/* Scratch for read callbacks. */
	session_peek_fn peek;
	void *peek_arg;
	int oom;
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
 * disable and close cover them.
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
		.watermark = 1, .wakeup_watermark = 1 };
	int *fds = realloc(s->fds, (s->nfds + ncpus * ntasks) * sizeof(*fds));

	if (!fds)
		return;
	s->fds = fds;
	s->xrings = calloc(ncpus, sizeof(*s->xrings));
	s->xpfds = calloc(ncpus, sizeof(*s->xpfds));
	if (!s->xrings || !s->xpfds)
		return;
	for (size_t c = 0; c < ncpus; c++) {
		int leader = -1;

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
				s->nxrings++;
				leader = fd;
			} else {
				icppd_sys.ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT,
						(unsigned long)leader);
			}
		}
	}
}

struct session *session__open(const struct perf_event_attr *attr,
			      const pid_t *tasks, size_t ntasks,
			      size_t ring_pages, char *err, size_t errlen,
			      int *errnum)
{
	struct session *s = calloc(1, sizeof(*s));
	struct perf_event_attr a = *attr;
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
	if (!s->fds || !s->rings || !s->pfds)
		goto out_close;
	/* Wake when half the ring is full; the poll timeout bounds latency. */
	a.wakeup_watermark = (uint32_t)(ring_pages * pg / 2);
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
				s->nrings++;
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
	free(s->xrings);
	free(s->xpfds);
	free(s->arena);
	free(s->q);
	free(s);
}

static int ioctl_all(struct session *s, unsigned long req)
{
	for (size_t i = 0; i < s->nfds; i++)
		if (icppd_sys.ioctl(s->fds[i], req, 0))
			return -errno;
	return 0;
}

int session__enable(struct session *s)
{
	return ioctl_all(s, PERF_EVENT_IOC_ENABLE);
}

int session__disable(struct session *s)
{
	return ioctl_all(s, PERF_EVENT_IOC_DISABLE);
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

struct exec_ctx {
	session_exec_fn fn;
	void *arg;
};

static int notify(void *arg, const struct perf_event_header *h)
{
	struct exec_ctx *x = arg;
	struct rec_comm c;

	if (h->type == PERF_RECORD_COMM && !record__parse_comm(h, &c) &&
	    c.exec)
		x->fn(x->arg, c.pid, c.sid.time, c.comm);
	return 0;
}

void session__execs(struct session *s, session_exec_fn fn, void *arg)
{
	struct exec_ctx x = { fn, arg };

	for (size_t i = 0; i < s->nxrings; i++)
		ring__drain(&s->xrings[i], notify, &x);
}

static int enqueue(void *arg, const struct perf_event_header *h)
{
	struct session *s = arg;
	uint64_t time;

	if (s->peek)
		s->peek(s->peek_arg, h);
	/* A record without a time stamp cannot be ordered: deliver it at
	 * the front (the collector counts it as malformed). */
	if (record__time(h, &time))
		time = 0;
	if (grow(&s->arena, &s->arena_cap, s->arena_len + h->size, 1,
		 1 << 16) ||
	    grow(&s->q, &s->qcap, s->nq + 1, sizeof(*s->q), 1024))
		return s->oom = -ENOMEM;
	memcpy(s->arena + s->arena_len, h, h->size);
	s->q[s->nq++] = (struct pending){ time, s->seq++, s->arena_len };
	s->arena_len += h->size;
	if (time > s->round_max)
		s->round_max = time;
	return 0;
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int session__read(struct session *s, session_peek_fn peek,
		  session_record_fn record, void *arg, bool final)
{
	uint64_t limit;
	size_t done = 0, keep_len = 0;
	int ret = 0;

	s->peek = peek;
	s->peek_arg = arg;
	s->oom = 0;
	for (size_t i = 0; i < s->nrings && !s->oom; i++)
		ring__drain(&s->rings[i], enqueue, s);
	if (s->oom)
		return s->oom;
	limit = final ? UINT64_MAX : s->prev_round_max;
	s->prev_round_max = s->round_max;
	if (s->nq)	/* an idle round has no queue yet */
		qsort(s->q, s->nq, sizeof(*s->q), cmp_pending);
	while (done < s->nq && s->q[done].time <= limit && !ret)
		ret = record(arg, (const void *)(s->arena + s->q[done++].off));
	/* Compact what is left, in order, to the front of the arena. */
	uint8_t *tmp = NULL;

	for (size_t i = done; i < s->nq; i++)
		keep_len += ((const struct perf_event_header *)
			     (s->arena + s->q[i].off))->size;
	if (keep_len && !(tmp = malloc(keep_len)))
		return -ENOMEM;
	keep_len = 0;
	for (size_t i = done; i < s->nq; i++) {
		const struct perf_event_header *h = (const void *)
			(s->arena + s->q[i].off);

		memcpy(tmp + keep_len, h, h->size);
		s->q[i - done] = (struct pending){ s->q[i].time, s->q[i].seq,
						   keep_len };
		keep_len += h->size;
	}
	if (keep_len)
		memcpy(s->arena, tmp, keep_len);
	free(tmp);
	s->nq -= done;
	s->arena_len = keep_len;
	return ret;
}

unsigned long session__corrupt(const struct session *s)
{
	unsigned long n = 0;

	for (size_t i = 0; i < s->nrings; i++)
		n += s->rings[i].corrupt;
	return n;
}
