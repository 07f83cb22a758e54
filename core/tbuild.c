/* tbuild.c — synthetic trace builder for tests (assemble with as/ld/objcopy, script, write .wtr). */
#include "tbuild.h"

#include <capstone/capstone.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode.h"

typedef struct tb_label_ent {
  char *name;
  uint64_t addr;
} tb_label_ent;

typedef struct tb_kv {
  char *k, *v;
} tb_kv;

typedef struct tb_dyn {
  uint64_t pc;
  uint32_t mem_off, n_mem; /* into tb->mems */
  bool async;
} tb_dyn;

struct tbuild {
  uint64_t base;
  uint8_t *code;
  size_t size;               /* bytes of code */
  VEC(uint64_t) pcs;         /* instruction starts, ascending */
  VEC(dec_insn) dec;         /* decoded, parallel to pcs */
  wi_map64 index;            /* ~pc -> index into pcs */
  VEC(tb_label_ent) labels;  /* sorted by address */
  VEC(tb_dyn) dyn;
  VEC(trace_mem) mems;
  VEC(tb_kv) meta;
  trace_writer_opts opts;
  bool have_opts, have_end;
  uint64_t end_pc;
  wi_err err;                /* first scripting error */
};

/* ---- helpers --------------------------------------------------------------------------------- */

static void tb_fail(tbuild *tb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tb_fail(tbuild *tb, const char *fmt, ...) {
  if (tb->err.rc) return;
  va_list ap;
  va_start(ap, fmt);
  tb->err.rc = WI_EINVAL;
  vsnprintf(tb->err.msg, sizeof tb->err.msg, fmt, ap);
  va_end(ap);
}

static int tb_index(const tbuild *tb, uint64_t pc) {
  uint32_t *v = map64_get(&tb->index, ~pc);
  return v ? (int)*v : -1;
}

static int label_cmp(const void *a, const void *b) {
  const tb_label_ent *x = a, *y = b;
  if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* First line of a file (for tool error messages), malloc'd. */
static char *first_line(const char *path) {
  char *s = NULL;
  size_t n = 0;
  if (read_file(path, &s, &n, NULL) != WI_OK || !s) return xstrdup("(no message)");
  char *nl = strchr(s, '\n');
  if (nl) *nl = 0;
  return s;
}

static void rm_tree(const char *dir) {
  static const char *const files[] = {"src.s", "a.o", "a.elf", "a.bin", "syms", "err"};
  for (size_t i = 0; i < WI_ARRAY_LEN(files); i++) {
    char *p = xasprintf("%s/%s", dir, files[i]);
    unlink(p);
    free(p);
  }
  rmdir(dir);
}

/* ---- construction -------------------------------------------------------------------------- */

static wi_rc tb_assemble(tbuild *tb, const char *dir, const char *asm_src, wi_err *err) {
  char *src = xasprintf("%s/src.s", dir);
  FILE *f = fopen(src, "w");
  if (!f) {
    free(src);
    return wi_fail(err, WI_EIO, "tb_new: cannot write %s/src.s", dir);
  }
  fprintf(f, ".intel_syntax noprefix\n.text\n__tb_start:\n%s\n", asm_src);
  fclose(f);
  free(src);
  char *cmd = xasprintf("cd '%s' && as --64 -o a.o src.s 2>err && "
                        "ld -m elf_x86_64 -static -nostdlib -Ttext=0x%llx -e 0x%llx -o a.elf a.o 2>>err && "
                        "objcopy -O binary -j .text a.elf a.bin 2>>err && nm a.elf >syms 2>>err",
                        dir, (unsigned long long)tb->base, (unsigned long long)tb->base);
  int st = system(cmd);
  free(cmd);
  if (st != 0) {
    char *ep = xasprintf("%s/err", dir);
    char *msg = first_line(ep);
    wi_rc rc = wi_fail(err, st == -1 ? WI_ECHILD : WI_EINVAL, "tb_new: assembling failed: %s", msg);
    free(msg);
    free(ep);
    return rc;
  }
  char *bin = xasprintf("%s/a.bin", dir), *syms = xasprintf("%s/syms", dir);
  char *text = NULL;
  size_t tn = 0;
  wi_rc rc = read_file(bin, (char **)&tb->code, &tb->size, err);
  if (!rc) rc = read_file(syms, &text, &tn, err);
  free(bin);
  free(syms);
  if (rc) return rc;
  bool start_ok = false;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    unsigned long long addr;
    char type, name[256];
    if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3) continue;
    if (!strcmp(name, "__tb_start")) {
      start_ok = addr == tb->base;
      continue;
    }
    if (!strncmp(name, "__tb_", 5)) continue;
    if (type == 'T' && (!strcmp(name, "__bss_start") || !strcmp(name, "_edata") || !strcmp(name, "_end")))
      continue; /* defined by ld */
    if (type != 't' && type != 'T') continue;
    tb_label_ent l = {xstrdup(name), addr};
    VEC_PUSH(tb->labels, l);
  }
  free(text);
  if (!start_ok) return wi_fail(err, WI_EINVAL, "tb_new: .text was not placed at 0x%llx", (unsigned long long)tb->base);
  if (tb->labels.n) qsort(tb->labels.a, tb->labels.n, sizeof *tb->labels.a, label_cmp);
  return WI_OK;
}

