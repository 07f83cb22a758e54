/* testutil.c — helpers shared by the cmocka tests. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

char *tu_trace_path(const char *name) {
  const char *dir = getenv("WHATIF_TRACES");
  if (!dir) {
    skip();
    return NULL;
  }
  return xasprintf("%s/%s.wtr", dir, name);
}

char *tu_tmp_path(const char *suffix) {
  static unsigned counter;
  const char *dir = getenv("TMPDIR");
  return xasprintf("%s/whatif-test-%ld-%u%s", dir ? dir : "/tmp", (long)getpid(), counter++, suffix);
}

uint64_t tu_seed(void) {
  static uint64_t seed;
  static int done;
  if (!done) {
    const char *s = getenv("WHATIF_SEED");
    seed = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL);
    fprintf(stderr, "seed: %llu (set WHATIF_SEED to reproduce)\n", (unsigned long long)seed);
    done = 1;
  }
  return seed;
}

char *tu_run(const char *cmd, int *status) {
  FILE *p = popen(cmd, "r");
  if (!p) {
    *status = -1;
    return xstrdup("");
  }
  size_t cap = 4096, n = 0;
  char *buf = xmalloc(cap);
  size_t r;
  while ((r = fread(buf + n, 1, cap - n - 1, p)) > 0) {
    n += r;
    if (cap - n < 1024) buf = xrealloc(buf, cap *= 2);
  }
  buf[n] = 0;
  int st = pclose(p);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  return buf;
}
