/*
 * outfile.h - where a subcommand writes its report: standard output, or
 * the FILE of -o.  A FILE is written as a temporary file beside it and
 * renamed over it only once the whole report is written, so a failed
 * command never leaves half a file or destroys an older one.  A FILE
 * that exists and is not a regular file (/dev/stdout, a FIFO, a device)
 * is written through and never replaced.
 *
 * -o matters most where the profiled command shares icppd's standard
 * output (validate): the report then stays apart from what the program
 * prints.
 */
#ifndef ICPPD_COMMON_OUTFILE_H
#define ICPPD_COMMON_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

struct outfile {
	FILE *f;		/* stdout or the temporary file; NULL: closed */
	const char *path;	/* FILE, or NULL for stdout (borrowed) */
	char *tmp;		/* the temporary file's name (owned) */
};

/* Opens @path (NULL: standard output) into @o.  0, or -1 after an
 * "icppd: cannot write FILE: why" line. */
int outfile__open(struct outfile *o, const char *path);

/*
 * Ends the report.  With @keep, flushes it and, for a FILE, renames the
 * temporary file over FILE; without, removes the temporary file.  0, or
 * -1 after an error line (then nothing is kept).  Accepts an all-zero
 * struct outfile that was never opened.
 */
int outfile__close(struct outfile *o, bool keep);

#endif
