/* rp_cli.h — helpers shared by the replay commands (`whatif replay`, `sweep`, `merge`,
 * `bench sweep`) and the Lua module: machine loading, result tables, command lines. */
#ifndef WHATIF_RP_CLI_H
#define WHATIF_RP_CLI_H

#include <stdio.h>

#include "replay.h"
#include "util.h"

/* Load machine `uarch` (NULL: the default) and apply the `--set` expressions sets[0..n). */
wi_rc rpc_machine(const char *uarch, const char *const *sets, size_t n, ooo_config *cfg, wi_err *err);
/* The command line as one string, arguments quoted where needed (caller frees). */
char *rpc_command_line(const char *prog, int argc, char **argv);
/* Print baseline and intervened results side by side with exact deltas. */
void rpc_print_compare(FILE *f, const rp_result *base, const rp_result *r);
/* The per-PC jobs of a sweep: template tmpl (rp_interv_is_template) applied to every static
 * instruction executed at least min_count times (only branches for perfect_branch, only memory
 * instructions for perfect_cache), the `top` most executed first (ties by pc). Returns the
 * count; *out (free with interv_free_list) holds one intervention per job. */
size_t rpc_per_pc(const trace_t *t, const rp_interv *tmpl, uint64_t min_count, uint64_t top, rp_interv **out);
/* "main+0x1c" for pc (or "0x401a2c" without a symbol) into buf. */
const char *rpc_pc_name(const trace_t *t, uint64_t pc, char *buf, size_t n);

#endif
