/* cmd_info.c — `whatif info TRACE [--json] [--verify]`: describe a recorded trace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trace.h"

#define INFO_TOP 10

typedef struct info_fn {
  const char *name, *object;
  uint64_t insns; /* raw dynamic instructions attributed */
} info_fn;

static int fn_cmp(const void *a, const void *b) {
  const info_fn *x = a, *y = b;
  if (x->insns != y->insns) return x->insns > y->insns ? -1 : 1;
  int c = strcmp(x->name, y->name);
  return c ? c : strcmp(x->object ? x->object : "", y->object ? y->object : "");
}

static const char *base_name(const char *p) {
  const char *s = p ? strrchr(p, '/') : NULL;
  return s ? s + 1 : p;
}

/* Functions ranked by dynamic instruction count: static table counts attributed through the
 * symbol table; PCs without a symbol are grouped per object as "[unknown]". Caller frees. */
static info_fn *top_functions(const trace_t *t, size_t *n_out) {
  const trace_info *ti = trace_get_info(t);
  size_t n_syms = trace_n_syms(t), n_obj = trace_n_objects(t);
  uint64_t *per_sym = calloc(n_syms + 1, sizeof *per_sym);
  uint64_t *per_obj = calloc(n_obj + 1, sizeof *per_obj); /* [n_obj]: outside every object */
  if (!per_sym || !per_obj) abort();
  const trace_sym *first = n_syms ? trace_sym_at(t, 0) : NULL;
  for (uint32_t sid = 0; sid < ti->n_static; sid++) {
    const trace_static *st = trace_static_at(t, sid);
    const trace_sym *s = trace_sym_lookup(t, st->pc);
    if (s) {
      per_sym[s - first] += st->count;
      continue;
    }
    size_t o = n_obj;
    for (size_t i = 0; i < n_obj; i++) {
      const trace_object *ob = trace_object_at(t, i);
      if (st->pc >= ob->lo && st->pc < ob->hi) {
        o = i;
        break;
      }
    }
    per_obj[o] += st->count;
  }
  info_fn *fns = xmalloc((n_syms + n_obj + 1) * sizeof *fns);
  size_t n = 0;
  for (size_t i = 0; i < n_syms; i++)
    if (per_sym[i]) fns[n++] = (info_fn){trace_sym_at(t, i)->name, trace_sym_at(t, i)->object, per_sym[i]};
  for (size_t i = 0; i <= n_obj; i++)
    if (per_obj[i]) fns[n++] = (info_fn){"[unknown]", i < n_obj ? base_name(trace_object_at(t, i)->path) : NULL, per_obj[i]};
  free(per_sym);
  free(per_obj);
  qsort(fns, n, sizeof *fns, fn_cmp);
  *n_out = n;
  return fns;
}

/* Parse a JSON array of strings (the "args" metadata) into a malloc'd vector of malloc'd
 * strings; returns false if it is not one. */
static bool parse_args(const char *s, char ***out, size_t *n_out) {
  VEC(char *) v = {0};
  const char *p = s;
  while (*p == ' ') p++;
  if (*p++ != '[') return false;
  for (;;) {
    while (*p == ' ' || *p == ',') p++;
    if (*p == ']') break;
    if (*p != '"') goto bad;
    p++;
    VEC(char) str = {0};
    while (*p && *p != '"') {
      char c = *p++;
      if (c == '\\') {
        c = *p++;
        if (c == 'n') c = '\n';
        else if (c == 't') c = '\t';
        else if (c == 'u') { /* keep \uXXXX as-is; rare in argv */
          VEC_PUSH(str, '\\');
          c = 'u';
        } else if (!c) {
          VEC_FREE(str);
          goto bad;
        }
      }
      VEC_PUSH(str, c);
    }
    if (*p != '"') {
      VEC_FREE(str);
      goto bad;
    }
    p++;
    VEC_PUSH(str, '\0');
    VEC_PUSH(v, str.a);
  }
  *out = v.a;
  *n_out = v.n;
  return true;
bad:
  for (size_t i = 0; i < v.n; i++) free(v.a[i]);
  VEC_FREE(v);
  return false;
}

static void usage(FILE *f) {
  fprintf(f, "usage: whatif info TRACE [--json] [--verify]\n"
             "  Describe a recorded trace: program, recorder, sizes, and the top %d functions\n"
             "  by dynamic instruction count. --verify also checks the whole-file content hash.\n"
             "  Bytes per instruction are per recorded (raw) instruction.\n",
          INFO_TOP);
}

