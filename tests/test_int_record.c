/* test_int_record.c — integration tests of `whatif record`: determinism, passthrough, exit
 * statuses, bad inputs, crashes, --skip/--max, regions of interest, threads, signals, and
 * the finalized trace's symbols, lines and code regions. Runs the real recorder under QEMU on
 * the bundled workloads ($WHATIF_WORKLOADS) and the probe helper. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"
#include "util.h"

/* ---- helpers ------------------------------------------------------------------------------- */

typedef struct rec_env {
  const char *bin, *wl, *home;
  char *dir; /* a fresh temporary directory for this test's files */
} rec_env;

static void rm_rf(const char *dir) {
  char *cmd = xasprintf("rm -rf '%s'", dir);
  int st;
  free(tu_run(cmd, &st));
  free(cmd);
}

static int setup(void **state) {
  rec_env *e = xcalloc(1, sizeof *e);
  e->bin = getenv("WHATIF_BIN");
  e->wl = getenv("WHATIF_WORKLOADS");
  e->home = getenv("WHATIF_HOME");
  char tmpl[] = "/tmp/whatif-rec-XXXXXX";
  const char *t = getenv("TMPDIR");
  char *pattern = t ? xasprintf("%s/whatif-rec-XXXXXX", t) : xstrdup(tmpl);
  e->dir = mkdtemp(pattern) ? pattern : NULL;
  if (!e->dir) free(pattern);
  *state = e;
  return 0;
}

static int teardown(void **state) {
  rec_env *e = *state;
  if (e->dir) {
    rm_rf(e->dir);
    free(e->dir);
  }
  free(e);
  return 0;
}

static rec_env *env_or_skip(void **state) {
  rec_env *e = *state;
  if (!e->bin || !e->wl || !e->home || !e->dir) skip();
  return e;
}

static char *wl_path(const rec_env *e, const char *name) { return xasprintf("%s/%s", e->wl, name); }
static char *tmp_file(const rec_env *e, const char *name) { return xasprintf("%s/%s", e->dir, name); }

static bool file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0;
}

/* Number of entries in the test directory (leftover temporaries show up here). */
static int dir_entries(const rec_env *e) {
  char *cmd = xasprintf("ls -A '%s' | wc -l", e->dir);
  int st;
  char *out = tu_run(cmd, &st);
  int n = atoi(out);
  free(out);
  free(cmd);
  return n;
}

/* Run `whatif record ARGS` (ARGS already quoted) with optional stdin text and environment
 * prefix; returns the exit status, *out its stdout, *errtxt its stderr (both malloc'd). */
static int record(const rec_env *e, const char *envp, const char *stdin_text, const char *args,
                  char **out, char **errtxt) {
  char *errfile = tmp_file(e, "stderr.txt");
  char *cmd = xasprintf("%s%s '%s' record %s 2>'%s'%s%s%s", envp ? envp : "", envp ? " " : "",
                        e->bin, args, errfile, stdin_text ? " <<'EOF'\n" : " </dev/null",
                        stdin_text ? stdin_text : "", stdin_text ? "EOF\n" : "");
  int st = 0;
  char *o = tu_run(cmd, &st);
  char *etxt = NULL;
  size_t n;
  if (read_file(errfile, &etxt, &n, NULL) != WI_OK) etxt = xstrdup("");
  unlink(errfile);
  free(cmd);
  free(errfile);
  if (out) *out = o;
  else free(o);
  if (errtxt) *errtxt = etxt;
  else free(etxt);
  return st;
}

static trace_t *open_ok(const char *path) {
  wi_err err = {0};
  trace_t *t = trace_open(path, &err);
  if (!t) fail_msg("trace_open(%s): %s", path, err.msg);
  return t;
}

/* Assert that two traces hold the same dynamic stream (every raw instruction, its flags, next
 * PC and memory accesses), comparing from a's index a_from over n instructions (all if n is
 * 0) against b from its start. The TI_LAST flag and the very last next_pc are compared only
 * when whole traces are compared. */
