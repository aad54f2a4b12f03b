/*
 * event.c - libpfm4 event encoding and the default-event probe.
 */
#define _GNU_SOURCE
#include "collector/event.h"

#include <errno.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/record.h"
#include "common/sys.h"

/* Tried in order; the first that perf_event_open accepts is used. */
static const char *const precise_candidates[] = {
	"perf::cycles:precise=2",
	"perf::instructions:precise=2",
	"INST_RETIRED:ANY_P:precise=2",
};
static const char fallback_event[] = "perf::cpu-clock";

static int encode(const char *name, struct event_choice *ev, char *err,
		  size_t errlen)
{
	static bool initialised;
	pfm_perf_encode_arg_t arg;
	char *fstr = NULL;
	int ret;

	if (!initialised) {
		ret = pfm_initialize();
		if (ret != PFM_SUCCESS) {
			snprintf(err, errlen, "libpfm4 initialisation: %s",
				 pfm_strerror(ret));
			return -ENODEV;
		}
		initialised = true;
	}
	memset(&ev->attr, 0, sizeof(ev->attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &ev->attr;
	arg.size = sizeof(arg);
	arg.fstr = &fstr;
	ret = pfm_get_os_event_encoding(name, PFM_PLM3, PFM_OS_PERF_EVENT_EXT,
					&arg);
	if (ret != PFM_SUCCESS) {
		snprintf(err, errlen, "event '%s': %s (libpfm4 names, such as "
			 "cpu-clock or INST_RETIRED:ANY_P)", name,
			 pfm_strerror(ret));
		free(fstr);
		return -EINVAL;
	}
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	snprintf(ev->canonical, sizeof(ev->canonical), "%s", fstr ? fstr : name);
	free(fstr);
	return 0;
}

static void set_format(struct event_choice *ev, uint64_t freq, uint64_t period)
{
	struct perf_event_attr *a = &ev->attr;

	a->size = sizeof(*a);
	a->sample_type = ICPPD_SAMPLE_TYPE;
	a->sample_regs_user = ICPPD_REGS_MASK;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->exclude_callchain_kernel = 1;
	a->disabled = 1;
	a->inherit = 1;
	a->mmap2 = 1;
	a->mmap_data = 1;	/* anonymous mappings locate thread stacks */
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->watermark = 1;
	ev->precise = a->precise_ip > 0;
	if (!freq && !period) {
		if (ev->precise)
			period = ICPPD_DEFAULT_PERIOD;
		else
			freq = ICPPD_DEFAULT_FREQ;
	}
	ev->freq = freq != 0;
	ev->rate = freq ? freq : period;
	a->freq = ev->freq;
	if (ev->freq)
		a->sample_freq = freq;
	else
		a->sample_period = period;
}

static int try_open(struct perf_event_attr *a)
{
	int fd = icppd_sys.perf_event_open(a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int event__choose(const char *name, uint64_t freq, uint64_t period,
		  struct event_choice *ev, char *err, size_t errlen)
{
	int ret;

	memset(ev, 0, sizeof(*ev));
	if (name) {
		ret = encode(name, ev, err, errlen);
		if (!ret)
			set_format(ev, freq, period);
		return ret;
	}
	for (size_t i = 0; i < sizeof(precise_candidates) /
			       sizeof(precise_candidates[0]); i++) {
		char e[256];

		if (encode(precise_candidates[i], ev, e, sizeof(e)))
			continue;
		set_format(ev, freq, period);
		ret = try_open(&ev->attr);
		if (!ret)
			return 0;
		if (!ev->note[0])
			snprintf(ev->note, sizeof(ev->note),
				 "no precise event: perf_event_open(%s): %s",
				 precise_candidates[i], strerror(-ret));
	}
	char note[256];

	memcpy(note, ev->note, sizeof(note));
	ret = encode(fallback_event, ev, err, errlen);
	if (ret)
		return ret;
	snprintf(ev->name, sizeof(ev->name), "cpu-clock");
	memcpy(ev->note, note, sizeof(note));
	set_format(ev, freq, period);
	return 0;
}

void event__add_stack(struct event_choice *ev, uint32_t bytes)
{
	ev->attr.sample_type |= PERF_SAMPLE_STACK_USER;
	ev->attr.sample_stack_user = bytes;
}

void event__learner(const struct perf_event_attr *main, uint32_t bytes,
		    uint64_t hz, struct perf_event_attr *out)
{
	*out = *main;
	if (hz) {
		out->type = PERF_TYPE_SOFTWARE;
		out->config = PERF_COUNT_SW_CPU_CLOCK;
		out->config1 = out->config2 = 0;
		out->precise_ip = 0;
		out->freq = 1;
		out->sample_freq = hz;
	}
	out->sample_type |= PERF_SAMPLE_STACK_USER;
	out->sample_stack_user = bytes;
	/* the session's side-record event reports mappings, names and
	 * tasks once */
	out->mmap = out->mmap2 = out->mmap_data = 0;
	out->comm = out->comm_exec = out->task = 0;
	out->watermark = 0;
	out->wakeup_events = 0;
}

void event__scale_rate(struct event_choice *ev, unsigned factor)
{
	if (ev->freq)
		ev->rate *= factor;
	else if (ev->rate / factor)
		ev->rate = (ev->rate / factor) | 1;	/* odd: less aliasing */
	if (ev->freq)
		ev->attr.sample_freq = ev->rate;
	else
		ev->attr.sample_period = ev->rate;
}

const char *event__hint(int err)
{
	static char buf[192];
	char val[16] = "?";
	FILE *f;

	switch (err) {
	case EACCES:
	case EPERM:
		f = sys__fopen("/proc/sys/kernel/perf_event_paranoid");
		if (f) {
			if (!fgets(val, sizeof(val), f))
				strcpy(val, "?");
			val[strcspn(val, "\n")] = '\0';
			fclose(f);
		}
		snprintf(buf, sizeof(buf),
			 " (kernel.perf_event_paranoid=%s: run as root, or "
			 "'sysctl kernel.perf_event_paranoid=1')", val);
		return buf;
	case ENOENT:
	case EOPNOTSUPP:
		return " (the event is not supported here: no such PMU in "
		       "this CPU or VM; try -e cpu-clock)";
	case EMFILE:
		return " (too many open files: raise 'ulimit -n')";
	case ESRCH:
		return " (no such process)";
	default:
		return "";
	}
}
