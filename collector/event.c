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

static int initialise(char *err, size_t errlen)
{
	static bool initialised;
	int ret;

	if (initialised)
		return 0;
	ret = pfm_initialize();
	if (ret != PFM_SUCCESS) {
		snprintf(err, errlen, "libpfm4 initialisation: %s",
			 pfm_strerror(ret));
		return -ENODEV;
	}
	initialised = true;
	return 0;
}

/* What perf record takes and icppd does not, said plainly: perf's
 * event lists and tracepoints (libpfm4 would only say "event not
 * found"). */
static int refuse(const char *name, char *err, size_t errlen)
{
	static const char *const roots[] = { "/sys/kernel/tracing",
					     "/sys/kernel/debug/tracing" };
	const char *colon = strchr(name, ':');
	char path[300];

	if (strchr(name, ',') || strchr(name, '{')) {
		snprintf(err, errlen, "event '%s': icppd samples one event at a "
			 "time (give one -e; 'icppd list' shows them)", name);
		return -EINVAL;
	}
	/* "subsystem:event", one colon (libpfm4's PMU names take two) */
	if (!colon || colon[1] == ':' || strchr(colon + 1, ':') ||
	    colon - name > 100 || strlen(colon + 1) > 100 || strchr(name, '/'))
		return 0;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, sizeof(path), "%s/events/%.*s/%s", roots[i],
			 (int)(colon - name), name, colon + 1);
		if (!access(path, F_OK)) {
			snprintf(err, errlen, "event '%s' is a tracepoint: icppd "
				 "samples the stack at a clock or a counter's "
				 "overflow, not at kernel events (try -e "
				 "cpu-clock; 'icppd list' shows what it takes)",
				 name);
			return -EINVAL;
		}
	}
	return 0;
}

