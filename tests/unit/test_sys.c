/*
 * test_sys.c - event choice, the PEBS probe, and injected failures
 * through the syscall table: perf_event_open, mmap, opens by path
 * prefix (binaries, /proc, the configuration) and sockets.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "binary/module.h"
#include "collector/event.h"
#include "collector/session.h"
#include "common/sys.h"
#include "daemon/conffile.h"
#include "tests/tap.h"

/* Opens fail by path prefix; other paths and other calls are left be. */
static void test_open_faults(void)
{
	char dir[] = "/tmp/icppd-sys-XXXXXX", conf[64], *text = NULL;
	struct module *m;
	FILE *f;
	DIR *d;

	if (!mkdtemp(dir))
		return;
	snprintf(conf, sizeof(conf), "%s/icppd.conf", dir);
	f = fopen(conf, "w");
	fputs("frequency = 99\n", f);
	fclose(f);
	is_int(config__read(conf, &text), 0, "the configuration reads");
	free(text);
	text = NULL;

	setenv("ICPPD_INJECT_FAULT", "open:EACCES:/tmp/icppd-sys-", 1);
	is_int(sys__inject_from_env(), 0, "an open fault for one prefix");
	is_int(config__read(conf, &text), -1,
	       "the configuration's open fails (and says why on stderr)");
	ok(!sys__opendir(dir), "opendir under the prefix fails too");
	is_int(errno, EACCES, "with EACCES");
	m = module__open(conf);
	is_int(m ? module__error(m) : 0, -EACCES,
	       "a binary's open fails: the module says why");
	module__delete(m);
	d = sys__opendir("/proc/self/fd");
	ok(d != NULL, "paths outside the prefix open as before");
	if (d)
		closedir(d);
	m = module__open("/proc/self/exe");
	ok(m && !module__error(m), "a binary outside the prefix opens");
	module__delete(m);

	setenv("ICPPD_INJECT_FAULT", "socket:EMFILE", 1);
	is_int(sys__inject_from_env(), 0, "a socket fault");
	is_int(icppd_sys.socket(AF_UNIX, SOCK_STREAM, 0), -1, "socket fails");
	is_int(errno, EMFILE, "with EMFILE");
	setenv("ICPPD_INJECT_FAULT", "mmap:EACCES:/x", 1);
	is_int(sys__inject_from_env(), -EINVAL,
	       "a path prefix on a call that takes no path is refused");

	setenv("ICPPD_INJECT_FAULT", "open:ENOENT:/", 1);
	is_int(sys__inject_from_env(), 0, "every open fails");
	f = sys__fopen(conf);
	ok(!f && errno == ENOENT, "fopen through the table fails");
	setenv("ICPPD_INJECT_FAULT", "open:ENOENT:/nonexistent-prefix/", 1);
	sys__inject_from_env();
	unlink(conf);
	rmdir(dir);
}

int main(void)
{
	test_open_faults();

	struct event_choice ev;
	struct session *s;
	char err[512];
	pid_t self = getpid();
	int errnum = 0, ret;

	/* The PEBS probe runs whatever the machine; only its verdict
	 * decides whether the precise-event checks can run. */
	ret = event__choose(NULL, 0, 0, &ev, err, sizeof(err));
	is_int(ret, 0, "default event chosen");
	if (ev.precise) {
		ok(ev.attr.precise_ip >= 1, "precise event has precise_ip");
		ok(!ev.freq && ev.rate == ICPPD_DEFAULT_PERIOD,
		   "precise default uses a period (free-running PEBS)");
	} else {
		skip(ev.note, "precise (PEBS) event: no hardware PMU here");
		is_str(ev.name, "cpu-clock", "fallback is cpu-clock");
		ok(strstr(ev.note, "no precise event") != NULL,
		   "fallback says why: %s", ev.note);
		ok(ev.freq && ev.rate == ICPPD_DEFAULT_FREQ, "cpu-clock at 1000 Hz");
	}
	is_int(ev.attr.sample_regs_user, (1 << 6) | (1 << 7) | (1 << 8),
	       "user registers BP, SP, IP only");
	ok(ev.attr.exclude_kernel && !(ev.attr.sample_type & PERF_SAMPLE_CALLCHAIN),
	   "user space only, no call chain");

	ret = event__choose("no_such_event_xyz", 0, 0, &ev, err, sizeof(err));
	is_int(ret, -EINVAL, "unknown event refused");
	ok(strstr(err, "no_such_event_xyz") != NULL, "error names the event: %s", err);
	ret = event__choose("cpu-clock", 0, 5000, &ev, err, sizeof(err));
	ok(!ret && !ev.freq && ev.attr.sample_period == 5000, "-c period honoured");

	setenv("ICPPD_INJECT_FAULT", "perf_event_open", 1);
	is_int(sys__inject_from_env(), -EINVAL, "malformed injection refused");
	setenv("ICPPD_INJECT_FAULT", "perf_event_open:EBOGUS", 1);
	is_int(sys__inject_from_env(), -EINVAL, "unknown errno refused");

	/* mmap refused: the session reports which step failed. */
	setenv("ICPPD_INJECT_FAULT", "mmap:ENOMEM", 1);
	is_int(sys__inject_from_env(), 0, "mmap fault injected");
	event__choose("cpu-clock", 0, 0, &ev, err, sizeof(err));
	s = session__open(&ev.attr, &self, 1, 8, 0, err, sizeof(err), &errnum);
	if (errnum == EACCES || errnum == EPERM) {
		skip("perf_event_open not permitted for this user", "mmap failure");
	} else {
		ok(s == NULL, "session refused when mmap fails");
		ok(strstr(err, "mmap of the perf ring buffer") != NULL,
		   "mmap failure described: %s", err);
	}
	session__close(s);

	setenv("ICPPD_INJECT_FAULT", "perf_event_open:EACCES", 1);
	is_int(sys__inject_from_env(), 0, "perf_event_open fault injected");
	s = session__open(&ev.attr, &self, 1, 8, 0, err, sizeof(err), &errnum);
	ok(s == NULL, "session refused");
	is_int(errnum, EACCES, "errno passed on");
	ok(strstr(err, "Permission denied") && strstr(err, "perf_event_paranoid"),
	   "refusal explains and hints: %s", err);

	ret = event__choose(NULL, 0, 0, &ev, err, sizeof(err));
	ok(ret == 0 && !ev.precise && strstr(ev.note, "Permission denied"),
	   "default event falls back when precise events are refused: %s", ev.note);
	return tap_done();
}