static void same_stream(const char *pa, const char *pb, uint64_t a_from, uint64_t n) {
  trace_t *ta = open_ok(pa), *tb = open_ok(pb);
  const trace_info *ia = trace_get_info(ta), *ib = trace_get_info(tb);
  bool whole = a_from == 0 && n == 0;
  if (whole) {
    assert_int_equal(ia->n_raw, ib->n_raw);
    assert_int_equal(ia->n_insns, ib->n_insns);
    assert_int_equal(ia->end_pc, ib->end_pc);
    n = ia->n_raw;
  }
  assert_true(a_from + n <= ia->n_raw);
  assert_true(n <= ib->n_raw);
  trace_cursor *ca = trace_cursor_new(ta, TRACE_CUR_RAW), *cb = trace_cursor_new(tb, TRACE_CUR_RAW);
  wi_err err = {0};
  assert_int_equal(trace_cursor_seek(ca, a_from, &err), WI_OK);
  trace_batch ba = {0}, bb = {0};
  size_t ia_i = 0, ib_i = 0;
  for (uint64_t k = 0; k < n; k++) {
    if (ia_i == ba.n) {
      assert_int_equal(trace_cursor_next(ca, &ba, &err), WI_OK);
      assert_true(ba.n > 0);
      ia_i = 0;
    }
    if (ib_i == bb.n) {
      assert_int_equal(trace_cursor_next(cb, &bb, &err), WI_OK);
      assert_true(bb.n > 0);
      ib_i = 0;
    }
    const trace_insn *x = &ba.insns[ia_i++], *y = &bb.insns[ib_i++];
    bool last = k + 1 == n;
    if (x->pc != y->pc) fail_msg("instruction %llu: pc %llx vs %llx", (unsigned long long)k, (unsigned long long)x->pc, (unsigned long long)y->pc);
    if (!last || whole) {
      assert_int_equal(x->next_pc, y->next_pc);
      assert_int_equal(x->flags, y->flags);
    } else {
      assert_int_equal(x->flags & ~(unsigned)(TI_LAST | TI_TAKEN | TI_ASYNC), y->flags & ~(unsigned)(TI_LAST | TI_TAKEN | TI_ASYNC));
    }
    assert_int_equal(x->len, y->len);
    assert_int_equal(x->n_mem, y->n_mem);
    for (unsigned j = 0; j < x->n_mem; j++) {
      const trace_mem *mx = &ba.mems[x->mem_off + j], *my = &bb.mems[y->mem_off + j];
      if (mx->addr != my->addr || mx->size != my->size || mx->is_store != my->is_store)
        fail_msg("instruction %llu access %u: %llx/%u/%u vs %llx/%u/%u", (unsigned long long)k, j,
                 (unsigned long long)mx->addr, mx->size, mx->is_store, (unsigned long long)my->addr,
                 my->size, my->is_store);
    }
  }
  trace_cursor_free(ca);
  trace_cursor_free(cb);
  trace_close(ta);
  trace_close(tb);
}

/* The address of the trace's symbol `name`, or 0. */
static uint64_t sym_addr(const trace_t *t, const char *name) {
  for (size_t i = 0; i < trace_n_syms(t); i++)
    if (!strcmp(trace_sym_at(t, i)->name, name)) return trace_sym_at(t, i)->addr;
  return 0;
}

/* The last raw instruction of t. */
static trace_insn last_insn(const trace_t *t) {
  trace_cursor *c = trace_cursor_new(t, TRACE_CUR_RAW);
  wi_err err = {0};
  assert_int_equal(trace_cursor_seek(c, trace_get_info(t)->n_raw - 1, &err), WI_OK);
  trace_batch b;
  assert_int_equal(trace_cursor_next(c, &b, &err), WI_OK);
  assert_true(b.n >= 1);
  trace_insn x = b.insns[b.n - 1];
  trace_cursor_free(c);
  return x;
}

/* One line of workloads.txt. */
typedef struct wl_line {
  char name[64], test_args[128];
} wl_line;

static size_t read_workloads(const rec_env *e, wl_line *out, size_t cap) {
  char *path = xasprintf("%s/validate/workloads/workloads.txt", e->home);
  char *text = NULL;
  size_t n = 0, count = 0;
  assert_int_equal(read_file(path, &text, &n, NULL), WI_OK);
  for (char *line = strtok(text, "\n"); line && count < cap; line = strtok(NULL, "\n")) {
    if (line[0] == '#' || !line[0]) continue;
    char *t1 = strchr(line, '\t');
    char *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    assert_non_null(t2);
    *t1 = 0;
    snprintf(out[count].name, sizeof out[count].name, "%s", line);
    snprintf(out[count].test_args, sizeof out[count].test_args, "%s", t2 + 1);
    count++;
  }
  free(text);
  free(path);
  return count;
}

/* ---- tests ----------------------------------------------------------------------------------- */

/* Every bundled workload, recorded twice, gives the same dynamic stream; its output passes
 * through unchanged (same as a native run) and whatif exits with its status. */