static void tb_find_insns(tbuild *tb) {
  csh h;
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK) return;
  cs_insn *in = cs_malloc(h);
  dec_ctx *dc = dec_new();
  map64_init(&tb->index, tb->size + 16);
  const uint8_t *p = tb->code;
  size_t left = tb->size;
  uint64_t addr = tb->base;
  while (left) {
    const uint8_t *at = p;
    uint64_t pc = addr;
    if (!cs_disasm_iter(h, &p, &left, &addr, in)) { /* data byte: skip it */
      p = at + 1;
      left--;
      addr = pc + 1;
      continue;
    }
    dec_insn d;
    dec_decode(dc, at, (size_t)in->size, pc, &d);
    d.len = (uint8_t)in->size; /* Capstone's boundaries are authoritative here */
    map64_put(&tb->index, ~pc, (uint32_t)tb->pcs.n);
    VEC_PUSH(tb->pcs, pc);
    VEC_PUSH(tb->dec, d);
  }
  dec_free(dc);
  cs_free(in, 1);
  cs_close(&h);
}

tbuild *tb_new(const char *asm_src, uint64_t base, wi_err *err) {
  const char *tmp = getenv("TMPDIR");
  char *dir = xasprintf("%s/whatif-tb-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    wi_fail(err, WI_EIO, "tb_new: cannot create a temporary directory in %s", tmp && *tmp ? tmp : "/tmp");
    free(dir);
    return NULL;
  }
  tbuild *tb = xcalloc(1, sizeof *tb);
  tb->base = base;
  wi_rc rc = tb_assemble(tb, dir, asm_src, err);
  rm_tree(dir);
  free(dir);
  if (rc) {
    tb_free(tb);
    return NULL;
  }
  tb_find_insns(tb);
  if (!tb->pcs.n) {
    wi_fail(err, WI_EINVAL, "tb_new: the snippet assembled to no instructions");
    tb_free(tb);
    return NULL;
  }
  return tb;
}

void tb_free(tbuild *tb) {
  if (!tb) return;
  free(tb->code);
  VEC_FREE(tb->pcs);
  VEC_FREE(tb->dec);
  map64_free(&tb->index);
  for (size_t i = 0; i < tb->labels.n; i++) free(tb->labels.a[i].name);
  VEC_FREE(tb->labels);
  VEC_FREE(tb->dyn);
  VEC_FREE(tb->mems);
  for (size_t i = 0; i < tb->meta.n; i++) {
    free(tb->meta.a[i].k);
    free(tb->meta.a[i].v);
  }
  VEC_FREE(tb->meta);
  free(tb);
}

