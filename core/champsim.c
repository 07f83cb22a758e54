/* champsim.c — ChampSim trace export (64-byte input_instr records through liblzma) and a reader
 * for exported files. */
#include "champsim.h"

#include <errno.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

/* ---- registers and branch kinds ---------------------------------------------------------------- */

uint8_t chs_reg_id(int family) {
  if (family == RG_RSP) return CHS_REG_SP;
  if (family == RG_FLAGS) return CHS_REG_FLAGS;
  if (family < 0 || family >= RG_NUM) return 0;
  /* Families in order onto 1, 2, ... skipping the special ids (and the indirect marker). */
  unsigned id = 0;
  for (int f = 0; f <= family; f++) {
    if (f == RG_RSP || f == RG_FLAGS) continue;
    id++;
    while (id == CHS_REG_SP || id == CHS_REG_FLAGS || id == CHS_REG_IP || id == CHS_REG_INDIRECT) id++;
  }
  return (uint8_t)id;
}

const char *chs_branch_name(chs_branch b) {
  static const char *const names[] = {"direct_jump", "indirect", "conditional", "direct_call",
                                       "indirect_call", "return", "other", "not_branch"};
  return (unsigned)b < WI_ARRAY_LEN(names) ? names[b] : "?";
}

chs_branch chs_infer(const chs_instr *r) {
  bool writes_sp = false, writes_ip = false, reads_sp = false, reads_flags = false;
  bool reads_ip = false, reads_other = false;
  for (int i = 0; i < 2; i++) {
    writes_sp |= r->dst_regs[i] == CHS_REG_SP;
    writes_ip |= r->dst_regs[i] == CHS_REG_IP;
  }
  for (int i = 0; i < 4; i++) {
    uint8_t s = r->src_regs[i];
    if (!s) continue; /* ChampSim drops zero entries first */
    reads_sp |= s == CHS_REG_SP;
    reads_flags |= s == CHS_REG_FLAGS;
    reads_ip |= s == CHS_REG_IP;
    reads_other |= s != CHS_REG_SP && s != CHS_REG_FLAGS && s != CHS_REG_IP;
  }
  /* The same tests in the same order as ChampSim's inc/instruction.h. */
  if (!reads_sp && !reads_flags && writes_ip && !reads_other) return CHS_DIRECT_JUMP;
  if (!reads_sp && !reads_ip && !reads_flags && writes_ip && reads_other) return CHS_INDIRECT;
  if (!reads_sp && reads_ip && !writes_sp && writes_ip && (reads_flags || reads_other))
    return CHS_CONDITIONAL;
  if (reads_sp && reads_ip && writes_sp && writes_ip && !reads_flags && !reads_other)
    return CHS_DIRECT_CALL;
  if (reads_sp && reads_ip && writes_sp && writes_ip && !reads_flags && reads_other)
    return CHS_INDIRECT_CALL;
  if (reads_sp && !reads_ip && writes_sp && writes_ip) return CHS_RETURN;
  if (writes_ip) return CHS_OTHER;
  return CHS_NOT_BRANCH;
}

chs_branch chs_expected(int br) {
  switch (br) {
  case BR_COND: return CHS_CONDITIONAL;
  case BR_JUMP: return CHS_DIRECT_JUMP;
  case BR_IND_JUMP: return CHS_INDIRECT;
  case BR_CALL: return CHS_DIRECT_CALL;
  case BR_IND_CALL: return CHS_INDIRECT_CALL;
  case BR_RET: return CHS_RETURN;
  default: return CHS_NOT_BRANCH;
  }
}

/* Append register id to a list of cap entries unless full or present. */
static void reg_add(uint8_t *list, int cap, uint8_t id) {
  for (int i = 0; i < cap; i++) {
    if (list[i] == id) return;
    if (!list[i]) {
      list[i] = id;
      return;
    }
  }
}

/* Add the families of set (general and vector registers first, flags last), skipping the
 * families in `except`. */
static void regs_add(uint8_t *list, int cap, regset_t set, regset_t except) {
  set &= ~except;
  for (int f = 0; f < RG_NUM; f++)
    if (f != RG_FLAGS && (set & RG_BIT(f))) reg_add(list, cap, chs_reg_id(f));
  if (set & RG_BIT(RG_FLAGS)) reg_add(list, cap, CHS_REG_FLAGS);
}

/* Other (non-SP, non-flags) registers an indirect branch reads for its target, or the
 * placeholder when the target comes from a RIP-relative operand only. */