static void test_deterministic_and_passthrough(void **state) {
  rec_env *e = env_or_skip(state);
  wl_line wls[32];
  size_t n = read_workloads(e, wls, 32);
  assert_true(n >= 7);
  for (size_t i = 0; i < n; i++) {
    char *prog = wl_path(e, wls[i].name), *a = tmp_file(e, "a.wtr"), *b = tmp_file(e, "b.wtr");
    char *native_cmd = xasprintf("'%s' %s", prog, wls[i].test_args);
    int st = 0;
    char *native = tu_run(native_cmd, &st);
    assert_int_equal(st, 0);
    char *args = xasprintf("-o '%s' -- '%s' %s", a, prog, wls[i].test_args);
    char *out1 = NULL, *out2 = NULL;
    assert_int_equal(record(e, NULL, NULL, args, &out1, NULL), 0);
    free(args);
    args = xasprintf("-o '%s' -- '%s' %s", b, prog, wls[i].test_args);
    assert_int_equal(record(e, NULL, NULL, args, &out2, NULL), 0);
    assert_string_equal(out1, native);
    assert_string_equal(out2, native);
    same_stream(a, b, 0, 0);
    unlink(a);
    unlink(b);
    free(args);
    free(out1);
    free(out2);
    free(native);
    free(native_cmd);
    free(prog);
    free(a);
    free(b);
  }
  assert_int_equal(dir_entries(e), 0); /* no temporaries left behind */
}

static void test_exit_status_and_stdin(void **state) {
  rec_env *e = env_or_skip(state);
  char *probe = wl_path(e, "probe"), *t = tmp_file(e, "p.wtr");
  char *args = xasprintf("-o '%s' -- '%s' exit 7", t, probe);
  char *out = NULL;
  assert_int_equal(record(e, NULL, NULL, args, &out, NULL), 7);
  assert_string_equal(out, "probe exit 7\n");
  trace_t *tr = open_ok(t);
  assert_string_equal(trace_meta(tr, "exit"), "7");
  trace_close(tr);
  free(out);
  free(args);
  args = xasprintf("-o '%s' -- '%s' echo", t, probe);
  assert_int_equal(record(e, NULL, "line one\nline two\n", args, &out, NULL), 0);
  assert_string_equal(out, "line one\nline two\n");
  free(out);
  free(args);
  unlink(t);
  free(t);
  free(probe);
}

/* Bad input: exit 2, one line naming the problem, no output file and no temporaries. */
static void expect_bad(const rec_env *e, const char *envp, const char *args, const char *needle) {
  char *errtxt = NULL;
  int st = record(e, envp, NULL, args, NULL, &errtxt);
  if (st != 2 || !strstr(errtxt, needle))
    fail_msg("whatif record %s: status %d, stderr '%s' (wanted status 2 and '%s')", args, st, errtxt, needle);
  assert_int_equal(dir_entries(e), 0);
  free(errtxt);
}

