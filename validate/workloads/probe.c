/* probe.c — not a workload: a small program with one behaviour per mode, used by the
 * recorder's integration tests (tests/test_int_record.c) to check what `whatif record` passes
 * through and how it records exits, crashes, signals and threads.
 *
 * usage: probe exit N | echo | crash | signals N | threads | abort */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t hits;
static void on_usr1(int sig) {
  (void)sig;
  hits++;
}

static void *spin(void *arg) {
  volatile unsigned long x = (unsigned long)arg;
  for (int i = 0; i < 100000; i++) x = x * 3 + 1;
  return NULL;
}

/* A crash in its own function, so the trace's last instruction is easy to place. */
static __attribute__((noinline)) int crash(volatile int *p) { return *p; }

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "exit")) {
    int n = argc > 2 ? atoi(argv[2]) : 0;
    printf("probe exit %d\n", n);
    return n;
  }
  if (!strcmp(mode, "echo")) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) fwrite(buf, 1, n, stdout);
    return 0;
  }
  if (!strcmp(mode, "crash")) {
    printf("before crash\n");
    fflush(stdout);
    return crash((volatile int *)(argc > 5 ? argv[5] : NULL));
  }
  if (!strcmp(mode, "signals")) {
    int n = argc > 2 ? atoi(argv[2]) : 1;
    signal(SIGUSR1, on_usr1);
    for (int i = 0; i < n; i++) kill(getpid(), SIGUSR1);
    printf("hits %d\n", (int)hits);
    return 0;
  }
  if (!strcmp(mode, "threads")) {
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, spin, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    printf("threads done\n");
    return 0;
  }
  if (!strcmp(mode, "abort")) abort();
  fprintf(stderr, "usage: probe exit N | echo | crash | signals N | threads | abort\n");
  return 2;
}