static void indirect_sources(uint8_t *src, int cap, const dec_insn *d) {
  regset_t other = (d->src | d->addr_src) & ~(RG_BIT(RG_RSP) | RG_BIT(RG_FLAGS));
  if (other) regs_add(src, cap, other, 0);
  else reg_add(src, cap, CHS_REG_INDIRECT);
}

void chs_make(const dec_insn *d, const trace_insn *ti, const trace_mem *mems, chs_instr *r) {
  memset(r, 0, sizeof *r);
  r->ip = ti->pc;
  switch (d->br) {
  case BR_COND:
    /* ChampSim: reads IP and FLAGS, writes IP, nothing else read (loop/jrcxz read rcx: left
     * out so older ChampSim versions, which demand flags and nothing else, agree). */
    r->src_regs[0] = CHS_REG_IP;
    r->src_regs[1] = CHS_REG_FLAGS;
    r->dst_regs[0] = CHS_REG_IP;
    if (d->dst & RG_BIT(RG_RCX)) r->dst_regs[1] = chs_reg_id(RG_RCX); /* loop */
    break;
  case BR_JUMP:
    r->src_regs[0] = CHS_REG_IP;
    r->dst_regs[0] = CHS_REG_IP;
    break;
  case BR_IND_JUMP:
    /* Must not read SP, IP or flags (a `jmp [rsp+8]` would otherwise look like a return). */
    indirect_sources(r->src_regs, 4, d);
    r->dst_regs[0] = CHS_REG_IP;
    break;
  case BR_CALL:
    r->src_regs[0] = CHS_REG_IP;
    r->src_regs[1] = CHS_REG_SP;
    r->dst_regs[0] = CHS_REG_IP;
    r->dst_regs[1] = CHS_REG_SP;
    break;
  case BR_IND_CALL:
    r->src_regs[0] = CHS_REG_IP;
    r->src_regs[1] = CHS_REG_SP;
    indirect_sources(r->src_regs, 4, d);
    r->dst_regs[0] = CHS_REG_IP;
    r->dst_regs[1] = CHS_REG_SP;
    break;
  case BR_RET:
    r->src_regs[0] = CHS_REG_SP;
    r->dst_regs[0] = CHS_REG_IP;
    r->dst_regs[1] = CHS_REG_SP;
    break;
  default:
    regs_add(r->dst_regs, 2, d->dst, 0);
    regs_add(r->src_regs, 4, d->src | d->addr_src, 0);
    break;
  }
  if (d->br != BR_NONE) {
    r->is_branch = 1;
    r->branch_taken = d->br == BR_COND ? (ti->flags & TI_TAKEN ? 1 : 0) : 1;
  }
  /* Memory: each access's address; an access longer than a cache line (a collapsed rep
   * string) adds its further lines while slots last. */
  int nl = 0, ns = 0;
  for (uint32_t j = 0; j < ti->n_mem; j++) {
    const trace_mem *m = &mems[ti->mem_off + j];
    uint64_t *slots = m->is_store ? r->dst_mem : r->src_mem;
    int *n = m->is_store ? &ns : &nl;
    int cap = m->is_store ? 2 : 4;
    uint64_t a = m->addr, end = m->addr + (m->size ? m->size : 1);
    for (;;) {
      bool dup = false;
      for (int k = 0; k < *n; k++) dup |= slots[k] == a;
      if (!dup && *n < cap && a) slots[(*n)++] = a;
      uint64_t next = (a & ~(uint64_t)63) + 64;
      if (next >= end || *n >= cap) break;
      a = next;
    }
  }
}

/* ---- export ------------------------------------------------------------------------------------ */

#define CHS_BATCH 4096 /* records per lzma_code call */

/* Compress `in` (n bytes, or a finish when action is LZMA_FINISH) into f. */
static wi_rc xz_write(lzma_stream *z, FILE *f, const uint8_t *in, size_t n, lzma_action action,
                      const char *path, wi_err *err) {
  uint8_t out[1 << 16];
  z->next_in = in;
  z->avail_in = n;
  for (;;) {
    z->next_out = out;
    z->avail_out = sizeof out;
    lzma_ret ret = lzma_code(z, action);
    size_t have = sizeof out - z->avail_out;
    if (have && fwrite(out, 1, have, f) != have)
      return wi_fail(err, WI_EIO, "%s: write failed: %s", path, strerror(errno));
    if (ret == LZMA_STREAM_END) return WI_OK;
    if (ret != LZMA_OK) return wi_fail(err, WI_EIO, "%s: xz compression failed (liblzma error %d)", path, (int)ret);
    if (action == LZMA_RUN && z->avail_in == 0) return WI_OK;
  }
}