/* ---- queries ----------------------------------------------------------------------------------- */

uint64_t tb_label(tbuild *tb, const char *name) {
  for (size_t i = 0; i < tb->labels.n; i++)
    if (!strcmp(tb->labels.a[i].name, name)) return tb->labels.a[i].addr;
  tb_fail(tb, "tbuild: unknown label '%s'", name);
  return 0;
}

uint8_t tb_len(const tbuild *tb, uint64_t pc) {
  int i = tb_index(tb, pc);
  return i < 0 ? 0 : tb->dec.a[i].len;
}

const dec_insn *tb_decoded(const tbuild *tb, uint64_t pc) {
  int i = tb_index(tb, pc);
  return i < 0 ? NULL : &tb->dec.a[i];
}

uint64_t tb_base(const tbuild *tb) { return tb->base; }

const uint8_t *tb_code(const tbuild *tb, size_t *n) {
  *n = tb->size;
  return tb->code;
}

uint64_t tb_count(const tbuild *tb) { return tb->dyn.n; }

const char *tb_error(const tbuild *tb) { return tb->err.rc ? tb->err.msg : NULL; }

/* ---- scripting --------------------------------------------------------------------------------- */

void tb_exec(tbuild *tb, uint64_t pc, const trace_mem *mem, int n) {
  if (tb_index(tb, pc) < 0) {
    tb_fail(tb, "tbuild: 0x%llx is not an instruction boundary of the snippet", (unsigned long long)pc);
    return;
  }
  if (n < 0 || n > 65535) {
    tb_fail(tb, "tbuild: bad access count %d at 0x%llx", n, (unsigned long long)pc);
    return;
  }
  tb_dyn d = {.pc = pc, .mem_off = (uint32_t)tb->mems.n, .n_mem = (uint32_t)n};
  for (int i = 0; i < n; i++) VEC_PUSH(tb->mems, mem[i]);
  VEC_PUSH(tb->dyn, d);
}

void tb_async(tbuild *tb) {
  if (!tb->dyn.n) {
    tb_fail(tb, "tbuild: tb_async before any instruction");
    return;
  }
  tb->dyn.a[tb->dyn.n - 1].async = true;
}

/* Append the instruction at index i with decoder-derived accesses adjusted by fn. */
static void tb_exec_default(tbuild *tb, int i, tb_mem_fn fn, void *ctx) {
  const dec_insn *d = &tb->dec.a[i];
  uint64_t pc = tb->pcs.a[i];
  trace_mem m[2 * DEC_MAX_MEM];
  int n = 0;
  for (int op = 0; op < d->n_mem && op < DEC_MAX_MEM; op++) {
    uint32_t size = d->mem_size[op] ? d->mem_size[op] : 8;
    int dir = d->mem_dir[op] ? d->mem_dir[op] : MEM_R;
    for (int half = 0; half < 2; half++) {
      if (!(dir & (half ? MEM_W : MEM_R))) continue;
      uint64_t addr = TB_DATA_BASE + 64 * (pc - tb->base) + 8 * (uint64_t)n;
      uint32_t sz = size;
      bool st = half == 1;
      if (fn) fn(ctx, pc, n, &addr, &sz, &st);
      m[n++] = (trace_mem){.addr = addr, .size = sz, .is_store = st};
    }
  }
  tb_exec(tb, pc, m, n);
}

void tb_run(tbuild *tb, uint64_t from_pc, uint64_t to_pc, tb_mem_fn fn, void *ctx) {
  uint64_t pc = from_pc;
  while (pc != to_pc) {
    int i = tb_index(tb, pc);
    if (i < 0) {
      tb_fail(tb, "tbuild: tb_run from 0x%llx never reached 0x%llx (0x%llx is not an instruction)",
              (unsigned long long)from_pc, (unsigned long long)to_pc, (unsigned long long)pc);
      return;
    }
    tb_exec_default(tb, i, fn, ctx);
    pc += tb->dec.a[i].len;
  }
}

