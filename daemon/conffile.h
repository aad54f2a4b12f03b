/*
 * conffile.h - the daemon's settings and its configuration file.
 *
 * The file is "name value" or "name = value" lines with the long option
 * names, '#' comments.  Root reads it, and it chooses what root reads
 * and where root writes, so config__read takes it whole and bounded,
 * from a regular file owned by this user or root that no one else can
 * write; config__parse then splits it without touching the disk.
 */
#ifndef ICPPD_DAEMON_CONFFILE_H
#define ICPPD_DAEMON_CONFFILE_H

#include <stddef.h>

#define CONFIG_MAX_LINE 4096
#define CONFIG_MAX_BYTES (1 << 20)

/* The file at @path, NUL-terminated, in *@text (the caller frees it).
 * 0, or -1 after logging why it was refused. */
int config__read(const char *path, char **text);

/* Calls @fn for every setting of @text (split in place: @key and @val
 * point into it).  @fn returns 0, or -1 with what is wrong in @err.
 * 0, or -1 after logging "PATH:LINE: why". */
int config__parse(char *text, const char *path,
		  int (*fn)(void *arg, const char *key, const char *val,
			    char *err, size_t errlen),
		  void *arg);

#endif