static void test_bad_inputs(void **state) {
  rec_env *e = env_or_skip(state);
  char *t = tmp_file(e, "out.wtr"), *probe = wl_path(e, "probe");
  char *args = xasprintf("-o '%s' -- /nonexistent/whatif/prog", t);
  expect_bad(e, NULL, args, "/nonexistent/whatif/prog");
  free(args);
  args = xasprintf("-o '%s' -- no_such_program_whatif_test", t);
  expect_bad(e, NULL, args, "not found in PATH");
  free(args);

  /* An executable script and an executable ELF file for another machine. */
  char *dir2 = xasprintf("%s.inputs", e->dir);
  mkdir(dir2, 0700);
  char *script = xasprintf("%s/script.sh", dir2), *arm = xasprintf("%s/arm.elf", dir2);
  FILE *f = fopen(script, "w");
  assert_non_null(f);
  fputs("#!/bin/sh\necho hi\n", f);
  fclose(f);
  chmod(script, 0755);
  uint8_t hdr[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  hdr[16] = 2;   /* ET_EXEC */
  hdr[18] = 183; /* EM_AARCH64 */
  f = fopen(arm, "wb");
  assert_non_null(f);
  fwrite(hdr, 1, sizeof hdr, f);
  fclose(f);
  chmod(arm, 0755);
  args = xasprintf("-o '%s' -- '%s'", t, script);
  expect_bad(e, NULL, args, "not an ELF file");
  free(args);
  args = xasprintf("-o '%s' -- '%s'", t, arm);
  expect_bad(e, NULL, args, "not x86-64");
  free(args);

  /* Unwritable output (checked before running: the program's output must not appear). */
  args = xasprintf("-o /nonexistent/whatif/dir/out.wtr -- '%s' exit 0", probe);
  char *out = NULL, *errtxt = NULL;
  assert_int_equal(record(e, NULL, NULL, args, &out, &errtxt), 2);
  assert_non_null(strstr(errtxt, "cannot write /nonexistent/whatif/dir/out.wtr"));
  assert_string_equal(out, "");
  free(out);
  free(errtxt);
  free(args);

  /* QEMU missing from PATH. */
  args = xasprintf("-o '%s' -- '%s' exit 0", t, probe);
  expect_bad(e, "env -u WHATIF_QEMU PATH=/nonexistent", args, "apt-get install qemu-user");
  /* A plugin QEMU refuses to load. */
  char *envp = xasprintf("WHATIF_PLUGIN='%s'", script);
  expect_bad(e, envp, args, "plugin did not start");
  free(envp);
  /* Unknown function and an ROI without marks: an empty trace is an error. */
  free(args);
  args = xasprintf("-o '%s' --roi func:no_such_function -- '%s' exit 0", t, probe);
  expect_bad(e, NULL, args, "no function 'no_such_function'");
  free(args);
  args = xasprintf("-o '%s' --roi ssc -- '%s' exit 0", t, probe);
  expect_bad(e, NULL, args, "empty trace");
  free(args);
  assert_false(file_exists(t));
  rm_rf(dir2);
  free(dir2);
  free(script);
  free(arm);
  free(probe);
  free(t);
}

/* A program killed by a signal: its output so far passes through, whatif exits 2 and names the
 * signal, and the trace up to the crash is written and valid. */
static void test_crash(void **state) {
  rec_env *e = env_or_skip(state);
  char *t = tmp_file(e, "crash.wtr"), *probe = wl_path(e, "probe");
  char *args = xasprintf("-o '%s' -- '%s' crash", t, probe);
  char *out = NULL, *errtxt = NULL;
  assert_int_equal(record(e, NULL, NULL, args, &out, &errtxt), 2);
  assert_string_equal(out, "before crash\n");
  assert_non_null(strstr(errtxt, "signal 11"));
  trace_t *tr = open_ok(t);
  wi_err err = {0};
  assert_int_equal(trace_verify(tr, &err), WI_OK);
  assert_non_null(strstr(trace_meta(tr, "exit"), "signal 11"));
  assert_true(trace_get_info(tr)->n_raw > 1000);
  /* The last instruction recorded is the faulting load in crash(). */
  trace_insn last = last_insn(tr);
  const trace_sym *s = trace_sym_lookup(tr, last.pc);
  assert_non_null(s);
  assert_string_equal(s->name, "crash");
  trace_close(tr);
  free(out);
  free(errtxt);
  free(args);

  /* abort() (SIGABRT raised by the program itself) too. */
  args = xasprintf("-o '%s' -- '%s' abort", t, probe);
  assert_int_equal(record(e, NULL, NULL, args, NULL, &errtxt), 2);
  assert_non_null(strstr(errtxt, "signal 6"));
  tr = open_ok(t);
  assert_non_null(strstr(trace_meta(tr, "exit"), "signal 6"));
  trace_close(tr);
  free(errtxt);
  free(args);
  unlink(t);

  /* SIGKILL ends QEMU before the plugin can write: exit 2, one line that says so (not why an
   * internal temporary is empty), and no file left behind. */
  int before = dir_entries(e);
  args = xasprintf("-o '%s' -- '%s' kill", t, probe);
  assert_int_equal(record(e, NULL, NULL, args, &out, &errtxt), 2);
  assert_string_equal(out, "before kill\n");
  assert_non_null(strstr(errtxt, "killed by signal 9 (Killed), which ends QEMU at once: no trace was written"));
  assert_true(strchr(errtxt, '\n') == errtxt + strlen(errtxt) - 1); /* one line */
  assert_null(strstr(errtxt, ".raw."));
  assert_false(file_exists(t));
  assert_int_equal(dir_entries(e), before);
  free(out);
  free(errtxt);
  free(args);
  free(t);
  free(probe);
}

static void test_skip_max_exact(void **state) {
  rec_env *e = env_or_skip(state);
  char *prog = wl_path(e, "branchy"), *full = tmp_file(e, "full.wtr"), *win = tmp_file(e, "win.wtr");
  char *args = xasprintf("-o '%s' --max 200000 -- '%s' 4 65536", full, prog);
  char *out = NULL;
  assert_int_equal(record(e, NULL, NULL, args, &out, NULL), 0);
  assert_non_null(strstr(out, "filter checksum")); /* the program ran to its end */
  free(out);
  free(args);
  trace_t *t = open_ok(full);
  assert_int_equal(trace_get_info(t)->n_raw, 200000);
  assert_string_equal(trace_meta(t, "max"), "200000");
  trace_close(t);
  args = xasprintf("-o '%s' --skip 150000 --max 1000 -- '%s' 4 65536", win, prog);
  assert_int_equal(record(e, NULL, NULL, args, NULL, NULL), 0);
  free(args);
  t = open_ok(win);
  assert_int_equal(trace_get_info(t)->n_raw, 1000);
  trace_close(t);
  /* The window is exactly instructions [150000, 151000) of the full run. */
  same_stream(full, win, 150000, 1000);
  unlink(full);
  unlink(win);
  free(full);
  free(win);
  free(prog);
}

static void test_roi_ssc(void **state) {
  rec_env *e = env_or_skip(state);
  char *prog = wl_path(e, "branchy"), *t = tmp_file(e, "ssc.wtr");
  char *args = xasprintf("-o '%s' --roi ssc -- '%s' 2 4096", t, prog);
  assert_int_equal(record(e, NULL, NULL, args, NULL, NULL), 0);
  free(args);
  trace_t *tr = open_ok(t);
  const trace_info *ti = trace_get_info(tr);
  assert_string_equal(trace_meta(tr, "roi"), "ssc");
  /* The first instruction follows the start mark; execution stopped at the stop mark. */
  trace_cursor *c = trace_cursor_new(tr, TRACE_CUR_RAW);
  trace_batch b;
  wi_err err = {0};
  assert_int_equal(trace_cursor_next(c, &b, &err), WI_OK);
  uint64_t first = b.insns[0].pc;
  size_t avail = 0;
  const uint8_t *p = trace_code_at(tr, first - 8, &avail);
  assert_non_null(p);
  assert_true(avail >= 8);
  const uint8_t start_mark[8] = {0xbb, 0x6f, 0, 0, 0, 0x64, 0x67, 0x90};
  assert_memory_equal(p, start_mark, 8);
  p = trace_code_at(tr, ti->end_pc - 5, &avail);
  assert_non_null(p);
  const uint8_t stop_mark[8] = {0xbb, 0xde, 0, 0, 0, 0x64, 0x67, 0x90};
  assert_memory_equal(p, stop_mark, 8);
  /* Everything in between is main's filter loop: 2 passes over 4096 bytes. */
  const trace_sym *m = trace_sym_lookup(tr, first);
  assert_non_null(m);
  assert_string_equal(m->name, "main");
  uint64_t k = 0;
  do {
    for (size_t i = 0; i < b.n; i++, k++) assert_ptr_equal(trace_sym_lookup(tr, b.insns[i].pc), m);
  } while (trace_cursor_next(c, &b, &err) == WI_OK && b.n);
  assert_int_equal(k, ti->n_raw);
  assert_true(ti->n_raw > 2 * 4096 * 4 && ti->n_raw < 2 * 4096 * 8);
  trace_cursor_free(c);
  trace_close(tr);
  unlink(t);
  free(t);
  free(prog);
}

static void test_roi_func(void **state) {
  rec_env *e = env_or_skip(state);
  char *prog = wl_path(e, "recursion"), *t = tmp_file(e, "func.wtr");
  char *args = xasprintf("-o '%s' --roi func:walk -- '%s' 20 4096", t, prog);
  assert_int_equal(record(e, NULL, NULL, args, NULL, NULL), 0);
  free(args);
  trace_t *tr = open_ok(t);
  uint64_t walk = sym_addr(tr, "walk");
  assert_true(walk != 0);
  trace_cursor *c = trace_cursor_new(tr, TRACE_CUR_RAW);
  trace_batch b;
  wi_err err = {0};
  uint64_t calls = 0, rets = 0, first = 0, k = 0;
  trace_insn last = {0};
  while (trace_cursor_next(c, &b, &err) == WI_OK && b.n) {
    for (size_t i = 0; i < b.n; i++, k++) {
      const trace_insn *x = &b.insns[i];
      if (k == 0) first = x->pc;
      int br = trace_decoded(tr, x->sid)->br;
      calls += br_is_call(br);
      rets += br == BR_RET;
      last = *x;
    }
  }
  assert_int_equal(err.rc, WI_OK);
  assert_int_equal(first, walk);                   /* starts at the function's entry */
  assert_int_equal(trace_decoded(tr, last.sid)->br, BR_RET); /* ends with its return */
  assert_int_equal(rets, calls + 1);               /* balanced inside, plus the final return */
  assert_true(calls > 10);                         /* a real recursive walk */
  assert_true(trace_sym_lookup(tr, last.next_pc) != trace_sym_lookup(tr, walk)); /* back in main */
  trace_cursor_free(c);
  trace_close(tr);
  unlink(t);
  free(t);
  free(prog);
}

static void test_threads_and_signals(void **state) {
  rec_env *e = env_or_skip(state);
  char *probe = wl_path(e, "probe"), *t = tmp_file(e, "th.wtr");
  char *args = xasprintf("-o '%s' -- '%s' threads", t, probe);
  char *out = NULL, *errtxt = NULL;
  assert_int_equal(record(e, NULL, NULL, args, &out, &errtxt), 0);
  assert_string_equal(out, "threads done\n");
  assert_non_null(strstr(errtxt, "whatif: program started threads; recording the first thread only"));
  trace_t *tr = open_ok(t);
  assert_string_equal(trace_meta(tr, "threads"), "3 seen; first recorded");
  trace_close(tr);
  free(out);
  free(errtxt);
  free(args);

  /* Three handled signals: each delivery and each sigreturn is an asynchronous transfer. */
  args = xasprintf("-o '%s' -- '%s' signals 3", t, probe);
  assert_int_equal(record(e, NULL, NULL, args, &out, NULL), 0);
  assert_string_equal(out, "hits 3\n");
  tr = open_ok(t);
  trace_cursor *c = trace_cursor_new(tr, TRACE_CUR_RAW);
  trace_batch b;
  wi_err err = {0};
  uint64_t async = 0;
  while (trace_cursor_next(c, &b, &err) == WI_OK && b.n)
    for (size_t i = 0; i < b.n; i++) async += (b.insns[i].flags & TI_ASYNC) != 0;
  assert_int_equal(async, 6);
  trace_cursor_free(c);
  trace_close(tr);
  free(out);
  free(args);
  unlink(t);
  free(t);
  free(probe);
}

/* getrandom(2) returns the same bytes in every recording with the same --seed (QEMU's -seed does
 * not cover it: Python's hash secret made each recording of a Python program differ), and
 * other bytes with another seed. */
static void test_seeded_getrandom(void **state) {
  rec_env *e = env_or_skip(state);
  char *probe = wl_path(e, "probe"), *t = tmp_file(e, "rnd.wtr");
  char *out[3] = {NULL, NULL, NULL};
  for (int i = 0; i < 3; i++) {
    char *args = xasprintf("-q -o '%s' --seed %d -- '%s' random", t, i == 2 ? 9 : 4, probe);
    assert_int_equal(record(e, NULL, NULL, args, &out[i], NULL), 0);
    assert_int_equal(strlen(out[i]), 33);
    free(args);
  }
  assert_string_equal(out[0], out[1]);
  assert_string_not_equal(out[0], out[2]);
  for (int i = 0; i < 3; i++) free(out[i]);
  unlink(t);
  free(t);
  free(probe);
}

/* Records the probe's plain run into t and checks the recorder said nothing (the notes and
 * warnings the tests below look for appear only when their cause does). */
static void record_plain_quiet(rec_env *e, const char *t, const char *probe) {
  char *args = xasprintf("-q -o '%s' -- '%s' exit 0", t, probe), *errtxt = NULL;
  assert_int_equal(record(e, NULL, NULL, args, NULL, &errtxt), 0);
  assert_string_equal(errtxt, "");
  free(errtxt);
  free(args);
}

/* Code the program rewrites after running it (a JIT reusing an address) cannot be told apart in
 * the trace, which keeps an instruction's first bytes: the recorder warns in one line and says so
 * in the metadata; a program that does not has no such key. */
static void test_rewritten_code(void **state) {
  rec_env *e = env_or_skip(state);
  char *probe = wl_path(e, "probe"), *t = tmp_file(e, "rw.wtr");
  char *args = xasprintf("-q -o '%s' -- '%s' rewrite", t, probe);
  char *out = NULL, *errtxt = NULL;
  assert_int_equal(record(e, NULL, NULL, args, &out, &errtxt), 0);
  assert_string_equal(out, "rewrite 19900\n");
  assert_non_null(strstr(errtxt, "whatif: warning: the program rewrote code it had run"));
  assert_true(strchr(errtxt, '\n') == errtxt + strlen(errtxt) - 1); /* one line */
  trace_t *tr = open_ok(t);
  assert_non_null(trace_meta(tr, "rewritten"));
  trace_close(tr);
  free(out);
  free(errtxt);
  free(args);
  record_plain_quiet(e, t, probe);
  tr = open_ok(t);
  assert_null(trace_meta(tr, "rewritten"));
  trace_close(tr);
  unlink(t);
  free(t);
  free(probe);
}

/* A program that execs another (a wrapper script, a launcher) ends its trace at the execve: the
 * recorder says so in one line, even with -q; the exec'd program's output still passes through. */
static void test_exec_note(void **state) {
  rec_env *e = env_or_skip(state);
  char *probe = wl_path(e, "probe"), *t = tmp_file(e, "ex.wtr");
  char *args = xasprintf("-q -o '%s' -- /bin/sh -c 'exec \"%s\" exit 3'", t, probe);
  char *out = NULL, *errtxt = NULL;
  assert_int_equal(record(e, NULL, NULL, args, &out, &errtxt), 3);
  assert_string_equal(out, "probe exit 3\n");
  assert_non_null(strstr(errtxt, "called execve; the trace ends there"));
  assert_true(strchr(errtxt, '\n') == errtxt + strlen(errtxt) - 1); /* one line */
  free(out);
  free(errtxt);
  free(args);
  record_plain_quiet(e, t, probe);
  unlink(t);
  free(t);
  free(probe);
}

/* Instructions that cross a page boundary (probe pagecross: a 3-byte add at a page's last byte,
 * a 6-byte jl rel32 over the next page end, each after the first instruction of its block) keep
 * their whole bytes: QEMU 7.2 first shows a plugin only their first page's bytes. Every
 * executed instruction of the trace decodes (the dynamic loader has such instructions too),
 * and each one's bytes are those of the code image. */
static void test_page_crossing(void **state) {
  rec_env *e = env_or_skip(state);
  char *probe = wl_path(e, "probe"), *t = tmp_file(e, "pc.wtr");
  char *args = xasprintf("-o '%s' -- '%s' pagecross 3", t, probe);
  char *out = NULL;
  assert_int_equal(record(e, NULL, NULL, args, &out, NULL), 0);
  assert_string_equal(out, "pagecross 3\n");
  trace_t *tr = open_ok(t);
  uint64_t f = sym_addr(tr, "probe_pagecross");
  assert_true(f != 0);
  const struct { uint64_t off; uint8_t len; } want[] = {{4095, 3}, {8190, 6}};
  for (size_t i = 0; i < WI_ARRAY_LEN(want); i++) {
    uint32_t sid = trace_sid_of(tr, f + want[i].off);
    assert_true(sid != UINT32_MAX);
    assert_int_equal(trace_static_at(tr, sid)->len, want[i].len);
    assert_int_equal(trace_static_at(tr, sid)->count, 3);
  }
  const trace_info *in = trace_get_info(tr);
  for (uint32_t sid = 0; sid < in->n_static; sid++) {
    const trace_static *s = trace_static_at(tr, sid);
    if (trace_decoded(tr, sid)->flags & DF_INVALID)
      fail_msg("0x%llx (%u bytes) does not decode", (unsigned long long)s->pc, s->len);
    size_t avail = 0;
    const uint8_t *code = trace_code_at(tr, s->pc, &avail);
    if (code && avail >= s->len) assert_memory_equal(code, s->bytes, s->len);
  }
  trace_close(tr);
  unlink(t);
  free(t);
  free(out);
  free(args);
  free(probe);
}

/* The finalized trace carries metadata, code regions, symbols and source lines. */
static void test_finalized_content(void **state) {
  rec_env *e = env_or_skip(state);
  char *prog = wl_path(e, "recursion"), *t = tmp_file(e, "fin.wtr");
  char *args = xasprintf("-o '%s' --seed 5 -- '%s' 200 4096", t, prog);
  assert_int_equal(record(e, NULL, NULL, args, NULL, NULL), 0);
  free(args);
  trace_t *tr = open_ok(t);
  const char *keys[] = {"program", "args", "recorder", "qemu", "date", "threads", "exit", "roi", "seed"};
  for (size_t i = 0; i < WI_ARRAY_LEN(keys); i++) assert_non_null(trace_meta(tr, keys[i]));
  char *real = realpath(prog, NULL);
  assert_string_equal(trace_meta(tr, "program"), real);
  free(real);
  char *want_args = xasprintf("[\"%s\",\"200\",\"4096\"]", prog);
  assert_string_equal(trace_meta(tr, "args"), want_args);
  free(want_args);
  assert_string_equal(trace_meta(tr, "seed"), "5");
  assert_string_equal(trace_meta(tr, "roi"), "all");
  assert_int_equal(strlen(trace_meta(tr, "date")), 20); /* 2024-01-02T03:04:05Z */
  assert_non_null(strstr(trace_meta(tr, "qemu"), "qemu-x86_64 version"));
  /* Objects: the program, the dynamic loader and libc, each with code bytes. */
  bool saw_main = false;
  for (size_t i = 0; i < trace_n_objects(tr); i++) {
    const trace_object *o = trace_object_at(tr, i);
    saw_main |= strstr(o->path, "/recursion") != NULL;
    size_t avail = 0;
    assert_non_null(trace_code_at(tr, o->lo, &avail));
  }
  assert_true(saw_main);
  assert_true(trace_n_objects(tr) >= 3);
  /* walk: symbol, bytes identical to what executed, and its source line. */
  uint64_t walk = sym_addr(tr, "walk");
  assert_true(walk != 0);
  uint32_t sid = trace_sid_of(tr, walk);
  assert_true(sid != UINT32_MAX);
  const trace_static *s = trace_static_at(tr, sid);
  size_t avail = 0;
  const uint8_t *code = trace_code_at(tr, walk, &avail);
  assert_non_null(code);
  assert_true(avail >= s->len);
  assert_memory_equal(code, s->bytes, s->len);
  const char *file = NULL;
  uint32_t line = 0;
  assert_true(trace_line_lookup(tr, walk, &file, &line));
  assert_non_null(strstr(file, "validate/workloads/recursion.c"));
  assert_true(line > 20 && line < 40);
  /* libc's functions are named too (from its dynamic symbols). */
  assert_true(sym_addr(tr, "malloc") != 0 || sym_addr(tr, "__libc_malloc") != 0);
  trace_close(tr);
  unlink(t);
  free(t);
  free(prog);
}

/* The launcher opens objects (symbols, DWARF, code bytes) while the program runs, as the
 * plugin reports them; the trace must be exactly what finalize alone writes. The switch has
 * the same length in both runs: the program's environment (and so its stream) is the same. */
static void test_prep_same_content(void **state) {
  rec_env *e = env_or_skip(state);
  char *prog = wl_path(e, "recursion"), *a = tmp_file(e, "prep1.wtr"), *b = tmp_file(e, "prep0.wtr");
  char *args = xasprintf("-o '%s' -- '%s' 200 64", a, prog);
  char *errtxt = NULL;
  assert_int_equal(record(e, "WHATIF_RECORD_PREP=1 WHATIF_RECORD_TIMING=1", NULL, args, NULL, &errtxt), 0);
  assert_non_null(strstr(errtxt, "timing: qemu + plugin")); /* the phase timing is printed */
  assert_non_null(strstr(errtxt, "timing: total"));
  assert_non_null(strstr(errtxt, "libc.so.6 (opened while running)")); /* the plugin told it */
  free(errtxt);
  free(args);
  args = xasprintf("-o '%s' -- '%s' 200 64", b, prog);
  assert_int_equal(record(e, "WHATIF_RECORD_PREP=0 WHATIF_RECORD_TIMING=1", NULL, args, NULL, &errtxt), 0);
  assert_null(strstr(errtxt, "(opened while running)"));
  free(errtxt);
  free(args);
  same_stream(a, b, 0, 0);
  trace_t *ta = open_ok(a), *tb = open_ok(b);
  assert_int_equal(trace_n_objects(ta), trace_n_objects(tb));
  for (size_t i = 0; i < trace_n_objects(ta); i++) {
    assert_string_equal(trace_object_at(ta, i)->path, trace_object_at(tb, i)->path);
    assert_int_equal(trace_object_at(ta, i)->bias, trace_object_at(tb, i)->bias);
  }
  assert_int_equal(trace_n_regions(ta), trace_n_regions(tb));
  assert_true(trace_n_regions(ta) >= 3);
  for (size_t i = 0; i < trace_n_regions(ta); i++) {
    const trace_region *ra = trace_region_at(ta, i), *rb = trace_region_at(tb, i);
    assert_int_equal(ra->base, rb->base);
    assert_int_equal(ra->size, rb->size);
    assert_memory_equal(ra->bytes, rb->bytes, ra->size);
  }
  assert_int_equal(trace_n_syms(ta), trace_n_syms(tb));
  for (size_t i = 0; i < trace_n_syms(ta); i++) {
    assert_int_equal(trace_sym_at(ta, i)->addr, trace_sym_at(tb, i)->addr);
    assert_string_equal(trace_sym_at(ta, i)->name, trace_sym_at(tb, i)->name);
  }
  const trace_info *ia = trace_get_info(ta);
  assert_int_equal(ia->n_static, trace_get_info(tb)->n_static);
  size_t with_line = 0;
  for (uint32_t sid = 0; sid < ia->n_static; sid++) {
    uint64_t pc = trace_static_at(ta, sid)->pc;
    assert_int_equal(trace_static_at(tb, trace_sid_of(tb, pc))->count, trace_static_at(ta, sid)->count);
    const char *fa = NULL, *fb = NULL;
    uint32_t la = 0, lb = 0;
    bool ha = trace_line_lookup(ta, pc, &fa, &la), hb = trace_line_lookup(tb, pc, &fb, &lb);
    assert_int_equal(ha, hb);
    if (ha) {
      assert_string_equal(fa, fb);
      assert_int_equal(la, lb);
      with_line++;
    }
  }
  assert_true(with_line > 0);
  trace_close(ta);
  trace_close(tb);
  unlink(a);
  unlink(b);
  free(a);
  free(b);
  free(prog);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_deterministic_and_passthrough, setup, teardown),
    cmocka_unit_test_setup_teardown(test_exit_status_and_stdin, setup, teardown),
    cmocka_unit_test_setup_teardown(test_bad_inputs, setup, teardown),
    cmocka_unit_test_setup_teardown(test_crash, setup, teardown),
    cmocka_unit_test_setup_teardown(test_skip_max_exact, setup, teardown),
    cmocka_unit_test_setup_teardown(test_roi_ssc, setup, teardown),
    cmocka_unit_test_setup_teardown(test_roi_func, setup, teardown),
    cmocka_unit_test_setup_teardown(test_threads_and_signals, setup, teardown),
    cmocka_unit_test_setup_teardown(test_page_crossing, setup, teardown),
    cmocka_unit_test_setup_teardown(test_seeded_getrandom, setup, teardown),
    cmocka_unit_test_setup_teardown(test_rewritten_code, setup, teardown),
    cmocka_unit_test_setup_teardown(test_exec_note, setup, teardown),
    cmocka_unit_test_setup_teardown(test_finalized_content, setup, teardown),
    cmocka_unit_test_setup_teardown(test_prep_same_content, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