void tb_loop(tbuild *tb, const char *loop_label, const char *end_label, uint64_t iterations, tb_mem_fn fn,
             void *ctx) {
  uint64_t lo = tb_label(tb, loop_label), hi = tb_label(tb, end_label);
  if (tb->err.rc) return;
  int br = -1;
  for (size_t i = 0; i < tb->pcs.n; i++)
    if (tb->pcs.a[i] + tb->dec.a[i].len == hi && tb->pcs.a[i] >= lo) br = (int)i;
  if (br < 0 || hi <= lo) {
    tb_fail(tb, "tbuild: no instruction ends at '%s' after '%s'", end_label, loop_label);
    return;
  }
  const dec_insn *d = &tb->dec.a[br];
  if (d->br == BR_NONE || (!br_is_indirect(d->br) && d->br != BR_RET && d->target != lo)) {
    tb_fail(tb, "tbuild: the instruction before '%s' (%s) is not a branch to '%s'", end_label, d->text, loop_label);
    return;
  }
  for (uint64_t it = 0; it < iterations && !tb->err.rc; it++) tb_run(tb, lo, hi, fn, ctx);
}

void tb_end_pc(tbuild *tb, uint64_t pc) {
  tb->have_end = true;
  tb->end_pc = pc;
}

void tb_meta(tbuild *tb, const char *key, const char *value) {
  tb_kv kv = {xstrdup(key), xstrdup(value)};
  VEC_PUSH(tb->meta, kv);
}

void tb_set_opts(tbuild *tb, const trace_writer_opts *opts) {
  tb->have_opts = opts != NULL;
  if (opts) tb->opts = *opts;
}

/* ---- writing ----------------------------------------------------------------------------------- */

wi_rc tb_write(tbuild *tb, const char *path, wi_err *err) {
  if (tb->err.rc) {
    *err = tb->err;
    return tb->err.rc;
  }
  trace_writer *w = tw_open(path, tb->have_opts ? &tb->opts : NULL, err);
  if (!w) return err->rc;
  tw_meta(w, "program", "<synthetic>");
  tw_meta(w, "args", "[]");
  tw_meta(w, "recorder", "tbuild");
  for (size_t i = 0; i < tb->meta.n; i++) tw_meta(w, tb->meta.a[i].k, tb->meta.a[i].v);
  tw_object(w, "<synthetic>", 0, tb->base, tb->base + tb->size);
  tw_region(w, tb->base, tb->code, tb->size, "<synthetic>");
  for (size_t i = 0; i < tb->labels.n; i++) {
    uint64_t a = tb->labels.a[i].addr, end = tb->base + tb->size;
    for (size_t j = i + 1; j < tb->labels.n; j++)
      if (tb->labels.a[j].addr > a) {
        end = tb->labels.a[j].addr;
        break;
      }
    tw_symbol(w, a, end > a ? end - a : 0, tb->labels.a[i].name, "<synthetic>");
  }
  uint32_t *sids = xmalloc(tb->pcs.n * sizeof *sids);
  for (size_t i = 0; i < tb->pcs.n; i++) sids[i] = UINT32_MAX;
  for (size_t k = 0; k < tb->dyn.n; k++) {
    const tb_dyn *d = &tb->dyn.a[k];
    int i = tb_index(tb, d->pc);
    if (sids[i] == UINT32_MAX)
      sids[i] = tw_static(w, d->pc, tb->dec.a[i].len, tb->code + (d->pc - tb->base));
    tw_exec(w, sids[i]);
    for (uint32_t j = 0; j < d->n_mem; j++) {
      const trace_mem *m = &tb->mems.a[d->mem_off + j];
      tw_mem(w, m->addr, m->size, m->is_store != 0);
    }
    if (d->async) tw_async(w);
  }
  free(sids);
  if (tb->have_end) tw_end_pc(w, tb->end_pc);
  return tw_close(w, err);
}
