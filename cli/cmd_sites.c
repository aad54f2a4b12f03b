/*
 * cmd_sites.c - "icppd sites": the static call graph of a binary, each
 * call with the change of stack height it makes (binary/callsites.h),
 * and the functions an indirect call may reach, which the inference's
 * search composes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "binary/callsites.h"
#include "binary/module.h"
#include "cli/commands.h"
#include "common/log.h"

struct sites_opts {
	const char *function;
	bool taken;
};

static const struct cli_option sites_options[] = {
	{ "function", 0, CLI_STRING, offsetof(struct sites_opts, function),
	  "NAME", "only the calls made by function NAME", 0, 0 },
	{ "taken", 0, CLI_FLAG, offsetof(struct sites_opts, taken), NULL,
	  "list the functions whose address the binary takes instead", 0,
	  0 },
	{ "perf-f", 'f', CLI_STRING, 0, "X", "-f is --format elsewhere; "
	  "sites takes --function NAME", 0, 0, .flags = CLI_REFUSE },
};

const struct cli_command sites_command = {
	.name = "sites",
	.synopsis = "[--function NAME | --taken] BINARY",
	.brief = "list a binary's calls with the stack height each adds",
	.summary = "List every call in BINARY: return address, caller,\n"
		   "callee (\"*\" for an indirect call), and how far below\n"
		   "the caller's canonical frame address the callee's lies\n"
		   "(the height it adds), from the CFI and the decoded\n"
		   "instructions.",
	.options = sites_options,
	.noptions = sizeof(sites_options) / sizeof(sites_options[0]),
	.permute = true,
	.epilog = "An indirect call may reach any function whose address "
		  "is taken\n(--taken).  See icppd-sites(1).\n",
};

static void label(const struct module *m, uint64_t addr, char *buf,
		  size_t len)
{
	struct module_func f;

	if (module__function(m, addr, &f))
		snprintf(buf, len, "%s+0x%llx", module__name(m),
			 (unsigned long long)addr);
	else
		module__func_label(m, f.start, f.name, buf, len);
}

int cmd_sites(int argc, char **argv)
{
	struct sites_opts o = { 0 };
	struct callsites cs;
	struct module *m;
	size_t shown = 0;
	int idx, ret;

	idx = cli__parse(&sites_command, argc, argv, &o);
	if (idx < 0)
		return idx == -1 ? 0 : 2;
	if (argc - idx != 1) {
		fprintf(stderr, "icppd: sites: expected one BINARY\n"
			"Try 'icppd sites --help'.\n");
		return 2;
	}
	m = module__open(argv[idx]);
	if (!m) {
		log_error("sites: %s", strerror(ENOMEM));
		return 1;
	}
	ret = module__error(m);
	if (!ret)
		ret = callsites__scan(m, &cs);
	if (ret) {
		log_error("sites: %s: %s", argv[idx],
			  ret == -ENOEXEC ? "not an ELF file" :
			  ret == -EPROTO ? "not an x86-64 ELF file" :
			  strerror(-ret));
		module__delete(m);
		return 1;
	}
	if (o.taken) {
		printf("# function\n");
		for (size_t i = 0; i < cs.ntaken; i++) {
			char name[256];

			label(m, cs.taken[i], name, sizeof(name));
			printf("%s\n", name);
		}
		printf("# %zu functions whose address is taken\n", cs.ntaken);
		callsites__exit(&cs);
		module__delete(m);
		return 0;
	}
	printf("# return\tcaller\tcallee\theight_added\n");
	for (size_t i = 0; i < cs.n; i++) {
		const struct callsite *c = &cs.v[i];
		char caller[256], callee[256];

		label(m, c->caller, caller, sizeof(caller));
		if (o.function && strcmp(caller, o.function))
			continue;
		if (c->import)
			snprintf(callee, sizeof(callee), "%s@plt", c->import);
		else if (c->callee == CALLSITE_INDIRECT)
			snprintf(callee, sizeof(callee), "*");
		else
			label(m, c->callee, callee, sizeof(callee));
		printf("0x%llx\t%s\t%s\t%lld\n", (unsigned long long)c->ret,
		       caller, callee, (long long)c->delta);
		shown++;
	}
	printf("# %zu calls listed; %zu direct calls in the binary left out "
	       "(no height change that holds on every path)\n", shown,
	       cs.unknown);
	callsites__exit(&cs);
	module__delete(m);
	return 0;
}
