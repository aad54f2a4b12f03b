/*
 * outfile.c - a report to standard output or to -o FILE, written whole
 * or not at all when FILE is a regular file, through when it is a
 * device or FIFO (outfile.h).
 */
#define _GNU_SOURCE
#include "common/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/sys.h"

/* The process's umask (umask() can only be read by setting it). */
static mode_t umask_now(void)
{
	mode_t m = umask(022);

	umask(m);
	return m;
}

int outfile__open(struct outfile *o, const char *path)
{
	int fd;

	struct stat st;

	*o = (struct outfile){ .f = stdout, .path = path };
	if (!path)
		return 0;
	o->f = NULL;
	/* Only a regular file (or nothing yet) is replaced whole; a device,
	 * FIFO or socket is written through, never renamed over (as root,
	 * -o /dev/full replaced /dev/full with a file). */
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		fd = S_ISDIR(st.st_mode) ? -1 :
		     sys__open(path, O_WRONLY | O_NOCTTY, 0);
		if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
			log_error("cannot write %s: %s", path, fd < 0 &&
				  S_ISDIR(st.st_mode) ? "a directory" :
				  strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		return 0;
	}
	if (asprintf(&o->tmp, "%s.XXXXXX", path) < 0) {
		o->tmp = NULL;
		log_error("out of memory");
		return -1;
	}
	fd = mkstemp(o->tmp);
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		log_error("cannot write %s: %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(o->tmp);
		}
		free(o->tmp);
		o->tmp = NULL;
		return -1;
	}
	/* mkstemp makes 0600; a report is as readable as any new file */
	fchmod(fd, 0644 & ~umask_now());
	return 0;
}

int outfile__close(struct outfile *o, bool keep)
{
	const char *what = o->path ? o->path : "the report";
	int ret = 0;

	if (!o->f)
		goto out;
	if (keep && (fflush(o->f) || ferror(o->f))) {
		log_error("writing %s: %s", what, strerror(errno));
		keep = false;
		ret = -1;
	}
	if (o->f != stdout && fclose(o->f) && keep) {
		log_error("writing %s: %s", what, strerror(errno));
		keep = false;
		ret = -1;
	}
	if (o->tmp && keep && rename(o->tmp, o->path)) {
		log_error("cannot write %s: %s", o->path, strerror(errno));
		keep = false;
		ret = -1;
	}
	if (o->tmp && !keep)
		unlink(o->tmp);
out:
	free(o->tmp);
	*o = (struct outfile){ 0 };
	return ret;
}
