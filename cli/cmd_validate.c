/*
 * cmd_validate.c - "icppd validate": a measurement run that also unwinds
 * each sample's stack copy to learn its true path, then scores what a
 * report of the run shows (correct and incorrect weight by outcome,
 * v_accuracy), and what the path map infers from the CID alone:
 * precise, ambiguous, incorrect, missing (the outcomes of the ICPP
 * paper), the degree of ambiguity and the shares by function
 * (v_validation).  Scores are made and stored by profile/validation.c,
 * printed by report/validation.c.
 */
#include "cli/commands.h"
#include "cli/run_cli.h"
#include "collector/collector.h"
#include "common/log.h"
#include "report/validation.h"

static const char *const formats[] = { "text", "json", NULL };

static const struct cli_option validate_options[] = {
	RUN_OPT_DB,
	{ "format", 0, CLI_ENUM, RUN_OPT(format), "FMT", "text or json", 0, 0,
	  .dflt = "text", .choices = formats },
	RUN_OPT_EVENT,
	RUN_OPT_FREQ("1000"),
	RUN_OPT_PERIOD("1000003"),
	RUN_OPT_STACK,
	RUN_OPT_NO_CACHE,
	RUN_OPT_PID,
	RUN_OPT_DURATION,
	RUN_OPT_MMAP("1024"),
	RUN_OPT_OUTPUT,
	RUN_OPT_QUIET,
};

const struct cli_command validate_command = {
	.name = "validate",
	.synopsis = "[options] -- COMMAND [ARGS...]\n       icppd validate [options] -p PID",
	.brief = "score call-path inference against the true stacks",
	.summary = "Score inference: record COMMAND with the true stack of each\n"
		   "sample, and compare with the truth what a report of the run\n"
		   "shows, and what the path map alone gives, for each context\n"
		   "identifier.",
	.options = validate_options,
	.noptions = sizeof(validate_options) / sizeof(validate_options[0]),
	.epilog = "Needs a training run of the same build first (icppd train).\n"
		  "COMMAND writes to the same standard output: give -o FILE\n"
		  "for output a program reads (--format json).\n"
		  "See icppd-validate(1) and the v_validation view.\n",
};

static int validate_finish(const struct run_result *res)
{
	struct validation_unscored un[UNW_NR_STATUS];
	struct validation_input in = { res->run_id, res->stats->unresolved,
				       un, 0 };
	struct validation_scores s;
	int ret = 0;

	for (int i = UNW_TRUNCATED; i < UNW_NR_STATUS; i++)
		un[in.nunscored++] = (struct validation_unscored){
			unwind_status__name(i), res->stats->unwind[i] };
	un[in.nunscored++] = (struct validation_unscored){ "map_full",
							   res->map_full };
	if (validation__score(res->store, res->run_id, &s))
		ret = -1;
	else
		report__validation(res->out, res->opts->format == 1, &in, &s);
	if (!ret && !s.map.samples)
		log_warn("no sample could be scored: none had a whole stack "
			 "(see 'unscored'; a larger --stack-size may help)");
	validation__exit(&s);
	return ret;
}

static const struct run_mode validate_mode = {
	.kind = "validate",
	.unwind = true,
	.truth = true,
	.needs_training = true,
	.finish = validate_finish,
};

int cmd_validate(int argc, char **argv)
{
	return run_cli__main(&validate_command, &validate_mode, argc, argv);
}
