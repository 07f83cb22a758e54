/* record.c — the recorder's launcher: checks its inputs, runs qemu-x86_64 with the whatif plugin
 * (the program's stdin/stdout/stderr pass through), then finalizes the plugin's raw trace into
 * the output .wtr: the dynamic stream copied as is, plus code regions, symbols, source lines
 * of executed functions and metadata. While QEMU runs, a thread opens the objects the plugin
 * reports (symbols, DWARF, code bytes), so finalize is short. Environment: WHATIF_RECORD_TIMING=1
 * prints the wall time of each phase on stderr; WHATIF_RECORD_PREP=0 turns the thread off. */

/* <signal.h> and <sys/wait.h> under _GNU_SOURCE declare RG_RAX, RG_RSP, ... (ucontext
 * register indices), which collide with insn.h's register families (via trace.h). Nothing
 * here needs GNU extensions, so use the POSIX + BSD feature set instead. */
#undef _GNU_SOURCE
#define _DEFAULT_SOURCE 1

#include "record.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbols.h"
#include "trace.h"

#ifndef WHATIF_VERSION
#define WHATIF_VERSION "unknown"
#endif

/* Lines of executed functions kept in a trace, at most (keeps finalize bounded). */
#define REC_MAX_LINES 4000000u

/* ---- phase timing (WHATIF_RECORD_TIMING=1 prints where the wall time went) --------------------- */

/* Wall-clock milestones of one rec_run; printed to stderr when the environment asks. */
typedef struct rec_timing {
  bool on;
  double last;     /* wi_now() at the previous mark (seconds) */
} rec_timing;

static void tm_start(rec_timing *tm) {
  const char *e = getenv("WHATIF_RECORD_TIMING");
  tm->on = e && *e && strcmp(e, "0") != 0;
  tm->last = wi_now();
}

/* Print the seconds since the previous mark under the name of the phase that just ended. */
static void tm_mark(rec_timing *tm, const char *phase) {
  double now = wi_now();
  if (tm && tm->on) fprintf(stderr, "whatif: timing: %-22s %8.3f s\n", phase, now - tm->last);
  if (tm) tm->last = now;
}

/* ---- finding things ------------------------------------------------------------------------ */

static bool is_exec_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

char *rec_which(const char *name, wi_err *err) {
  if (!name || !*name) {
    wi_fail(err, WI_EINVAL, "no program given");
    return NULL;
  }
  if (strchr(name, '/')) {
    struct stat st;
    if (stat(name, &st) != 0) {
      wi_fail(err, WI_EINVAL, "%s: %s", name, strerror(errno));
      return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
      wi_fail(err, WI_EINVAL, "%s: not a regular file", name);
      return NULL;
    }
    if (access(name, X_OK) != 0) {
      wi_fail(err, WI_EINVAL, "%s: not executable", name);
      return NULL;
    }
    return xstrdup(name);
  }
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/local/bin:/usr/bin:/bin";
  const char *p = path;
  for (;;) {
    const char *colon = strchr(p, ':');
    size_t n = colon ? (size_t)(colon - p) : strlen(p);
    char *cand = n ? xasprintf("%.*s/%s", (int)n, p, name) : xasprintf("./%s", name);
    if (is_exec_file(cand)) return cand;
    free(cand);
    if (!colon) break;
    p = colon + 1;
  }
  wi_fail(err, WI_EINVAL, "program '%s' not found in PATH", name);
  return NULL;
}

char *rec_find_plugin(const char *exe_dir, wi_err *err) {
  const char *env = getenv("WHATIF_PLUGIN");
  if (env && *env) {
    if (access(env, R_OK) == 0) return xstrdup(env);
    wi_fail(err, WI_ECHILD, "recorder plugin $WHATIF_PLUGIN=%s: %s", env, strerror(errno));
    return NULL;
  }
  const char *dir = exe_dir ? exe_dir : ".";
  char *cands[2] = {xasprintf("%s/core/plugin/whatif_plugin.so", dir),
                    xasprintf("%s/../lib/whatif/whatif_plugin.so", dir)};
  char *found = NULL;
  for (int i = 0; i < 2; i++) {
    if (!found && access(cands[i], R_OK) == 0) found = cands[i];
    else free(cands[i]);
  }
  if (!found)
    wi_fail(err, WI_ECHILD, "recorder plugin whatif_plugin.so not found in %s/core/plugin or "
            "%s/../lib/whatif (set WHATIF_PLUGIN)", dir, dir);
  return found;
}

