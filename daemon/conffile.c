/*
 * conffile.c - reading and splitting the daemon's configuration file.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sys.h"
#include "daemon/conffile.h"
#include "common/log.h"

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* A setting's name as the options table spells them: a key that is not
 * one is never echoed (a config symlinked to /etc/shadow must not print
 * its first line). */
static bool setting_name(const char *key)
{
	size_t n = strspn(key, "abcdefghijklmnopqrstuvwxyz-");

	return n > 0 && n <= 32 && !key[n];
}

/* A FIFO would block and a directory reads as nothing, so only a
 * regular file, opened without blocking. */
int config__read(const char *path, char **text)
{
	int fd = sys__open(path, O_RDONLY | O_NONBLOCK, 0);
	struct stat st;
	ssize_t got = 0;
	unsigned no;
	char *t;

	*text = NULL;
	if (fd < 0) {
		log_error("%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		log_error("%s: not a regular file%s", path,
			  S_ISDIR(st.st_mode) ? " (a directory)" : "");
		goto fail;
	}
	if ((st.st_uid && st.st_uid != geteuid()) || (st.st_mode & 022)) {
		log_error("%s: refused: %s", path, st.st_mode & 022 ?
			  "writable by group or others (chmod go-w)" :
			  "owned by another user");
		goto fail;
	}
	if (st.st_size > CONFIG_MAX_BYTES) {
		log_error("%s: larger than %d bytes", path, CONFIG_MAX_BYTES);
		goto fail;
	}
	t = malloc((size_t)st.st_size + 1);
	if (!t) {
		log_error("out of memory");
		goto fail;
	}
	while (got < st.st_size) {
		ssize_t n = read(fd, t + got, (size_t)(st.st_size - got));

		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	t[got] = '\0';
	if (memchr(t, '\0', (size_t)got)) {
		no = 1;
		for (char *c = t; *c; c++)
			no += *c == '\n';
		log_error("%s:%u: a NUL byte: not a text file", path, no);
		free(t);
		return -1;
	}
	*text = t;
	return 0;
fail:
	close(fd);
	return -1;
}

int config__parse(char *text, const char *path,
		  int (*fn)(void *arg, const char *key, const char *val,
			    char *err, size_t errlen),
		  void *arg)
{
	char err[300], *next;
	unsigned no = 0;

	for (char *line = text; line; line = next) {
		char *key, *val, *hash;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		no++;
		if (strlen(line) >= CONFIG_MAX_LINE) {
			log_error("%s:%u: line longer than %d bytes", path, no,
				  CONFIG_MAX_LINE - 1);
			return -1;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		key = trim(line);
		if (!*key)
			continue;
		val = key + strcspn(key, " \t=");
		if (*val) {
			*val++ = '\0';
			val = trim(val);
			if (*val == '=')
				val = trim(val + 1);
		}
		if (!setting_name(key)) {
			log_error("%s:%u: not a NAME VALUE setting", path, no);
			return -1;
		}
		if (!strcmp(key, "config")) {
			log_error("%s:%u: 'config' is not a setting of the file",
				  path, no);
			return -1;
		}
		if (fn(arg, key, val, err, sizeof(err))) {
			log_error("%s:%u: %s", path, no, err);
			return -1;
		}
	}
	return 0;
}
