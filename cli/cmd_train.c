/*
 * cmd_train.c - "icppd train": the training run.  Samples with a copy of
 * the user stack, unwinds each sample with the CFI, and merges the paths
 * into the path map of each program it saw.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/module.h"
#include "collector/collector.h"
#include "cli/commands.h"
#include "common/log.h"
#include "cli/run_cli.h"
#include "record/recorder.h"
#include "inference/pathmap.h"
#include "schema/store.h"

/* Training samples this many times as often as record by default. */
#define TRAIN_RATE_SCALE 4

static const struct cli_option train_options[] = {
	RUN_OPT_DB,
	RUN_OPT_EVENT,
	RUN_OPT_FREQ("4000"),
	RUN_OPT_PERIOD("250001"),
	RUN_OPT_STACK,
	RUN_OPT_NO_CACHE,
	RUN_OPT_PID,
	RUN_OPT_DURATION,
	RUN_OPT_MMAP("1024"),
	RUN_OPT_QUIET,
};

const struct cli_command train_command = {
	.name = "train",
	.synopsis = "[options] -- COMMAND [ARGS...]\n       icppd train [options] -p PID",
	.brief = "the training run: learn the path map of a program",
	.summary = "Learn the path map of COMMAND: sample it with copies of its\n"
		   "stack, unwind them with the DWARF CFI, and store every call\n"
		   "path with the context identifiers of all its frames.",
	.options = train_options,
	.noptions = sizeof(train_options) / sizeof(train_options[0]),
	.epilog = "Training runs of the same build merge into one path map; a new\n"
		  "build gets a new one.  See icppd-train(1).\n",
};

static int train_finish(const struct run_result *res)
{
	const struct collector_stats *cs = res->stats;
	char failed[512] = "";
	uint64_t nfailed = 0;
	int ret = 0;

	for (int i = UNW_TRUNCATED + 1; i < UNW_NR_STATUS; i++) {
		nfailed += cs->unwind[i];
		recorder__breakdown(failed, sizeof(failed),
				   unwind_status__name(i), cs->unwind[i]);
	}
	log_info("training: %llu samples, %llu unwound, %llu truncated "
		 "(stack copies of %llu bytes), %llu failed%s",
		 (unsigned long long)cs->samples,
		 (unsigned long long)cs->unwind[UNW_COMPLETE],
		 (unsigned long long)cs->unwind[UNW_TRUNCATED],
		 (unsigned long long)res->stack_size,
		 (unsigned long long)nfailed, failed);
	if (res->map_full)
		log_warn("%llu unwound samples not learned: the path map in "
			 "memory is full", (unsigned long long)res->map_full);
	for (uint32_t i = 0; i < pathmap__size(res->paths); i++) {
		const struct pm_node *root = pathmap__node(res->paths, i);
		struct store_map_summary sum;

		if (root->parent != PM_NONE)
			continue;
		if (store__map_summary(res->store, root->mod, &sum)) {
			log_error("%s", store__error(res->store));
			ret = -1;
			continue;
		}
		log_info("path map of %s (build-id %s): %lld distinct paths, "
			 "%lld distinct CIDs, %lld CIDs with more than one "
			 "calling context, %lld training samples",
			 module__path(root->mod),
			 module__build_id(root->mod)[0] ?
			 module__build_id(root->mod) : "none",
			 (long long)sum.paths, (long long)sum.cids,
			 (long long)sum.ambiguous_cids, (long long)sum.samples);
	}
	if (!cs->unwind[UNW_COMPLETE])
		log_warn("no sample could be unwound: the path map learned "
			 "nothing");
	return ret;
}

static const struct run_mode train_mode = {
	.kind = "train",
	.unwind = true,
	.rate_scale = TRAIN_RATE_SCALE,
	.finish = train_finish,
};

int cmd_train(int argc, char **argv)
{
	return run_cli__main(&train_command, &train_mode, argc, argv);
}