/* ---- running a child ------------------------------------------------------------------------ */

/* First line of `argv[0] argv[1..]`'s standard output (malloc'd), or NULL. */
static char *first_line_of(char *const argv[]) {
  int fds[2];
  /* close-on-exec: a child forked concurrently (QEMU) must not hold the write end open */
  if (pipe(fds) != 0) return NULL;
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return NULL;
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 2);
    execv(argv[0], argv);
    _exit(127);
  }
  close(fds[1]);
  char buf[512];
  size_t n = 0;
  ssize_t r;
  while (n < sizeof buf - 1 && (r = read(fds[0], buf + n, sizeof buf - 1 - n)) > 0) n += (size_t)r;
  char drain[256]; /* let the child finish writing */
  while (read(fds[0], drain, sizeof drain) > 0) {
  }
  close(fds[0]);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  buf[n] = 0;
  buf[strcspn(buf, "\n")] = 0;
  return n ? xstrdup(buf) : NULL;
}

/* Append s to b with every ',' doubled (QEMU's option syntax escapes commas that way). */
static void append_escaped(char **b, const char *s) {
  size_t n = strlen(*b), extra = strlen(s);
  for (const char *p = s; *p; p++) extra += *p == ',';
  *b = xrealloc(*b, n + extra + 1);
  char *d = *b + n;
  for (const char *p = s; *p; p++) {
    *d++ = *p;
    if (*p == ',') *d++ = ',';
  }
  *d = 0;
}

static void append(char **b, const char *s) {
  size_t n = strlen(*b), m = strlen(s);
  *b = xrealloc(*b, n + m + 1);
  memcpy(*b + n, s, m + 1);
}

/* Run argv with the terminal's interrupts going to the child only (as a shell does); sets
 * *status to the raw wait status. An exec failure is reported through a close-on-exec pipe.
 * keep_fd (or -1) is a close-on-exec descriptor that the child keeps open across its exec. */
