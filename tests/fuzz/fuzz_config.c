/*
 * fuzz_config.c - the daemon's configuration file (daemon/conffile.h):
 * the split into settings and each setting's value as the options
 * table parses it.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "daemon/conffile.h"
#include "daemon/daemon.h"
#include "common/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int set(void *arg, const char *key, const char *val, char *err,
	       size_t errlen)
{
	return cli__set(&daemon_command, key, val, arg, err, errlen);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct daemon_opts o;
	char *text;

	/* config__read refuses what holds a NUL byte */
	if (size > CONFIG_MAX_BYTES || memchr(data, '\0', size))
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	log__set_level(LOG_ERROR);
	memset(&o, 0, sizeof(o));
	cli__defaults(&daemon_command, &o);
	if (!config__parse(text, "fuzz", set, &o) &&
	    (o.exe.n > STRLIST_MAX || o.freq < 1 || o.freq > 100000))
		__builtin_trap();
	free(text);
	return 0;
}
