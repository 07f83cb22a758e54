/* test_symbols.c — unit tests of core/symbols.c on a bundled workload binary built with -g. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols.h"
#include "util.h"

/* Path of a bundled workload binary; skips the test when $WHATIF_WORKLOADS is unset. */
static char *workload(const char *name) {
  const char *dir = getenv("WHATIF_WORKLOADS");
  if (!dir) {
    skip();
    return NULL;
  }
  return xasprintf("%s/%s", dir, name);
}

/* Address of symbol name as `nm` reports it (an independent reader), or 0. */
static uint64_t nm_addr(const char *bin, const char *name) {
  char *cmd = xasprintf("nm '%s' 2>/dev/null", bin);
  int st = 0;
  char *out = tu_run(cmd, &st);
  free(cmd);
  uint64_t addr = 0;
  for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
    char type, sym[256];
    unsigned long long a;
    if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name)) addr = a;
  }
  free(out);
  return addr;
}

/* Line number (1-based) of the first line of path containing needle, or 0. */
static uint32_t source_line_of(const char *path, const char *needle) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  char buf[1024];
  uint32_t n = 0, found = 0;
  while (!found && fgets(buf, sizeof buf, f)) {
    n++;
    if (strstr(buf, needle)) found = n;
  }
  fclose(f);
  return found;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