wi_rc chs_export(const trace_t *t, const char *path, int xz_preset, chs_stats *st, wi_err *err) {
  if (xz_preset < 0 || xz_preset > 9) return wi_fail(err, WI_EINVAL, "xz preset %d is not in 0..9", xz_preset);
  chs_stats s = {0};
  wi_atomic_file af;
  wi_rc rc = atomic_open(&af, path, err);
  if (rc != WI_OK) return rc;
  lzma_stream z = LZMA_STREAM_INIT;
  if (lzma_easy_encoder(&z, (uint32_t)(xz_preset ? xz_preset : 3), LZMA_CHECK_CRC64) != LZMA_OK) {
    atomic_abort(&af);
    return wi_fail(err, WI_EIO, "%s: cannot start the xz encoder", path);
  }
  trace_cursor *c = trace_cursor_new(t, 0); /* model mode: rep runs collapsed */
  chs_instr *buf = xmalloc(CHS_BATCH * sizeof *buf);
  size_t nbuf = 0;
  trace_batch b;
  while (rc == WI_OK && (rc = trace_cursor_next(c, &b, err)) == WI_OK && b.n) {
    for (size_t i = 0; i < b.n && rc == WI_OK; i++) {
      const trace_insn *ti = &b.insns[i];
      chs_make(trace_decoded(t, ti->sid), ti, b.mems, &buf[nbuf]);
      s.branches += buf[nbuf].is_branch;
      s.records++;
      if (++nbuf == CHS_BATCH) {
        rc = xz_write(&z, af.f, (const uint8_t *)buf, nbuf * sizeof *buf, LZMA_RUN, path, err);
        nbuf = 0;
      }
    }
  }
  if (rc == WI_OK) rc = xz_write(&z, af.f, (const uint8_t *)buf, nbuf * sizeof *buf, LZMA_RUN, path, err);
  if (rc == WI_OK) rc = xz_write(&z, af.f, NULL, 0, LZMA_FINISH, path, err);
  free(buf);
  trace_cursor_free(c);
  lzma_end(&z);
  if (rc == WI_OK) {
    fflush(af.f);
    long pos = ftell(af.f);
    s.xz_bytes = pos > 0 ? (uint64_t)pos : 0;
    rc = atomic_commit(&af, err);
  } else {
    atomic_abort(&af);
  }
  if (rc == WI_OK && st) *st = s;
  return rc;
}

/* ---- reading back --------------------------------------------------------------------------------- */

struct chs_reader {
  FILE *f;
  char *path;
  lzma_stream z;
  uint8_t in[1 << 16];
  bool eof, done;
};

chs_reader *chs_reader_open(const char *path, wi_err *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    wi_fail(err, WI_EIO, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  chs_reader *rd = xcalloc(1, sizeof *rd);
  rd->f = f;
  rd->path = xstrdup(path);
  lzma_stream init = LZMA_STREAM_INIT;
  rd->z = init;
  if (lzma_stream_decoder(&rd->z, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
    wi_fail(err, WI_EIO, "%s: cannot start the xz decoder", path);
    chs_reader_close(rd);
    return NULL;
  }
  return rd;
}

int chs_reader_next(chs_reader *rd, chs_instr *r, wi_err *err) {
  if (rd->done) return 0;
  rd->z.next_out = (uint8_t *)r;
  rd->z.avail_out = sizeof *r;
  while (rd->z.avail_out) {
    if (!rd->z.avail_in && !rd->eof) {
      size_t n = fread(rd->in, 1, sizeof rd->in, rd->f);
      if (n < sizeof rd->in) rd->eof = true;
      rd->z.next_in = rd->in;
      rd->z.avail_in = n;
    }
    lzma_ret ret = lzma_code(&rd->z, rd->eof ? LZMA_FINISH : LZMA_RUN);
    if (ret == LZMA_STREAM_END) {
      rd->done = true;
      break;
    }
    if (ret != LZMA_OK) {
      wi_fail(err, WI_ECORRUPT, "%s: xz data is corrupt (liblzma error %d)", rd->path, (int)ret);
      return -1;
    }
  }
  size_t got = sizeof *r - rd->z.avail_out;
  if (got == 0) return 0;
  if (got < sizeof *r) {
    wi_fail(err, WI_ECORRUPT, "%s: ends inside a 64-byte record", rd->path);
    return -1;
  }
  return 1;
}

void chs_reader_close(chs_reader *rd) {
  if (!rd) return;
  lzma_end(&rd->z);
  if (rd->f) fclose(rd->f);
  free(rd->path);
  free(rd);
}