static int encode(const char *name, struct event_choice *ev, char *err,
		  size_t errlen)
{
	pfm_perf_encode_arg_t arg;
	char *fstr = NULL;
	int ret;

	if ((ret = initialise(err, errlen)) || (ret = refuse(name, err, errlen)))
		return ret;
	memset(&ev->attr, 0, sizeof(ev->attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &ev->attr;
	arg.size = sizeof(arg);
	arg.fstr = &fstr;
	ret = pfm_get_os_event_encoding(name, PFM_PLM3, PFM_OS_PERF_EVENT_EXT,
					&arg);
	if (ret != PFM_SUCCESS) {
		/* where tracefs is not mounted: a tracepoint's shape */
		bool tp = strchr(name, ':') && strspn(name,
			"abcdefghijklmnopqrstuvwxyz0123456789_:") == strlen(name);

		snprintf(err, errlen, "event '%s': %s (libpfm4 names, such as "
			 "cpu-clock or INST_RETIRED:ANY_P; 'icppd list' shows "
			 "them%s)", name, pfm_strerror(ret),
			 tp ? "; a tracepoint is not sampled by icppd" : "");
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

void event__exec_tracepoint(const struct perf_event_attr *main, uint64_t id,
			    struct perf_event_attr *out)
{
	*out = (struct perf_event_attr){ .size = sizeof(*out),
		.type = PERF_TYPE_TRACEPOINT, .config = id,
		.sample_period = 1, .wakeup_events = 1,
		.inherit = main->inherit, .disabled = main->disabled,
		.enable_on_exec = main->enable_on_exec, .exclude_hv = 1 };
}

/* ftrace's limits: a string operand (MAX_FILTER_STR_VAL), the filter
 * (PERF_EVENT_IOC_SET_FILTER copies at most a page) */
#define FILTER_STR_MAX 255
#define FILTER_MAX 4095

/* Appends `filename OP "LEAD NAME TAIL"` to @buf (with " || " after
 * the first clause), or -1 where it does not fit. */
static int clause(char *buf, size_t len, size_t *at, const char *op,
		  const char *lead, const char *name, size_t n,
		  const char *tail)
{
	int w = snprintf(buf + *at, len - *at, "%sfilename %s \"%s%.*s%s\"",
			 *at ? " || " : "", op, lead, (int)n, name, tail);

	if (w < 0 || (size_t)w >= len - *at)
		return -1;
	*at += (size_t)w;
	return 0;
}

/* A file name a filter's string can hold: "*" / NAME "*" in at most
 * FILTER_STR_MAX bytes, no byte the filter would read as a glob or a
 * quote. */
static bool quotable(const char *name, size_t n)
{
	if (!n || n + 3 > FILTER_STR_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (name[i] < 0x20 || name[i] > 0x7e ||
		    strchr("\"\\*?[]/", name[i]))
			return false;
	return true;
}

int event__exec_filter(const char *const *files, size_t nfiles,
		       const char *const *comms, size_t ncomms,
		       const uint32_t *pids, size_t npids, char *buf,
		       size_t len)
{
	size_t at = 0;

	if (len > FILTER_MAX + 1)
		len = FILTER_MAX + 1;
	if (!len || !(nfiles + ncomms + npids))
		return -1;
	buf[0] = '\0';
	for (size_t i = 0; i < nfiles + ncomms; i++) {
		bool comm = i >= nfiles;
		const char *name = comm ? comms[i - nfiles] : files[i];
		size_t n = strlen(name);
		/* a command name of 15 bytes or more: the file's starts so */
		bool prefix = comm && n >= 15;

		if (prefix)
			n = 15;
		if (!quotable(name, n) ||
		    clause(buf, len, &at, "~", "*/", name, n,
			   prefix ? "*" : "") ||
		    clause(buf, len, &at, prefix ? "~" : "==", "", name, n,
			   prefix ? "*" : ""))
			return -1;
	}
	for (size_t i = 0; i < npids; i++) {
		int w = snprintf(buf + at, len - at, "%spid == %u",
				 at ? " || " : "", pids[i]);

		if (w < 0 || (size_t)w >= len - at)
			return -1;
		at += (size_t)w;
	}
	return 0;
}

void event__switches(const struct perf_event_attr *main,
		     struct perf_event_attr *out)
{
	*out = *main;
	out->type = PERF_TYPE_SOFTWARE;
	out->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	out->config1 = out->config2 = 0;
	out->freq = 0;
	out->sample_period = 1;
	out->precise_ip = 0;
	out->exclude_kernel = 0;
	out->context_switch = 1;
	out->sample_type &= ~(uint64_t)PERF_SAMPLE_STACK_USER;
	out->sample_stack_user = 0;
	/* the side-record event reports mappings, names and tasks */
	out->mmap = out->mmap2 = out->mmap_data = 0;
	out->comm = out->comm_exec = out->task = 0;
}

void event__learner_copy(struct perf_event_attr *a, uint32_t bytes)
{
	a->sample_type |= PERF_SAMPLE_STACK_USER;
	a->sample_stack_user = bytes;
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

/* One event of a PMU being listed, with the names of the events that
 * encode to the same attributes (libpfm4's perf:: PMU lists each
 * generic event under two or three names: PERF_COUNT_SW_CPU_CLOCK,
 * CPU-CLOCK). */
struct listed {
	struct event_entry e;
	struct perf_event_attr attr;	/* as encoded, when @encoded */
	bool encoded;
	char aliases[128];
};

/* Whether @a and @b sample the same thing. */
static bool same_event(const struct listed *a, const struct listed *b)
{
	return a->encoded && b->encoded && a->attr.type == b->attr.type &&
	       a->attr.config == b->attr.config &&
	       a->attr.config1 == b->attr.config1 &&
	       a->attr.config2 == b->attr.config2;
}

/* Adds @l to the @n listed so far of one PMU: as a new event, or as
 * another name of one listed.  perf's own name of a generic event
 * (CPU-CLOCK) comes first, the kernel's (PERF_COUNT_SW_CPU_CLOCK) among
 * the others. */
static void list_one(struct listed *v, size_t *n, const struct listed *l)
{
	static const char kernel_name[] = "PERF_COUNT_";

	for (size_t i = 0; i < *n; i++) {
		const char *other = l->e.name;
		size_t used = strlen(v[i].aliases);

		if (!same_event(&v[i], l))
			continue;
		if (!strncmp(v[i].e.name, kernel_name, strlen(kernel_name)) &&
		    strncmp(other, kernel_name, strlen(kernel_name))) {
			other = v[i].e.name;
			v[i].e.name = l->e.name;
		}
		if (used + strlen(other) + 3 < sizeof(v[i].aliases))
			snprintf(v[i].aliases + used,
				 sizeof(v[i].aliases) - used, "%s%s",
				 used ? ", " : "", other);
		return;
	}
	v[(*n)++] = *l;
}

int event__list(void (*fn)(void *arg, const struct event_entry *e),
		void *arg, char *err, size_t errlen)
{
	int ret = initialise(err, errlen);

	if (ret)
		return ret;
	for (int p = PFM_PMU_NONE + 1; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t pinfo = { .size = sizeof(pinfo) };
		struct listed *v;
		size_t n = 0;

		if (pfm_get_pmu_info((pfm_pmu_t)p, &pinfo) != PFM_SUCCESS ||
		    !pinfo.is_present || pinfo.nevents <= 0)
			continue;
		v = calloc((size_t)pinfo.nevents, sizeof(*v));
		if (!v) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		for (int i = pinfo.first_event; i != -1 &&
		     n < (size_t)pinfo.nevents; i = pfm_get_event_next(i)) {
			pfm_event_info_t einfo = { .size = sizeof(einfo) };
			struct event_choice ev;
			struct listed l = { .e.open_err = -EINVAL };
			char name[256], why[256];

			if (pfm_get_event_info(i, PFM_OS_NONE, &einfo) !=
			    PFM_SUCCESS)
				continue;
			snprintf(name, sizeof(name), "%s::%s", pinfo.name,
				 einfo.name);
			l.e = (struct event_entry){ pinfo.name, pinfo.desc,
				einfo.name, einfo.desc, -EINVAL,
				einfo.is_precise, NULL };
			if (!encode(name, &ev, why, sizeof(why))) {
				set_format(&ev, ICPPD_DEFAULT_FREQ, 0);
				l.e.open_err = try_open(&ev.attr);
				l.attr = ev.attr;
				l.encoded = true;
			}
			list_one(v, &n, &l);
		}
		for (size_t i = 0; i < n; i++) {
			v[i].e.aliases = v[i].aliases[0] ? v[i].aliases : NULL;
			fn(arg, &v[i].e);
		}
		free(v);
	}
	return 0;
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