static void test_check_elf(void **state) {
  (void)state;
  char *bin = workload("recursion");
  sym_elf_info info;
  wi_err err = {0};
  assert_int_equal(sym_check_elf(bin, &info, &err), WI_OK);
  assert_true(info.is_dyn); /* Debian's gcc builds PIE */
  assert_true(info.has_interp);
  assert_true(info.entry != 0);

  /* A text file is rejected with a message naming it. */
  char *txt = tu_tmp_path(".txt");
  FILE *f = fopen(txt, "w");
  assert_non_null(f);
  fputs("#!/bin/sh\necho hello\n", f);
  fclose(f);
  assert_int_equal(sym_check_elf(txt, NULL, &err), WI_EINVAL);
  assert_non_null(strstr(err.msg, "not an ELF"));
  assert_non_null(strstr(err.msg, txt));

  /* An ELF header for another machine is rejected as such. */
  uint8_t hdr[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  hdr[16] = 2;    /* ET_EXEC */
  hdr[18] = 183;  /* EM_AARCH64 */
  f = fopen(txt, "wb");
  fwrite(hdr, 1, sizeof hdr, f);
  fclose(f);
  assert_int_equal(sym_check_elf(txt, NULL, &err), WI_EINVAL);
  assert_non_null(strstr(err.msg, "aarch64"));
  remove(txt);
  free(txt);

  assert_int_equal(sym_check_elf("/nonexistent/whatif/prog", NULL, &err), WI_EIO);
  free(bin);
}

static void test_functions(void **state) {
  (void)state;
  char *bin = workload("recursion");
  uint64_t nm_main = nm_addr(bin, "main"), nm_walk = nm_addr(bin, "walk");
  assert_true(nm_main != 0);
  assert_true(nm_walk != 0);
  const uint64_t biases[] = {0, 0x555555554000ULL};
  for (size_t b = 0; b < WI_ARRAY_LEN(biases); b++) {
    wi_err err = {0};
    sym_file *sf = sym_open(bin, biases[b], &err);
    assert_non_null(sf);
    const sym_func *m = sym_func_by_name(sf, "main");
    const sym_func *w = sym_func_by_name(sf, "walk");
    assert_non_null(m);
    assert_non_null(w);
    assert_int_equal(m->addr, nm_main + biases[b]);
    assert_int_equal(w->addr, nm_walk + biases[b]);
    assert_true(w->size > 0);
    /* Lookup inside, at the start and just past the end. */
    assert_ptr_equal(sym_func_lookup(sf, w->addr), w);
    assert_ptr_equal(sym_func_lookup(sf, w->addr + w->size - 1), w);
    const sym_func *after = sym_func_lookup(sf, w->addr + w->size);
    assert_true(after != w);
    /* Sorted, one per address. */
    for (size_t i = 1; i < sym_n_funcs(sf); i++)
      assert_true(sym_func_at(sf, i - 1)->addr < sym_func_at(sf, i)->addr);
    /* main lies in an executable segment, and the segment's bytes are the file's bytes. */
    bool inside = false;
    for (size_t i = 0; i < sym_n_segments(sf); i++) {
      const sym_segment *s = sym_segment_at(sf, i);
      if (m->addr >= s->addr && m->addr < s->addr + s->size) inside = true;
      uint8_t *bytes = sym_segment_bytes(sf, i, &err);
      assert_non_null(bytes);
      FILE *f = fopen(bin, "rb");
      assert_non_null(f);
      uint8_t *want = xcalloc(1, (size_t)s->size);
      assert_int_equal(fseek(f, (long)s->file_off, SEEK_SET), 0);
      assert_int_equal(fread(want, 1, (size_t)s->file_size, f), s->file_size);
      fclose(f);
      assert_memory_equal(bytes, want, (size_t)s->size);
      free(want);
      free(bytes);
    }
    assert_true(inside);
    sym_close(sf);
  }
  free(bin);
}

/* Collects rows reported by sym_lines_in. */
typedef struct rows {
  uint64_t lo, hi, last;
  size_t n, in_file;
  uint32_t want_line;
  bool saw_want, ordered;
} rows;

static void on_row(void *ctx, uint64_t addr, const char *file, uint32_t line) {
  rows *r = ctx;
  assert_true(addr >= r->lo && addr < r->hi);
  if (r->n && addr <= r->last) r->ordered = false;
  r->last = addr;
  r->n++;
  if (ends_with(file, "recursion.c")) r->in_file++;
  if (line == r->want_line) r->saw_want = true;
}

static void test_lines(void **state) {
  (void)state;
  char *bin = workload("recursion");
  wi_err err = {0};
  const uint64_t bias = 0x7f0000000000ULL;
  sym_file *sf = sym_open(bin, bias, &err);
  assert_non_null(sf);
  assert_true(sym_has_lines(sf));
  const sym_func *w = sym_func_by_name(sf, "walk");
  assert_non_null(w);
  const char *file = NULL;
  uint32_t line = 0;
  assert_true(sym_line_at(sf, w->addr, &file, &line));
  assert_true(ends_with(file, "validate/workloads/recursion.c"));
  /* Every address of walk maps to the line binutils' addr2line (an independent reader of the
   * same tables) gives, and the entry lands within the function's first lines. */
  uint32_t def = source_line_of(file, "walk(const node *t, uint64_t path, uint64_t h, int depth) {");
  assert_true(def > 0);
  assert_true(line >= def && line <= def + 2);
  for (uint64_t a = w->addr; a < w->addr + w->size; a += 3) {
    char *cmd = xasprintf("addr2line -e '%s' 0x%llx", bin, (unsigned long long)(a - bias));
    int st = 0;
    char *out = tu_run(cmd, &st);
    free(cmd);
    char *colon = strrchr(out, ':');
    assert_non_null(colon);
    uint32_t want = (uint32_t)strtoul(colon + 1, NULL, 10);
    if (want) { /* addr2line prints ?:0 (or :?) where it has nothing */
      assert_true(sym_line_at(sf, a, &file, &line));
      assert_int_equal(line, want);
    }
    free(out);
  }
  /* An address below every executable segment has no line. */
  assert_false(sym_line_at(sf, bias, &file, &line));

  /* The rows of walk's range include the line of the first data-dependent branch. */
  rows r = {.lo = w->addr, .hi = w->addr + w->size, .ordered = true};
  r.want_line = source_line_of(file, "if (m & 1) s = rare(s, 1);");
  assert_true(r.want_line > 0);
  size_t n = sym_lines_in(sf, r.lo, r.hi, on_row, &r);
  assert_int_equal(n, r.n);
  assert_true(n >= 4);
  assert_int_equal(r.in_file, n);
  assert_true(r.saw_want);
  assert_true(r.ordered);
  sym_close(sf);
  free(bin);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_check_elf),
    cmocka_unit_test(test_functions),
    cmocka_unit_test(test_lines),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
