/*
 * commands.h - the subcommands main() dispatches to.  Each takes the
 * argv that starts at its own name and returns the process exit status:
 * 0 success, 1 failure (after one "icppd: ..." line), 2 usage error;
 * record, train and validate return the profiled command's status.
 */
#ifndef ICPPD_CLI_COMMANDS_H
#define ICPPD_CLI_COMMANDS_H

#include "cli/cli.h"

extern const struct cli_command record_command, train_command,
				validate_command, report_command,
				compare_command, arr_command, sites_command,
				daemon_command, ctl_command, export_command,
				list_command, annotate_command;
int cmd_record(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_arr(int argc, char **argv);
int cmd_sites(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_annotate(int argc, char **argv);

#endif
