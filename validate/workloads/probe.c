/* probe.c — not a workload: a small program with one behaviour per mode, used by the
 * recorder's integration tests (tests/test_int_record.c) to check what `whatif record` passes
 * through and how it records exits, crashes, signals and threads.
 *
 * usage: probe exit N | echo | crash | signals N | threads | abort | pagecross N | random |
 *        rewrite | kill */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
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

/* int probe_pagecross(int n): a loop of n iterations whose instructions cross page boundaries
 * after the first instruction of their translation block (QEMU 7.2 ends the block before such
 * an instruction and then shows a plugin only the bytes on the first page): a 3-byte add at a
 * page's last byte, and a 6-byte jl rel32 that starts 2 bytes before the next page's end. */
__asm__(".pushsection .text.probe_pagecross,\"ax\",@progbits\n"
        ".balign 4096\n"
        ".globl probe_pagecross\n"
        ".type probe_pagecross,@function\n"
        "probe_pagecross:\n"
        "  xor %eax, %eax\n"
        "  jmp 1f\n"
        "  .org probe_pagecross + 4094, 0xcc\n"
        "1: nop\n"
        "  add $1, %eax\n" /* 83 c0 01 at offset 4095 */
        "  jmp 2f\n"
        "  .org probe_pagecross + 8188, 0xcc\n"
        "2: cmp %edi, %eax\n"
        "  jl 1b\n"        /* 0f 8c rel32 at offset 8190 */
        "  ret\n"
        ".size probe_pagecross, . - probe_pagecross\n"
        ".popsection\n");
int probe_pagecross(int n);

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
  if (!strcmp(mode, "kill")) { /* SIGKILL: QEMU cannot run anything before it dies */
    printf("before kill\n");
    fflush(stdout);
    kill(getpid(), SIGKILL);
  }
  if (!strcmp(mode, "pagecross")) {
    printf("pagecross %d\n", probe_pagecross(argc > 2 ? atoi(argv[2]) : 1));
    return 0;
  }
  if (!strcmp(mode, "random")) { /* 16 bytes of getrandom(2), in hex */
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) return 1;
    for (size_t i = 0; i < sizeof b; i++) printf("%02x", b[i]);
    printf("\n");
    return 0;
  }
  if (!strcmp(mode, "rewrite")) { /* JIT-style: run code, rewrite it in place, run it again */
    unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 1;
    static const unsigned char v1[] = {0x48, 0x8d, 0x47, 0x01, 0xc3};             /* lea rax, [rdi+1]; ret */
    static const unsigned char v2[] = {0x48, 0x6b, 0xc7, 0x03, 0xc3};             /* imul rax, rdi, 3; ret */
    long s = 0;
    for (int r = 0; r < 2; r++) {
      memcpy(p, r ? v2 : v1, sizeof v1);
      long (*f)(long);
      memcpy(&f, &p, sizeof f);
      for (long i = 0; i < 100; i++) s += f(i);
    }
    printf("rewrite %ld\n", s);
    return 0;
  }
  fprintf(stderr, "usage: probe exit N | echo | crash | signals N | threads | abort | pagecross N | random | rewrite | kill\n");
  return 2;
}