static wi_rc run_child(char *const argv[], int keep_fd, int *status, wi_err *err) {
  int fds[2];
  if (pipe(fds) != 0) return wi_fail(err, WI_ECHILD, "pipe: %s", strerror(errno));
  fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  fcntl(fds[1], F_SETFD, FD_CLOEXEC);
  fflush(NULL);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return wi_fail(err, WI_ECHILD, "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    /* No core file of QEMU (or of the guest, which QEMU would write) in the user's directory. */
    struct rlimit nocore = {0, 0};
    setrlimit(RLIMIT_CORE, &nocore);
    if (keep_fd >= 0) fcntl(keep_fd, F_SETFD, 0);
    /* A killed recorder takes QEMU with it (its trace is removed, nobody would read it). */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
    execv(argv[0], argv);
    int e = errno;
    ssize_t w = write(fds[1], &e, sizeof e);
    (void)w;
    _exit(127);
  }
  close(fds[1]);
  struct sigaction ign = {0}, old_int, old_quit;
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGINT, &ign, &old_int);
  sigaction(SIGQUIT, &ign, &old_quit);
  int exec_errno = 0;
  ssize_t r;
  while ((r = read(fds[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  close(fds[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR) {
      st = -1;
      break;
    }
  }
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGQUIT, &old_quit, NULL);
  if (r == (ssize_t)sizeof exec_errno)
    return wi_fail(err, WI_ECHILD, "cannot run %s: %s", argv[0], strerror(exec_errno));
  if (st == -1) return wi_fail(err, WI_ECHILD, "waiting for %s: %s", argv[0], strerror(errno));
  *status = st;
  return WI_OK;
}

/* ---- work done while QEMU runs ---------------------------------------------------------------- */

/* The launcher is idle while the program runs under QEMU, and finalize's fixed cost is mostly
 * libdw decompressing the debug sections of libc's separate debug file (~0.1-0.2 s here). So
 * a thread does that work during the run: the plugin writes one line "BIAS LO HI PATH" (hex)
 * to a pipe (plugin argument notify=FD) for every object it meets, and the thread opens each
 * one (symbols, DWARF, code bytes) ahead of finalize. It also runs `qemu --version`. Finalize
 * takes what it finds ready and does the rest itself, so the trace is the same either way. */

/* An object opened ahead of finalize. */
typedef struct rec_pre {
  char *path;
  uint64_t bias;
  sym_file *sf;   /* NULL if it could not be opened (finalize retries and warns) */
  uint8_t **seg;  /* bytes of executable segment i (NULL entry: finalize reads it) */
  size_t n_seg;
} rec_pre;

typedef struct rec_prep {
  pthread_t th;
  bool started;
  int notify_rd, notify_wr; /* plugin -> thread; notify_wr is close-on-exec (-1: no pipe) */
  int stop_rd, stop_wr;     /* launcher -> thread: the run is over */
  char *qemu;               /* for qemu --version (not owned) */
  char *qemu_version;       /* first line of its output (malloc'd) or NULL */
  VEC(rec_pre) objs;        /* owned by the thread until prep_stop returns */
} rec_prep;

static void prep_object(rec_prep *p, const char *line) {
  unsigned long long bias, lo, hi;
  int pos = 0;
  if (sscanf(line, "%llx %llx %llx %n", &bias, &lo, &hi, &pos) < 3 || !line[pos]) return;
  const char *path = line + pos;
  for (size_t i = 0; i < p->objs.n; i++)
    if (p->objs.a[i].bias == bias && !strcmp(p->objs.a[i].path, path)) return;
  rec_pre o = {.path = xstrdup(path), .bias = bias};
  wi_err err = {0};
  o.sf = sym_open(path, bias, &err);
  if (o.sf) {
    (void)sym_has_lines(o.sf); /* loads (decompresses) the DWARF now */
    o.n_seg = sym_n_segments(o.sf);
    o.seg = xcalloc(o.n_seg ? o.n_seg : 1, sizeof *o.seg);
    for (size_t i = 0; i < o.n_seg; i++) {
      wi_err e2 = {0};
      o.seg[i] = sym_segment_bytes(o.sf, i, &e2);
    }
  }
  VEC_PUSH(p->objs, o);
}

static void *prep_main(void *arg) {
  rec_prep *p = arg;
  char *vargv[] = {p->qemu, "--version", NULL};
  p->qemu_version = first_line_of(vargv);
  char buf[PATH_MAX + 128];
  size_t have = 0;
  bool stop = false;
  for (;;) {
    struct pollfd pf[2] = {{.fd = p->notify_rd, .events = POLLIN}, {.fd = p->stop_rd, .events = POLLIN}};
    /* Once stopped, take only what is already in the pipe (a forked child of the program
     * may hold the write end open forever). */
    int n = poll(pf, stop ? 1 : 2, stop ? 0 : -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (!stop && (pf[1].revents & (POLLIN | POLLHUP))) stop = true;
    if (!(pf[0].revents & (POLLIN | POLLHUP))) {
      if (stop) break;
      continue;
    }
    ssize_t r = read(p->notify_rd, buf + have, sizeof buf - 1 - have);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    have += (size_t)r;
    buf[have] = 0;
    char *line = buf, *nl;
    while ((nl = strchr(line, '\n')) != NULL) {
      *nl = 0;
      prep_object(p, line);
      line = nl + 1;
    }
    have -= (size_t)(line - buf);
    memmove(buf, line, have);
    if (have == sizeof buf - 1) have = 0; /* an over-long line: drop it */
  }
  return NULL;
}

/* Start the thread (runs `qemu --version` and opens objects the plugin reports). Without a
 * pipe or a thread, or with WHATIF_RECORD_PREP=0 in the environment (for comparisons), the
 * version is read here and nothing is opened ahead. */
static void prep_start(rec_prep *p, char *qemu) {
  p->qemu = qemu;
  int nfd[2] = {-1, -1}, sfd[2] = {-1, -1};
  const char *env = getenv("WHATIF_RECORD_PREP");
  bool want = !env || strcmp(env, "0") != 0;
  if (want && pipe(nfd) == 0) {
    /* The plugin's end sits at a high descriptor so that the program's own open() calls get
     * the same numbers as without it. */
    p->notify_wr = fcntl(nfd[1], F_DUPFD_CLOEXEC, 256);
    if (p->notify_wr < 0) p->notify_wr = fcntl(nfd[1], F_DUPFD_CLOEXEC, 3);
    close(nfd[1]);
    p->notify_rd = nfd[0];
    fcntl(p->notify_rd, F_SETFD, FD_CLOEXEC);
  }
  if (p->notify_wr >= 0 && pipe(sfd) == 0) {
    p->stop_rd = sfd[0];
    p->stop_wr = sfd[1];
    fcntl(sfd[0], F_SETFD, FD_CLOEXEC);
    fcntl(sfd[1], F_SETFD, FD_CLOEXEC);
    p->started = pthread_create(&p->th, NULL, prep_main, p) == 0;
  }
  if (!p->started) {
    if (p->notify_wr >= 0) close(p->notify_wr);
    p->notify_wr = -1;
    char *vargv[] = {qemu, "--version", NULL};
    p->qemu_version = first_line_of(vargv);
  }
}

/* The run is over: the thread finishes what the pipe holds, then ends. */
static void prep_signal(rec_prep *p) {
  if (p->started && p->stop_wr >= 0) {
    char c = 1;
    ssize_t w = write(p->stop_wr, &c, 1);
    (void)w;
    close(p->stop_wr);
    p->stop_wr = -1;
  }
}

/* Signal the thread and wait for it; then its results may be used. Idempotent. */
static void prep_stop(rec_prep *p) {
  prep_signal(p);
  if (p->started) {
    pthread_join(p->th, NULL);
    p->started = false;
  }
  int *fds[] = {&p->notify_rd, &p->notify_wr, &p->stop_rd, &p->stop_wr};
  for (size_t i = 0; i < WI_ARRAY_LEN(fds); i++) {
    if (*fds[i] >= 0) close(*fds[i]);
    *fds[i] = -1;
  }
}

/* The object opened ahead for (path, bias), or NULL. */
static rec_pre *prep_find(rec_prep *p, const char *path, uint64_t bias) {
  for (size_t i = 0; i < p->objs.n; i++)
    if (p->objs.a[i].bias == bias && !strcmp(p->objs.a[i].path, path)) return &p->objs.a[i];
  return NULL;
}

static void prep_free(rec_prep *p) {
  prep_stop(p);
  for (size_t i = 0; i < p->objs.n; i++) {
    rec_pre *o = &p->objs.a[i];
    for (size_t j = 0; j < o->n_seg; j++) free(o->seg[j]);
    free(o->seg);
    sym_close(o->sf);
    free(o->path);
  }
  VEC_FREE(p->objs);
  free(p->qemu_version);
  p->qemu_version = NULL;
}

/* ---- finalize --------------------------------------------------------------------------------- */

/* One source-line row to write (line 0: no information from here on). */
typedef struct rec_line {
  uint64_t addr;
  const char *file; /* owned by a sym_file, valid until it is closed */
  uint32_t line;
} rec_line;

typedef VEC(rec_line) rec_lines;

static void collect_line(void *ctx, uint64_t addr, const char *file, uint32_t line) {
  rec_lines *v = ctx;
  if (v->n < REC_MAX_LINES) VEC_PUSH(*v, ((rec_line){addr, file, line}));
}

static int rec_line_cmp(const void *pa, const void *pb) {
  const rec_line *a = pa, *b = pb;
  if (a->addr != b->addr) return a->addr < b->addr ? -1 : 1;
  /* a real row wins over an end marker at the same address */
  return (a->line == 0) - (b->line == 0);
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* Add the code regions, symbols and the source lines of executed functions of object o. */
/* pre (or NULL): the object opened while the program ran; what it holds is taken over. */
static void add_object(trace_writer *w, const trace_t *t, const trace_object *o, rec_pre *pre,
                       rec_timing *tm) {
  wi_err err = {0};
  sym_file *sf = NULL;
  if (pre && pre->sf) {
    sf = pre->sf;
    pre->sf = NULL;
  } else {
    sf = sym_open(o->path, o->bias, &err);
  }
  tm_mark(tm, "  sym_open");
  if (!sf) {
    fprintf(stderr, "whatif: warning: %s; its code bytes and symbols are not in the trace\n", err.msg);
    return;
  }
  for (size_t i = 0; i < sym_n_segments(sf); i++) {
    const sym_segment *s = sym_segment_at(sf, i);
    uint8_t *bytes = NULL;
    if (pre && i < pre->n_seg && pre->seg[i]) {
      bytes = pre->seg[i];
      pre->seg[i] = NULL;
    } else {
      bytes = sym_segment_bytes(sf, i, &err);
    }
    if (!bytes) {
      fprintf(stderr, "whatif: warning: %s\n", err.msg);
      continue;
    }
    tw_region(w, s->addr, bytes, s->size, o->path);
    free(bytes);
  }
  tm_mark(tm, "  code regions");
  const char *obj = base_name(o->path);
  for (size_t i = 0; i < sym_n_funcs(sf); i++) {
    const sym_func *f = sym_func_at(sf, i);
    tw_symbol(w, f->addr, f->size, f->name, obj);
  }
  tm_mark(tm, "  symbols");
  if (sym_has_lines(sf)) {
    /* Lines of every function that executed (bounded by the code that ran, not by the size
     * of the debug information), and of executed PCs outside any sized function. */
    rec_lines rows = {0};
    wi_map64 done;
    map64_init(&done, 256);
    const trace_info *ti = trace_get_info(t);
    for (uint32_t sid = 0; sid < ti->n_static; sid++) {
      const trace_static *s = trace_static_at(t, sid);
      if (s->pc < o->lo || s->pc >= o->hi) continue;
      const sym_func *f = sym_func_lookup(sf, s->pc);
      if (f && f->size) {
        if (map64_get(&done, f->addr)) continue;
        map64_put(&done, f->addr, 1);
        sym_lines_in(sf, f->addr, f->addr + f->size, collect_line, &rows);
        collect_line(&rows, f->addr + f->size, "", 0);
      } else {
        const char *file;
        uint32_t line;
        if (sym_line_at(sf, s->pc, &file, &line)) {
          collect_line(&rows, s->pc, file, line);
          collect_line(&rows, s->pc + s->len, "", 0);
        }
      }
    }
    if (rows.n) qsort(rows.a, rows.n, sizeof *rows.a, rec_line_cmp);
    for (size_t i = 0; i < rows.n; i++) {
      if (i && rows.a[i].addr == rows.a[i - 1].addr) continue; /* first = the real row */
      tw_line(w, rows.a[i].addr, rows.a[i].file, rows.a[i].line);
    }
    map64_free(&done);
    VEC_FREE(rows);
  }
  tm_mark(tm, "  source lines");
  sym_close(sf);
}

/* ISO-8601 UTC time now. */
static void iso_date(char *buf, size_t n) {
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The command line as a JSON array: argv[0] as given, then the arguments. */
static char *json_args(int argc, char *const argv[]) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return xstrdup("[]");
  fputc('[', f);
  for (int i = 0; i < argc; i++) {
    if (i > 0) fputc(',', f);
    json_escape(f, argv[i]);
  }
  fputc(']', f);
  fclose(f);
  char *out = xstrdup(buf);
  free(buf);
  return out;
}

typedef struct rec_meta {
  const char *program, *roi, *qemu_version;
  char *args;
  char exit_desc[96];
  uint64_t seed, skip, max;
} rec_meta;

/* Write out from the plugin's raw trace: stream copied, regions/symbols/lines/meta added. */
static wi_rc finalize(const trace_t *raw, const char *out, const rec_opts *o, const rec_meta *m,
                      rec_prep *prep, rec_timing *tm, wi_err *err) {
  char *tmp = atomic_tmp_path(out);
  trace_writer_opts wo = {.chunk_insns = o->chunk_insns, .zstd_level = o->zstd_level};
  trace_writer *w = tw_open(tmp, &wo, err);
  if (!w) {
    free(tmp);
    return err->rc;
  }
  wi_rc rc = tw_copy_stream(w, raw, err);
  if (rc != WI_OK) {
    tw_abort(w);
    free(tmp);
    return rc;
  }
  tm_mark(tm, "copy stream");
  /* One object per (path, bias): the plugin reports each mapping it meets once. */
  for (size_t i = 0; i < trace_n_objects(raw); i++) {
    const trace_object *ob = trace_object_at(raw, i);
    bool dup = false;
    for (size_t j = 0; j < i && !dup; j++) {
      const trace_object *p = trace_object_at(raw, j);
      dup = p->bias == ob->bias && !strcmp(p->path, ob->path);
    }
    if (!dup) {
      rec_pre *pre = prep_find(prep, ob->path, ob->bias);
      if (tm->on)
        fprintf(stderr, "whatif: timing: object %s%s\n", ob->path, pre && pre->sf ? " (opened while running)" : "");
      add_object(w, raw, ob, pre, tm);
    }
  }
  char num[32];
  tw_meta(w, "program", m->program);
  tw_meta(w, "args", m->args);
  tw_meta(w, "recorder", "whatif " WHATIF_VERSION);
  tw_meta(w, "qemu", m->qemu_version ? m->qemu_version : "unknown");
  char date[40];
  iso_date(date, sizeof date);
  tw_meta(w, "date", date);
  if (!trace_meta(raw, "threads")) tw_meta(w, "threads", "1");
  tw_meta(w, "exit", m->exit_desc);
  tw_meta(w, "roi", m->roi);
  snprintf(num, sizeof num, "%llu", (unsigned long long)m->seed);
  tw_meta(w, "seed", num);
  snprintf(num, sizeof num, "%llu", (unsigned long long)m->skip);
  tw_meta(w, "skip", num);
  snprintf(num, sizeof num, "%llu", (unsigned long long)m->max);
  tw_meta(w, "max", m->max ? num : "none");
  rc = tw_close(w, err);
  tm_mark(tm, "write trace");
  if (rc == WI_OK && rename(tmp, out) != 0) {
    rc = wi_fail(err, WI_EIO, "cannot write %s: %s", out, strerror(errno));
    unlink(tmp);
  } else if (rc != WI_OK) {
    unlink(tmp);
  }
  free(tmp);
  return rc;
}

/* ---- rec_run ----------------------------------------------------------------------------------- */

void rec_result_free(rec_result *res) {
  if (!res) return;
  free(res->out);
  res->out = NULL;
}

/* Check that out can be created (before spending time on the run). */
static wi_rc check_writable(const char *out, wi_err *err) {
  struct stat st;
  if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
    return wi_fail(err, WI_EIO, "cannot write %s: it is a directory", out);
  char *tmp = atomic_tmp_path(out);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  wi_rc rc = WI_OK;
  if (fd < 0) rc = wi_fail(err, WI_EIO, "cannot write %s: %s", out, strerror(errno));
  else {
    close(fd);
    unlink(tmp);
  }
  free(tmp);
  return rc;
}

wi_rc rec_run(const rec_opts *o, int argc, char *const argv[], rec_result *res, wi_err *err) {
  memset(res, 0, sizeof *res);
  res->exit_status = -1;
  double t0 = wi_now();
  rec_timing tm;
  tm_start(&tm);
  if (argc < 1) return wi_fail(err, WI_EINVAL, "no program given");
  wi_rc rc = WI_OK;
  char *prog = NULL, *prog_abs = NULL, *qemu = NULL, *plugin = NULL, *out = NULL, *raw = NULL;
  char *plugarg = NULL;
  char **qargv = NULL;
  trace_t *t = NULL;
  rec_meta meta = {0};
  rec_prep prep = {.notify_rd = -1, .notify_wr = -1, .stop_rd = -1, .stop_wr = -1};

  /* Everything that can be wrong is checked before the program runs. */
  prog = rec_which(argv[0], err);
  if (!prog) {
    rc = err->rc;
    goto out;
  }
  if ((rc = sym_check_elf(prog, NULL, err)) != WI_OK) {
    if (rc == WI_EIO) rc = WI_EINVAL;
    err->rc = rc;
    goto out;
  }
  prog_abs = realpath(prog, NULL);
  if (!prog_abs) {
    rc = wi_fail(err, WI_EINVAL, "%s: %s", prog, strerror(errno));
    goto out;
  }
  const char *roi = o->roi && *o->roi ? o->roi : "all";
  uint64_t func_vaddr = 0;
  if (!strncmp(roi, "func:", 5)) {
    const char *name = roi + 5;
    sym_file *sf = sym_open(prog_abs, 0, err);
    if (!sf) {
      rc = err->rc;
      goto out;
    }
    const sym_func *f = sym_func_by_name(sf, name);
    if (f) func_vaddr = f->addr;
    sym_close(sf);
    if (!*name || !f) {
      rc = wi_fail(err, WI_EINVAL, "--roi %s: no function '%s' in the symbols of %s", roi, name, prog);
      goto out;
    }
  } else if (strcmp(roi, "all") != 0 && strcmp(roi, "ssc") != 0) {
    rc = wi_fail(err, WI_EINVAL, "--roi %s: expected ssc or func:NAME", roi);
    goto out;
  }
  const char *qenv = o->qemu ? o->qemu : getenv("WHATIF_QEMU");
  if (qenv && *qenv) {
    qemu = rec_which(qenv, err);
  } else {
    wi_err e2 = {0};
    qemu = rec_which("qemu-x86_64", &e2);
    if (!qemu) wi_fail(err, WI_ECHILD, "qemu-x86_64 not found in PATH (install it: apt-get install qemu-user)");
  }
  if (!qemu) {
    rc = err->rc = WI_ECHILD;
    goto out;
  }
  plugin = o->plugin ? xstrdup(o->plugin) : rec_find_plugin(o->exe_dir, err);
  if (!plugin) {
    rc = err->rc;
    goto out;
  }
  out = o->out ? xstrdup(o->out) : xasprintf("%s.wtr", base_name(prog));
  if ((rc = check_writable(out, err)) != WI_OK) goto out;
  raw = xasprintf("%s.raw.%ld", out, (long)getpid());
  unlink(raw);
  wi_tmp_track(raw); /* a killed recorder removes it */

  tm_mark(&tm, "checks");
  prep_start(&prep, qemu);
  tm_mark(&tm, "start prep thread");

  /* qemu-x86_64 -cpu max -seed N -plugin SO,out=RAW,... -0 ARGV0 PROG ARGS */
  plugarg = xstrdup("");
  append_escaped(&plugarg, plugin);
  append(&plugarg, ",out=");
  append_escaped(&plugarg, raw);
  char kv[96];
  snprintf(kv, sizeof kv, ",roi=%s", !strncmp(roi, "func:", 5) ? "func" : roi);
  append(&plugarg, kv);
  if (func_vaddr) {
    snprintf(kv, sizeof kv, ",func=0x%llx", (unsigned long long)func_vaddr);
    append(&plugarg, kv);
  }
  if (o->skip) {
    snprintf(kv, sizeof kv, ",skip=%llu", (unsigned long long)o->skip);
    append(&plugarg, kv);
  }
  if (o->max) {
    snprintf(kv, sizeof kv, ",max=%llu", (unsigned long long)o->max);
    append(&plugarg, kv);
  }
  if (o->zstd_level) {
    snprintf(kv, sizeof kv, ",level=%d", o->zstd_level);
    append(&plugarg, kv);
  }
  if (o->chunk_insns) {
    snprintf(kv, sizeof kv, ",chunk=%u", o->chunk_insns);
    append(&plugarg, kv);
  }
  if (prep.notify_wr >= 0) {
    snprintf(kv, sizeof kv, ",notify=%d", prep.notify_wr);
    append(&plugarg, kv);
  }
  snprintf(kv, sizeof kv, ",seed=%llu", (unsigned long long)o->seed); /* getrandom(2) bytes */
  append(&plugarg, kv);
  char seed[32];
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)o->seed);
  qargv = xcalloc((size_t)argc + 12, sizeof *qargv);
  size_t k = 0;
  qargv[k++] = qemu;
  qargv[k++] = "-cpu";
  qargv[k++] = "max";
  qargv[k++] = "-seed";
  qargv[k++] = seed;
  qargv[k++] = "-plugin";
  qargv[k++] = plugarg;
  qargv[k++] = "-0"; /* the program sees argv[0] as typed, not the resolved path */
  qargv[k++] = argv[0];
  qargv[k++] = prog_abs;
  for (int i = 1; i < argc; i++) qargv[k++] = argv[i];
  qargv[k] = NULL;

  double t_run = wi_now();
  int st = 0;
  rc = run_child(qargv, prep.notify_wr, &st, err);
  prep_signal(&prep); /* the thread finishes while the raw trace is opened */
  if (rc != WI_OK) goto out;
  res->run_seconds = wi_now() - t_run;
  tm_mark(&tm, "qemu + plugin");
  if (WIFEXITED(st)) {
    res->exit_status = WEXITSTATUS(st);
    snprintf(meta.exit_desc, sizeof meta.exit_desc, "%d", res->exit_status);
  } else if (WIFSIGNALED(st)) {
    res->term_signal = WTERMSIG(st);
    snprintf(meta.exit_desc, sizeof meta.exit_desc, "signal %d (%s)", res->term_signal,
             strsignal(res->term_signal));
  }

  struct stat rst;
  if (stat(raw, &rst) != 0) {
    rc = wi_fail(err, WI_ECHILD, "the recorder plugin did not start (see QEMU's message above; "
                 "plugin %s)", plugin);
    goto out;
  }
  t = trace_open(raw, err);
  if (!t) {
    char why[600];
    snprintf(why, sizeof why, "%s", err->msg);
    if (res->term_signal == SIGKILL) /* the plugin gets no chance to write: say that, not why the empty file is bad */
      rc = wi_fail(err, WI_ECHILD, "recording failed: the program was killed by signal %d (%s), which ends "
                   "QEMU at once: no trace was written", res->term_signal, strsignal(res->term_signal));
    else if (res->term_signal)
      rc = wi_fail(err, WI_ECHILD, "recording failed: the program was killed by signal %d (%s) "
                   "before the trace could be written (%s)", res->term_signal,
                   strsignal(res->term_signal), why);
    else rc = wi_fail(err, WI_ECHILD, "recording failed: %s", why);
    goto out;
  }
  tm_mark(&tm, "open raw trace");
  const trace_info *ti = trace_get_info(t);
  if (ti->n_raw == 0) {
    if (!strcmp(roi, "ssc"))
      rc = wi_fail(err, WI_EINVAL, "empty trace: %s executed no SSC start mark (mov ebx, 111; "
                   "64 67 90) or skipped past its region", prog);
    else if (func_vaddr)
      rc = wi_fail(err, WI_EINVAL, "empty trace: function %s never ran (or --skip passed its "
                   "return)", roi + 5);
    else rc = wi_fail(err, WI_EINVAL, "empty trace: no instruction recorded from %s", prog);
    goto out;
  }
  res->n_raw = ti->n_raw;
  res->n_insns = ti->n_insns;
  res->stream_bytes = ti->stream_bytes;
  const char *stop = trace_meta(t, "stop");
  res->stopped_at_exec = stop && !strcmp(stop, "exec");

  meta.program = prog_abs;
  meta.args = json_args(argc, argv);
  meta.roi = roi;
  meta.seed = o->seed;
  prep_stop(&prep);
  tm_mark(&tm, "wait for prep thread");
  meta.qemu_version = prep.qemu_version;
  meta.skip = o->skip;
  meta.max = o->max;
  if ((rc = finalize(t, out, o, &meta, &prep, &tm, err)) != WI_OK) goto out;
  struct stat ost;
  if (stat(out, &ost) == 0) res->file_bytes = (uint64_t)ost.st_size;
  res->out = out;
  out = NULL;

out:
  trace_close(t);
  if (raw) unlink(raw);
  tm_mark(&tm, "clean up");
  res->total_seconds = wi_now() - t0;
  if (tm.on) fprintf(stderr, "whatif: timing: %-22s %8.3f s\n", "total", res->total_seconds);
  free(meta.args);
  free(qargv);
  free(plugarg);
  prep_free(&prep);
  free(raw);
  free(out);
  free(plugin);
  free(qemu);
  free(prog_abs);
  free(prog);
  return rc;
}
