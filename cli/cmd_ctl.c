/*
 * cmd_ctl.c - "icppd ctl": one request to a running daemon through its
 * control socket (daemon/ctl.h).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "daemon/ctl.h"
#include "daemon/daemon.h"

struct ctl_opts {
	const char *socket;
};

static const struct cli_option ctl_options[] = {
	{ "socket", 0, CLI_STRING, offsetof(struct ctl_opts, socket), "PATH",
	  "the daemon's control socket (default as icppd daemon)", 0, 0 },
};

const struct cli_command ctl_command = {
	.name = "ctl",
	.synopsis = "[--socket PATH] status|flush|stop",
	.brief = "control a running icppd daemon",
	.summary = "Ask a running icppd daemon for its status, to flush now, or\n"
		   "to stop.",
	.options = ctl_options,
	.noptions = 1,
	.permute = true,
	.epilog = "See icppd-ctl(1).\n",
};

int cmd_ctl(int argc, char **argv)
{
	struct ctl_opts o = { 0 };
	char path[PATH_MAX];
	int idx;

	/* every other subcommand takes -d: say why this one does not */
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "-d", 2) ||
		    !strncmp(argv[i], "--database", 10)) {
			fprintf(stderr, "icppd: ctl: %s: ctl talks to the daemon "
				"through its control socket, not to a database: "
				"give --socket PATH ('icppd ctl status' names the "
				"daemon's database)\n", argv[i]);
			return 2;
		}
	idx = cli__parse(&ctl_command, argc, argv, &o);
	if (idx < 0)
		return idx == -1 ? 0 : 2;
	if (argc - idx != 1 || (strcmp(argv[idx], "status") &&
	    strcmp(argv[idx], "flush") && strcmp(argv[idx], "stop"))) {
		fprintf(stderr, "icppd: ctl: expected status, flush or stop\n"
			"Try 'icppd ctl --help'.\n");
		return 2;
	}
	if (o.socket)
		snprintf(path, sizeof(path), "%s", o.socket);
	else
		daemon__default_socket(path, sizeof(path));
	return ctl__request(path, argv[idx]);
}