int cmd_info(int argc, char **argv) {
  const char *path = NULL;
  bool json = false, verify = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json")) json = true;
    else if (!strcmp(argv[i], "--verify")) verify = true;
    else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    } else if (argv[i][0] == '-' && argv[i][1]) return cli_usage("info", "unknown option '%s' (try --help)", argv[i]);
    else if (path) return cli_usage("info", "more than one trace given ('%s')", argv[i]);
    else path = argv[i];
  }
  if (!path) return cli_usage("info", "no trace given (usage: whatif info TRACE [--json] [--verify])");
  wi_err err;
  trace_t *t = trace_open(path, &err);
  if (!t) return cli_fail(&err);
  if (verify && trace_verify(t, &err) != WI_OK) {
    trace_close(t);
    return cli_fail(&err);
  }
  const trace_info *ti = trace_get_info(t);
  size_t n_fns;
  info_fn *fns = top_functions(t, &n_fns);
  size_t n_top = WI_MIN(n_fns, INFO_TOP);
  const char *program = trace_meta(t, "program"), *args = trace_meta(t, "args");
  char **argvv = NULL;
  size_t n_args = 0;
  bool args_ok = args && parse_args(args, &argvv, &n_args);
  double raw = ti->n_raw ? (double)ti->n_raw : 1.0;
  double bpi_file = (double)ti->file_bytes / raw, bpi_stream = (double)ti->stream_bytes / raw;
  const char *keys[] = {"recorder", "qemu", "date", "exit", "threads", "roi", "rewritten"};

  if (json) {
    jw w;
    jw_init(&w, stdout, true);
    jw_obj_begin(&w);
    jw_kstr(&w, "path", path);
    jw_kstr(&w, "program", program);
    jw_key(&w, "args");
    if (args_ok) {
      jw_arr_begin(&w);
      for (size_t i = 0; i < n_args; i++) jw_str(&w, argvv[i]);
      jw_arr_end(&w);
    } else {
      jw_str(&w, args);
    }
    for (size_t i = 0; i < WI_ARRAY_LEN(keys); i++) jw_kstr(&w, keys[i], trace_meta(t, keys[i]));
    jw_kuint(&w, "version", ti->version);
    jw_kuint(&w, "instructions", ti->n_insns);
    jw_kuint(&w, "raw_instructions", ti->n_raw);
    jw_kuint(&w, "static_pcs", ti->n_static);
    jw_kuint(&w, "chunks", ti->n_chunks);
    jw_kuint(&w, "file_bytes", ti->file_bytes);
    jw_kuint(&w, "stream_bytes", ti->stream_bytes);
    jw_knum(&w, "bytes_per_instruction", bpi_file);
    jw_knum(&w, "stream_bytes_per_instruction", bpi_stream);
    jw_kuint(&w, "objects", trace_n_objects(t));
    jw_kuint(&w, "symbols", trace_n_syms(t));
    char hash[32];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)ti->content_hash);
    jw_kstr(&w, "content_hash", hash);
    if (verify) jw_kbool(&w, "verified", true);
    jw_key(&w, "top_functions");
    jw_arr_begin(&w);
    for (size_t i = 0; i < n_top; i++) {
      jw_obj_begin(&w);
      jw_kstr(&w, "name", fns[i].name);
      jw_kstr(&w, "object", fns[i].object);
      jw_kuint(&w, "instructions", fns[i].insns);
      jw_knum(&w, "share", (double)fns[i].insns / raw);
      jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj_end(&w);
    jw_end(&w);
  } else {
    char b1[32], b2[32];
    printf("trace         %s  (format %u, content %016llx%s)\n", path, ti->version,
           (unsigned long long)ti->content_hash, verify ? ", verified" : "");
    printf("program       %s", program ? program : "?");
    for (size_t i = 1; args_ok && i < n_args; i++) printf(" %s", argvv[i]);
    if (args && !args_ok) printf("  args %s", args);
    printf("\n");
    for (size_t i = 0; i < WI_ARRAY_LEN(keys); i++) {
      const char *v = trace_meta(t, keys[i]);
      if (v) printf("%-13s %s\n", keys[i], v);
    }
    printf("instructions  %s (model), %s raw\n", fmt_si(b1, sizeof b1, (double)ti->n_insns),
           fmt_si(b2, sizeof b2, (double)ti->n_raw));
    printf("static PCs    %u\n", ti->n_static);
    printf("chunks        %u\n", ti->n_chunks);
    printf("file bytes    %llu (%.3f bytes/instruction); stream %llu (%.3f bytes/instruction)\n",
           (unsigned long long)ti->file_bytes, bpi_file, (unsigned long long)ti->stream_bytes, bpi_stream);
    printf("objects       %zu, symbols %zu\n", trace_n_objects(t), trace_n_syms(t));
    if (n_top) {
      printf("top functions by dynamic instructions:\n");
      for (size_t i = 0; i < n_top; i++)
        printf("  %6.2f%%  %10s  %s%s%s%s\n", 100.0 * (double)fns[i].insns / raw,
               fmt_si(b1, sizeof b1, (double)fns[i].insns), fns[i].name, fns[i].object ? "  (" : "",
               fns[i].object ? fns[i].object : "", fns[i].object ? ")" : "");
    }
  }
  for (size_t i = 0; i < n_args; i++) free(argvv[i]);
  free(argvv);
  free(fns);
  trace_close(t);
  return 0;
}
