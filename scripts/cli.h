/* cli.h — the `whatif` command line: the command table and helpers shared by commands. */
#ifndef WHATIF_CLI_H
#define WHATIF_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/* Exit statuses of every command. */
enum { EXIT_OK_ = 0, EXIT_CHECK = 1, EXIT_BADINPUT = 2 };

/* A command: argv[0] is the command name. Returns the process exit status. */
typedef int (*cli_cmd_fn)(int argc, char **argv);

typedef struct cli_cmd {
  const char *name;
  cli_cmd_fn fn;
  const char *summary; /* one line for `whatif help` */
} cli_cmd;

/* Every command, one file each (scripts/cmd_<name>.c). */
int cmd_record(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_mfir(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_tma(int argc, char **argv);
int cmd_stacks(int argc, char **argv);
int cmd_critical(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_gus(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_config(int argc, char **argv);

/* Run the command named argv[0]; prints help for unknown names (exit 2). */
int cli_main(int argc, char **argv);

/* Report a usage error for cmd ("whatif <cmd>: <msg>") and return EXIT_BADINPUT. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Report err and return EXIT_BADINPUT. */
int cli_fail(const wi_err *err);

/* Check before any long work that an output file can be created at path (written later as a
 * temporary beside it, then renamed): its directory exists and is writable and path is not a
 * directory. Returns 0, or reports "whatif <cmd>: cannot write ..." and returns EXIT_BADINPUT. */
int cli_check_out(const char *cmd, const char *path);

/* Directory containing the running executable (cached; never NULL). */
const char *cli_exe_dir(void);
/* Locate a data file shipped with whatif: tries, in order, $WHATIF_HOME/<rel>, <exe_dir>/../<rel>,
 * <exe_dir>/../share/whatif/<rel>, and the source tree. Returns a malloc'd path or NULL. */
char *cli_find_data(const char *rel);

#endif
