/* cmd_merge.c — `whatif merge OUT.db IN.db...`: merge sweep shards (or partial sweeps) into one
 * results database; runs are matched by (trace hash, config hash), rows added when absent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "rp_store.h"

/* Remove a results database and its WAL side files. */
static void merge_unlink(const char *path) {
  static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
  for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
    char *p = xasprintf("%s%s", path, sfx[i]);
    unlink(p);
    free(p);
  }
}

int cmd_merge(int argc, char **argv) {
  if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
    printf("usage: whatif merge OUT.db IN.db [IN.db ...]\n"
           "  Merge sweep results (e.g. the shards of `whatif sweep --shard i/N`) into OUT.db (created if\n"
           "  needed). Runs with the same trace and configuration hashes become one run; a replay row is\n"
           "  added when OUT.db has none for its intervention. Inputs are not modified.\n");
    return 0;
  }
  for (int i = 1; i < argc; i++)
    if (argv[i][0] == '-' && argv[i][1]) return cli_usage("merge", "unknown option '%s' (see whatif merge --help)", argv[i]);
  if (argc < 3) return cli_usage("merge", "usage: whatif merge OUT.db IN.db [IN.db ...]");
  wi_err err = {0};
  /* A failed merge must not leave behind an output it created (SQLite creates it on open). */
  bool created = access(argv[1], F_OK) != 0;
  rp_store *s = rp_store_open(argv[1], &err);
  if (!s) return cli_fail(&err);
  int64_t total = 0;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], argv[1])) {
      rp_store_close(s, &err);
      if (created) merge_unlink(argv[1]);
      return cli_usage("merge", "input %s is the output", argv[i]);
    }
    int64_t rows = 0;
    if (rp_store_merge(s, argv[i], &rows, &err)) {
      wi_err e2;
      rp_store_close(s, &e2);
      if (created) merge_unlink(argv[1]);
      return cli_fail(&err);
    }
    printf("%s: %lld rows added\n", argv[i], (long long)rows);
    total += rows;
  }
  if (rp_store_close(s, &err)) return cli_fail(&err);
  printf("%s: %lld rows added in total\n", argv[1], (long long)total);
  return 0;
}
