/* whatif_plugin.c — the QEMU TCG plugin (loaded into qemu-x86_64) that records one .wtr trace
 * of a program's first thread: every executed instruction (a callback per instruction, whose
 * userdata is the static id given at translation, so early block exits are exact), every
 * memory access with QEMU's own size and load/store direction, the mapped objects, signal
 * discontinuities, and a region of interest (skip/max counts, SSC marks, one function call).
 *
 * Arguments (QEMU passes "key=value"): out=PATH (required: the trace to write), skip=N and
 * max=N (raw instructions), roi=all|ssc|func, func=0xADDR (the function's ELF address in the
 * main binary, for roi=func), level=N (zstd level), chunk=N (instructions per chunk),
 * notify=FD (a pipe to the launcher: one line "BIAS LO HI PATH" per object met, so that it can
 * read the object's symbols and debug information while the program runs), seed=N (the bytes
 * getrandom(2) returns to the program, see on_syscall_ret).
 *
 * QEMU calls a plugin through plain function pointers without a context argument, so the
 * recorder's state is one static struct. It is touched by the first guest thread (vcpu 0)
 * only, except translation, which QEMU serialises; once a second thread exists, a mutex
 * guards the writer against translations made by other threads. */

#include <capstone.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pl_sys.h"
#include "qemu_plugin_api.h"
#include "trace.h"
#include "util.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = WHATIF_QEMU_PLUGIN_VERSION;

/* ---- state ------------------------------------------------------------------------------- */

/* Control-transfer class of a static instruction, from a small opcode check at translation:
 * it decides whether a non-sequential next PC is this instruction's doing (a branch outcome)
 * or asynchronous (signal delivery, sigreturn), and drives the call depth of roi=func. */
enum {
  K_SEQ = 0, /* falls through (a different next PC is asynchronous) */
  K_JCC,     /* conditional direct branch: fall-through or target */
  K_JMP,     /* direct jump: target */
  K_CALL,    /* direct call: target */
  K_IJMP,    /* indirect jump: anywhere */
  K_ICALL,   /* indirect call: anywhere */
  K_RET,     /* near return: anywhere */
  K_REP,     /* rep-prefixed string instruction: itself again, or fall-through */
  K_ANY,     /* far transfers, iret: anywhere */
};

typedef struct pl_sinfo {
  uint64_t pc;
  uint64_t fall;   /* pc + length */
  uint64_t target; /* direct branch target, 0 if none */
  uint64_t alt;    /* the other normal successor besides fall (see transfer_ok), or fall */
  uint8_t kind;    /* K_* */
  bool any;        /* every successor is normal (indirect transfers, returns, far ones) */
} pl_sinfo;

/* The bytes the trace holds for a static instruction (its first translation). */
typedef struct pl_code {
  uint8_t len;
  bool rewritten;  /* a later translation of its pc had other bytes */
  uint8_t bytes[15];
} pl_code;

/* A guest address range already looked up in /proc/self/maps. */
typedef struct pl_range {
  uint64_t lo, hi;
} pl_range;

enum { P_BEFORE = 0, P_IN, P_DONE };    /* region of interest not started / open / closed */
enum { ROI_ALL = 0, ROI_SSC, ROI_FUNC };
enum { MARK_NONE = 0, MARK_START, MARK_STOP };

#define SYS_RT_SIGRETURN 15
#define SYS_GETRANDOM 318
#define SYS_EXECVE 59
#define SYS_EXECVEAT 322

static struct pl_state {
  trace_writer *w;
  int roi;               /* ROI_* */
  int phase;             /* P_* */
  uint64_t skip;         /* raw instructions to skip once the region starts */
  uint64_t max;          /* raw instructions to record at most (0: no limit) */
  uint64_t func_vaddr;   /* roi=func: ELF address of the function in the main binary */
  uint64_t start_pc;     /* roi=func: its runtime address, once the main binary is seen */
  char *main_path;       /* canonical path of the main binary */
  bool main_tried;       /* main_path was looked up */
  uint64_t skip_left;    /* instructions still to skip */
  uint64_t n_rec;        /* instructions recorded */
  int64_t depth;         /* roi=func: calls minus returns since the entry */
  bool rec_cur;          /* the instruction executing now is recorded (keep its accesses) */
  bool have_prev;        /* prev holds the last executed instruction of the region */
  bool stop_next;        /* stop before the next instruction (max reached, function returned) */
  bool sigreturn;        /* the syscall being executed is rt_sigreturn */
  bool child;            /* we are a fork()ed child: record nothing, touch no file */
  /* on_exec may take its fast path: region open, no skip left, not stopping, not roi=func,
   * the previous instruction recorded (see upd_fast) */
  bool fast;
  const char *stop_why;  /* reason given when stop_next is acted upon */
  uint32_t prev;         /* static id of the last executed instruction (when have_prev) */
  pl_sinfo *info;        /* by static id */
  size_t n_info;
  VEC(pl_code) code;     /* by static id: bytes as first translated (the trace's) */
  uint64_t n_rewritten;  /* static instructions translated again with other bytes */
  uint64_t rewritten_pc; /* the first of them */
  VEC(pl_range) seen;    /* guest ranges already classified */
  unsigned threads;      /* guest threads started so far (vcpu_init calls) */
  atomic_bool multi;     /* a second guest thread exists: lock around the writer */
  int notify_fd;         /* notify=FD, or -1 */
  /* Decoded access descriptions (size | PL_STORE) by a hash of QEMU's packed meminfo: saves
   * two calls into QEMU per access. Written by vcpu 0 only. */
  qemu_plugin_meminfo_t mi_key[64];
  uint32_t mi_val[64];   /* 0: empty */
  csh cs;                /* instruction lengths at page ends (see full_insn); 0: not opened */
  uint64_t seed;         /* seed=N: getrandom(2) returns bytes of this stream */
  atomic_uint_fast64_t rnd_pos; /* bytes of the seeded stream handed out so far */
  _Atomic uint64_t gbase;       /* host address of guest address 0 (user mode; often 0) */
  atomic_bool gbase_known;      /* gbase is set (by the first translation) */
  bool cs_failed;        /* cs_open failed: keep QEMU's bytes */
  pthread_mutex_t lock;
} R = {.lock = PTHREAD_MUTEX_INITIALIZER, .notify_fd = -1};

/* Take the lock once other threads exist; returns whether it was taken (pass it to unlock). */
static inline bool lock_if_multi(void) {
  if (!atomic_load_explicit(&R.multi, memory_order_acquire)) return false;
  pthread_mutex_lock(&R.lock);
  return true;
}
static inline void unlock_if(bool locked) {
  if (locked) pthread_mutex_unlock(&R.lock);
}

/* ---- instruction classification ---------------------------------------------------------- */

static int64_t rd_s8(const uint8_t *p) { return (int8_t)p[0]; }
static int64_t rd_s32(const uint8_t *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return v;
}

/* Control-transfer class of the x86-64 instruction bytes[0..len) at pc; *target gets a direct
 * branch's target. Only the opcode matters, so prefixes are skipped and operands ignored. */
static uint8_t classify(const uint8_t *b, size_t len, uint64_t pc, uint64_t *target) {
  size_t i = 0;
  bool rep = false, opsize = false;
  *target = 0;
  for (; i < len; i++) { /* legacy prefixes */
    uint8_t p = b[i];
    if (p == 0xf2 || p == 0xf3) rep = true;
    else if (p == 0x66) opsize = true;
    else if (p != 0x67 && p != 0x2e && p != 0x36 && p != 0x3e && p != 0x26 && p != 0x64 &&
             p != 0x65 && p != 0xf0)
      break;
  }
  if (i < len && (b[i] & 0xf0) == 0x40) i++; /* REX */
  if (i >= len) return K_SEQ;
  uint8_t op = b[i++];
  uint64_t fall = pc + len;
  if ((op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3)) { /* jcc, loop*, jrcxz rel8 */
    if (i + 1 <= len) *target = fall + (uint64_t)rd_s8(b + i);
    return K_JCC;
  }
  switch (op) {
  case 0xeb:
    if (i + 1 <= len) *target = fall + (uint64_t)rd_s8(b + i);
    return K_JMP;
  case 0xe9:
  case 0xe8:
    if (opsize || i + 4 > len) return op == 0xe8 ? K_ICALL : K_IJMP; /* odd forms: any target */
    *target = fall + (uint64_t)rd_s32(b + i);
    return op == 0xe8 ? K_CALL : K_JMP;
  case 0xc2:
  case 0xc3:
    return K_RET;
  case 0xca:
  case 0xcb:
  case 0xcf:
    return K_ANY;
  case 0xff:
    if (i < len) {
      unsigned reg = (b[i] >> 3) & 7;
      if (reg == 2) return K_ICALL;
      if (reg == 4) return K_IJMP;
      if (reg == 3 || reg == 5) return K_ANY;
    }
    return K_SEQ;
  case 0x0f:
    if (i < len && b[i] >= 0x80 && b[i] <= 0x8f) { /* jcc rel32 */
      if (i + 5 <= len) *target = fall + (uint64_t)rd_s32(b + i + 1);
      return K_JCC;
    }
    return K_SEQ; /* syscall, ud2, ...: a different next PC is asynchronous */
  case 0xa4: case 0xa5: case 0xa6: case 0xa7: case 0xaa: case 0xab:
  case 0xac: case 0xad: case 0xae: case 0xaf: case 0x6c: case 0x6d: case 0x6e: case 0x6f:
    return rep ? K_REP : K_SEQ;
  default:
    return K_SEQ;
  }
}

/* Whether next is a normal successor of instruction p (other than its fall-through). */
static inline bool transfer_ok(const pl_sinfo *p, uint64_t next) {
  switch (p->kind) {
  case K_SEQ: return false;
  case K_JCC:
  case K_JMP:
  case K_CALL: return next == p->target;
  case K_REP: return next == p->pc;
  default: return true;
  }
}

static void note_static(uint32_t sid, uint64_t pc, size_t len, const uint8_t *bytes) {
  if (sid >= R.n_info) {
    size_t n = R.n_info ? R.n_info : 1024;
    while (n <= sid) n *= 2;
    R.info = xrealloc(R.info, n * sizeof *R.info);
    memset(R.info + R.n_info, 0, (n - R.n_info) * sizeof *R.info);
    R.n_info = n;
  }
  pl_sinfo *s = &R.info[sid];
  s->pc = pc;
  s->fall = pc + len;
  s->kind = classify(bytes, len, pc, &s->target);
  /* transfer_ok in two compares and a flag, for on_exec's fast path */
  s->any = s->kind == K_IJMP || s->kind == K_ICALL || s->kind == K_RET || s->kind == K_ANY;
  s->alt = s->kind == K_JCC || s->kind == K_JMP || s->kind == K_CALL ? s->target
           : s->kind == K_REP                                       ? pc
                                                                    : s->fall;
}

/* Keep the bytes of a new static instruction; count one whose pc comes back with other bytes
 * (code the program rewrote: self-modifying code, a JIT compiler reusing an address). The
 * trace identifies an instruction by its pc alone and keeps the first bytes, so the later
 * version is decoded wrongly: finish() says so. */
static void note_code(uint32_t sid, uint64_t pc, size_t len, const uint8_t *bytes) {
  if (sid == R.code.n) {
    pl_code c = {.len = (uint8_t)len};
    memcpy(c.bytes, bytes, len);
    VEC_PUSH(R.code, c);
    return;
  }
  if (sid > R.code.n) return; /* cannot happen: static ids are handed out in order */
  pl_code *c = &R.code.a[sid];
  if (c->rewritten || (c->len == len && !memcmp(c->bytes, bytes, len))) return;
  c->rewritten = true;
  if (!R.n_rewritten++) R.rewritten_pc = pc;
}

/* Whether next is a normal successor of p (fall-through or transfer_ok), from alt and any. */
static inline bool normal_next(const pl_sinfo *p, uint64_t next) {
  return next == p->fall || next == p->alt || p->any;
}

/* Recompute R.fast after a change of the state it depends on. */
static inline void upd_fast(void) {
  R.fast = R.phase == P_IN && R.roi != ROI_FUNC && !R.skip_left && !R.stop_next && R.have_prev &&
           R.rec_cur && !R.child && R.w;
}

/* SSC mark: the instruction `64 67 90` right after `bb 6f 00 00 00` (mov ebx, 111: start) or
 * `bb de 00 00 00` (mov ebx, 222: stop). prev is the preceding instruction of the block, or
 * NULL at a block start, where the 5 bytes before haddr are read when on the same page. */
static int ssc_mark(const uint8_t *b, size_t len, const uint8_t *prev, size_t prev_len,
                    const void *haddr) {
  if (len != 3 || b[0] != 0x64 || b[1] != 0x67 || b[2] != 0x90) return MARK_NONE;
  const uint8_t *m = NULL;
  if (prev) m = prev_len == 5 ? prev : NULL;
  else if (haddr && ((uintptr_t)haddr & 4095) >= 5) m = (const uint8_t *)haddr - 5;
  if (!m || m[0] != 0xbb || m[2] || m[3] || m[4]) return MARK_NONE;
  return m[1] == 111 ? MARK_START : m[1] == 222 ? MARK_STOP : MARK_NONE;
}

/* QEMU 7.2 ends a translation block before an instruction that crosses into the next page
 * (unless it comes first) but still lists it as the block's last instruction, with only the
 * bytes it had read from the first page: the 3-byte `cmp eax, 1` at a page's last byte comes
 * as the single byte 83. Its first translation gives the trace its static entry, so the
 * instruction would decode as "(bad)" and its successor look like a discontinuity. For an
 * instruction that may cross (it starts within 15 bytes of its page end), take up to 15 bytes
 * from guest memory (user mode: guest pages are host pages at a fixed offset, so haddr runs
 * on into the next page) and its length from Capstone. Returns the length; *bytes is then buf
 * (or stays QEMU's data when nothing needs correcting or the bytes cannot be read). */
static size_t full_insn(const struct qemu_plugin_insn *insn, uint64_t pc, size_t len,
                        const uint8_t **bytes, uint8_t buf[15]) {
  uint64_t to_end = 4096 - (pc & 4095); /* bytes left on pc's page */
  if (to_end >= 15 || len > to_end || R.cs_failed) return len;
  const uint8_t *haddr = qemu_plugin_insn_haddr(insn);
  if (!haddr) return len;
  if (!R.cs && cs_open(CS_ARCH_X86, CS_MODE_64, &R.cs) != CS_ERR_OK) {
    R.cs = 0;
    R.cs_failed = true;
    return len;
  }
  size_t got = pl_read_self(buf, haddr, (size_t)to_end, 15 - (size_t)to_end);
  if (got < len || memcmp(buf, *bytes, len) != 0) return len; /* unreadable, or not these bytes */
  cs_insn *ci = NULL;
  size_t full = cs_disasm(R.cs, buf, got, pc, 1, &ci) == 1 ? ci->size : 0;
  cs_free(ci, 1);
  if (full <= len || full > got) return len;
  *bytes = buf;
  return full;
}

/* ---- mapped objects ---------------------------------------------------------------------- */

/* Bias and executable range of the ELF file at path, given that its file offset `off` is
 * mapped at guest address `gaddr`. false if it is not a readable 64-bit ELF file. */
static bool elf_layout(const char *path, uint64_t gaddr, uint64_t off, uint64_t *bias,
                       uint64_t *lo, uint64_t *hi) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  Elf64_Ehdr eh;
  bool ok = pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
            eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) &&
            eh.e_phnum > 0 && eh.e_phnum < 1024;
  Elf64_Phdr *ph = NULL;
  if (ok) {
    size_t n = (size_t)eh.e_phnum * sizeof(Elf64_Phdr);
    ph = xmalloc(n);
    ok = pread(fd, ph, n, (off_t)eh.e_phoff) == (ssize_t)n;
  }
  close(fd);
  if (!ok) {
    free(ph);
    return false;
  }
  /* The PT_LOAD whose page-aligned file range holds off: guest = vaddr - p_offset + off + bias. */
  bool found = false;
  for (unsigned i = 0; i < eh.e_phnum && !found; i++) {
    if (ph[i].p_type != PT_LOAD) continue;
    uint64_t start = ph[i].p_offset & ~(uint64_t)4095, end = ph[i].p_offset + ph[i].p_filesz;
    if (off >= start && off < end) {
      *bias = gaddr - off - (ph[i].p_vaddr - ph[i].p_offset);
      found = true;
    }
  }
  *lo = UINT64_MAX;
  *hi = 0;
  for (unsigned i = 0; found && i < eh.e_phnum; i++) {
    if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X)) continue;
    *lo = WI_MIN(*lo, ph[i].p_vaddr + *bias);
    *hi = WI_MAX(*hi, ph[i].p_vaddr + ph[i].p_memsz + *bias);
  }
  free(ph);
  return found && *lo < *hi;
}

/* Tell the launcher about an object (one write, atomic for a pipe; a full pipe drops it). */
static void notify_object(const char *path, uint64_t bias, uint64_t lo, uint64_t hi) {
  if (R.notify_fd < 0) return;
  char line[PATH_MAX + 80];
  int n = snprintf(line, sizeof line, "%llx %llx %llx %s\n", (unsigned long long)bias,
                   (unsigned long long)lo, (unsigned long long)hi, path);
  if (n <= 0 || (size_t)n >= sizeof line || strchr(path, '\n')) return;
  ssize_t w = write(R.notify_fd, line, (size_t)n);
  (void)w; /* the launcher only uses this to work ahead; the trace has the objects anyway */
}

/* Called for the first instruction of every translated block: if its address lies in no
 * range seen before, find the host mapping behind it in QEMU's own /proc/self/maps (guest
 * memory is host memory at guest_base = haddr - vaddr) and, when it is file-backed, record the
 * object with its load bias. Code outside any file (JIT, vdso) stays decodable from the static
 * table's bytes. */
static void learn_object(uint64_t vaddr, const void *haddr) {
  for (size_t i = 0; i < R.seen.n; i++)
    if (vaddr >= R.seen.a[i].lo && vaddr < R.seen.a[i].hi) return;
  if (!haddr) return;
  uint64_t gbase = (uint64_t)(uintptr_t)haddr - vaddr, h = (uint64_t)(uintptr_t)haddr;
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return;
  char line[PATH_MAX + 256];
  bool done = false;
  while (!done && fgets(line, sizeof line, f)) {
    unsigned long long start, end, off;
    char perms[8];
    int pos = 0;
    if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &pos) < 4) continue;
    if (h < start || h >= end) continue;
    done = true;
    char *path = line + pos;
    path[strcspn(path, "\n")] = 0;
    char *del = strstr(path, " (deleted)");
    if (del) *del = 0;
    uint64_t bias = 0, lo = 0, hi = 0;
    if (path[0] == '/' && elf_layout(path, start - gbase, off, &bias, &lo, &hi)) {
      tw_object(R.w, path, bias, lo, hi);
      notify_object(path, bias, lo, hi);
      pl_range r = {lo, hi};
      VEC_PUSH(R.seen, r);
      if (R.main_path && !strcmp(path, R.main_path) && R.roi == ROI_FUNC && !R.start_pc)
        R.start_pc = R.func_vaddr + bias;
    }
    /* Also remember the mapping itself (anonymous, or a file that is not ELF). */
    pl_range m = {start - gbase, end - gbase};
    VEC_PUSH(R.seen, m);
  }
  fclose(f);
}

/* ---- recording ----------------------------------------------------------------------------- */

/* Close the region: write the trace and stop recording. When the next instruction is known
 * (next_pc), the last transfer is classified and where execution stopped is recorded. */
static void finish(const char *why, bool have_next, uint64_t next_pc) {
  if (R.phase == P_DONE || R.child) return;
  R.phase = P_DONE;
  R.fast = false;
  if (have_next && R.have_prev && R.n_rec) {
    const pl_sinfo *p = &R.info[R.prev];
    if (R.rec_cur && next_pc != p->fall && !transfer_ok(p, next_pc)) tw_async(R.w);
    tw_end_pc(R.w, next_pc);
  }
  R.rec_cur = false;
  if (R.notify_fd >= 0) close(R.notify_fd);
  R.notify_fd = -1;
  char buf[64];
  if (R.threads > 1) snprintf(buf, sizeof buf, "%u seen; first recorded", R.threads);
  else snprintf(buf, sizeof buf, "1");
  tw_meta(R.w, "threads", buf);
  tw_meta(R.w, "stop", why);
  if (R.n_rewritten) {
    char rw[160];
    snprintf(rw, sizeof rw, "%llu executed instruction%s (first at 0x%llx); the trace has the first bytes",
             (unsigned long long)R.n_rewritten, R.n_rewritten == 1 ? "" : "s", (unsigned long long)R.rewritten_pc);
    tw_meta(R.w, "rewritten", rw);
    fprintf(stderr,
            "whatif: warning: the program rewrote code it had run (self-modifying or JIT code: %s); "
            "the model decodes the later versions wrongly\n", rw);
  }
  wi_err err = {0};
  if (tw_close(R.w, &err) != WI_OK) fprintf(stderr, "whatif: writing the trace: %s\n", err.msg);
  R.w = NULL;
}

/* One executed instruction of the open region. */
static inline void exec_in(uint32_t sid) {
  const pl_sinfo *cur = &R.info[sid];
  if (R.stop_next) {
    finish(R.stop_why, true, cur->pc);
    return;
  }
  const pl_sinfo *prev = &R.info[R.prev];
  bool async = R.have_prev && cur->pc != prev->fall && !transfer_ok(prev, cur->pc);
  if (R.skip_left) {
    R.skip_left--;
    R.rec_cur = false;
  } else {
    if (async && R.rec_cur) tw_async(R.w);
    tw_exec(R.w, sid);
    R.rec_cur = true;
    if (++R.n_rec == R.max) {
      R.stop_next = true;
      R.stop_why = "max";
    }
  }
  if (R.roi == ROI_FUNC) {
    /* A signal delivery enters a handler that will `ret` to the restorer: count it as a call.
     * sigreturn leaves without a ret and is not counted. */
    if (async && !R.sigreturn) R.depth++;
    if (cur->kind == K_CALL || cur->kind == K_ICALL) {
      R.depth++;
    } else if (cur->kind == K_RET) {
      if (R.depth == 0 && !R.stop_next) {
        R.stop_next = true;
        R.stop_why = "return";
      }
      R.depth--;
    }
  }
  R.sigreturn = false;
  R.prev = sid;
  R.have_prev = true;
  upd_fast();
}

static void on_exec_slow(unsigned int vcpu, uint32_t sid);

/* Once per executed guest instruction (the hottest code of the recorder). flatten: with the
 * plugin's link-time optimisation, the writer's append (trace.c) is inlined here too. */
static __attribute__((flatten)) void on_exec(unsigned int vcpu, void *ud) {
  uint32_t sid = (uint32_t)(uintptr_t)ud;
  if (__builtin_expect(vcpu == 0 && R.fast && !atomic_load_explicit(&R.multi, memory_order_acquire), 1)) {
    /* exec_in for the common case: region open, previous instruction recorded, nothing to
     * skip, no stop pending, not roi=func (no call depth) */
    const pl_sinfo *cur = &R.info[sid];
    if (__builtin_expect(!normal_next(&R.info[R.prev], cur->pc), 0)) tw_async(R.w);
    tw_exec(R.w, sid);
    R.prev = sid;
    if (__builtin_expect(++R.n_rec == R.max, 0)) {
      R.stop_next = true;
      R.stop_why = "max";
      R.fast = false;
    }
    return;
  }
  on_exec_slow(vcpu, sid);
}

static __attribute__((noinline)) void on_exec_slow(unsigned int vcpu, uint32_t sid) {
  if (vcpu != 0) return;
  if (R.phase == P_IN) {
    bool lk = lock_if_multi();
    if (R.phase == P_IN) exec_in(sid);
    unlock_if(lk);
  } else if (R.phase == P_BEFORE && R.roi == ROI_FUNC && R.start_pc) {
    bool lk = lock_if_multi();
    if (R.phase == P_BEFORE && R.info[sid].pc == R.start_pc) {
      R.phase = P_IN;
      R.skip_left = R.skip;
      exec_in(sid);
    }
    upd_fast();
    unlock_if(lk);
  }
}

/* An SSC start mark: opens the region (from the next instruction) when roi=ssc. */
static void on_mark_start(unsigned int vcpu, void *ud) {
  if (vcpu != 0) return;
  if (R.phase == P_BEFORE && R.roi == ROI_SSC) {
    bool lk = lock_if_multi();
    R.phase = P_IN;
    R.skip_left = R.skip;
    upd_fast();
    unlock_if(lk);
    return;
  }
  on_exec(vcpu, ud);
}

/* An SSC stop mark: closes the region (before the mark) when roi=ssc. */
static void on_mark_stop(unsigned int vcpu, void *ud) {
  if (vcpu != 0) return;
  if (R.phase == P_IN && R.roi == ROI_SSC) {
    bool lk = lock_if_multi();
    finish(R.stop_next ? R.stop_why : "ssc", true, R.info[(uint32_t)(uintptr_t)ud].pc);
    unlock_if(lk);
    return;
  }
  on_exec(vcpu, ud);
}

#define PL_STORE (1u << 31)

/* Size in bytes | PL_STORE for QEMU's packed access description (cached by value). */
static inline uint32_t mem_desc(qemu_plugin_meminfo_t info) {
  unsigned slot = (info ^ (info >> 6) ^ (info >> 16)) & 63;
  if (__builtin_expect(R.mi_key[slot] != info || !R.mi_val[slot], 0)) {
    R.mi_key[slot] = info;
    R.mi_val[slot] = (1u << qemu_plugin_mem_size_shift(info)) | (qemu_plugin_mem_is_store(info) ? PL_STORE : 0);
  }
  return R.mi_val[slot];
}

/* Once per memory access of a guest instruction. */
static __attribute__((flatten)) void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *ud) {
  (void)ud;
  if (vcpu != 0 || !R.rec_cur) return;
  uint32_t d = mem_desc(info);
  if (__builtin_expect(R.fast && !atomic_load_explicit(&R.multi, memory_order_acquire), 1)) {
    tw_mem(R.w, vaddr, d & ~PL_STORE, (d & PL_STORE) != 0); /* R.fast: recording, one thread */
    return;
  }
  bool lk = lock_if_multi();
  if (R.rec_cur) tw_mem(R.w, vaddr, d & ~PL_STORE, (d & PL_STORE) != 0);
  unlock_if(lk);
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  if (R.child) return;
  pthread_mutex_lock(&R.lock); /* translations of other threads may race with vcpu 0 */
  if (!R.main_tried) {
    /* Only valid once the guest task exists (it crashes QEMU at install time). */
    R.main_tried = true;
    const char *bin = qemu_plugin_path_to_binary();
    R.main_path = bin ? realpath(bin, NULL) : NULL;
  }
  if (R.phase != P_DONE) {
    size_t n = qemu_plugin_tb_n_insns(tb);
    const uint8_t *prev = NULL;
    size_t prev_len = 0;
    uint8_t full[2][15]; /* corrected bytes of this and the previous instruction (prev) */
    for (size_t i = 0; i < n; i++) {
      struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
      uint64_t pc = qemu_plugin_insn_vaddr(insn);
      size_t len = qemu_plugin_insn_size(insn);
      const uint8_t *bytes = qemu_plugin_insn_data(insn);
      len = full_insn(insn, pc, len, &bytes, full[i & 1]);
      const void *haddr = i == 0 ? qemu_plugin_insn_haddr(insn) : NULL;
      if (i == 0 && haddr && !atomic_load(&R.gbase_known)) {
        atomic_store(&R.gbase, (uint64_t)(uintptr_t)haddr - pc);
        atomic_store(&R.gbase_known, true);
      }
      if (i == 0) learn_object(pc, haddr);
      uint32_t sid = len >= 1 && len <= 15 ? tw_static(R.w, pc, (uint8_t)len, bytes) : UINT32_MAX;
      if (sid == UINT32_MAX) { /* cannot happen for x86-64 code; never index with it */
        fprintf(stderr, "whatif: instruction at 0x%llx has length %zu; not recorded\n",
                (unsigned long long)pc, len);
        continue;
      }
      note_code(sid, pc, len, bytes);
      note_static(sid, pc, len, bytes);
      int mark = ssc_mark(bytes, len, prev, prev_len, haddr);
      qemu_plugin_vcpu_udata_cb_t cb =
          mark == MARK_START ? on_mark_start : mark == MARK_STOP ? on_mark_stop : on_exec;
      qemu_plugin_register_vcpu_insn_exec_cb(insn, cb, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)sid);
      qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, NULL);
      prev = bytes;
      prev_len = len;
    }
  }
  pthread_mutex_unlock(&R.lock);
}

/* The buffer of the getrandom(2) call this guest thread is in (entry and return callbacks of
 * a syscall run on the thread that makes it). */
static _Thread_local uint64_t rnd_buf;

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
                       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                       uint64_t a7, uint64_t a8) {
  (void)id, (void)a2, (void)a3, (void)a4, (void)a5, (void)a6, (void)a7, (void)a8;
  if (num == SYS_GETRANDOM) rnd_buf = a1;
  if (vcpu != 0 || R.child) return;
  if (num == SYS_RT_SIGRETURN) R.sigreturn = true;
  if ((num == SYS_EXECVE || num == SYS_EXECVEAT) && R.phase != P_DONE) {
    /* The process image is about to be replaced: nothing after this would be written. */
    bool lk = lock_if_multi();
    finish("exec", false, 0);
    unlock_if(lk);
  }
}

/* QEMU's -seed makes the guest's AT_RANDOM bytes reproducible but passes getrandom(2) to the
 * host, so a program that seeds itself from it (Python's hash secret) ran differently in every
 * recording. Overwrite what the kernel returned with the next bytes of a stream derived from
 * seed=N (splitmix64 of the stream position), so that `whatif record --seed N` repeats. */
static void on_syscall_ret(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, int64_t ret) {
  (void)id, (void)vcpu;
  if (num != SYS_GETRANDOM || ret <= 0 || !rnd_buf || !atomic_load(&R.gbase_known)) return;
  uint8_t *p = (uint8_t *)(uintptr_t)(atomic_load(&R.gbase) + rnd_buf);
  uint64_t pos = atomic_fetch_add(&R.rnd_pos, (uint64_t)ret);
  for (int64_t i = 0; i < ret; i++, pos++) {
    uint64_t z = R.seed + (pos / 8 + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    p[i] = (uint8_t)(z >> (8 * (pos % 8)));
  }
  rnd_buf = 0;
}

static void on_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu) {
  (void)id;
  if (R.child) return;
  pthread_mutex_lock(&R.lock); /* threads may start threads concurrently */
  /* One call per guest thread, the first one included (QEMU reuses the indices of threads
   * that ended, so the highest index would undercount). */
  R.threads++;
  bool first_extra = vcpu >= 1 && !atomic_load(&R.multi);
  /* From here on, vcpu 0's callbacks lock around the writer too. */
  if (first_extra) atomic_store(&R.multi, true);
  pthread_mutex_unlock(&R.lock);
  if (first_extra) fprintf(stderr, "whatif: program started threads; recording the first thread only\n");
}

static void on_atexit(qemu_plugin_id_t id, void *ud) {
  (void)id, (void)ud;
  /* Normal exit (exit/exit_group). QEMU 8 also comes here when the guest dies from a signal;
   * QEMU 7.2 does not, which on_fatal_signal covers. */
  if (R.child) return;
  pthread_mutex_lock(&R.lock);
  finish(R.phase == P_IN && R.stop_next ? R.stop_why : "exit", false, 0);
  pthread_mutex_unlock(&R.lock);
}

/* QEMU is about to kill itself with sig (a fatal guest signal, or a crash of any thread):
 * write the trace up to here. A lock held by a stopped thread must not hang the exit. */
static void on_fatal_signal(int sig) {
  if (R.child || R.phase == P_DONE) return;
  bool locked = pthread_mutex_trylock(&R.lock) == 0;
  char why[96];
  snprintf(why, sizeof why, "signal %d (%s)", sig, pl_signal_name(sig));
  finish(why, false, 0);
  if (locked) pthread_mutex_unlock(&R.lock);
}

/* In a fork()ed child the writer's thread does not exist and the file belongs to the parent. */
static void on_fork_child(void) {
  R.child = true;
  R.fast = false;
  R.phase = P_DONE;
  R.rec_cur = false;
  R.w = NULL;
  if (R.notify_fd >= 0) close(R.notify_fd);
  R.notify_fd = -1;
  atomic_store(&R.multi, false);
  pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
  R.lock = fresh;
}

/* ---- installation ---------------------------------------------------------------------------- */

static bool arg_u64(const char *s, uint64_t *out) {
  char *end = NULL;
  if (!*s) return false;
  unsigned long long v = strtoull(s, &end, 0);
  if (*end) return false;
  *out = v;
  return true;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv) {
  if (info->version.min > WHATIF_QEMU_PLUGIN_VERSION || info->version.cur < WHATIF_QEMU_PLUGIN_VERSION) {
    fprintf(stderr,
            "whatif: this QEMU implements plugin API versions %d..%d; the recorder needs version %d "
            "(QEMU 7.x)\n",
            info->version.min, info->version.cur, WHATIF_QEMU_PLUGIN_VERSION);
    return -1;
  }
  if (info->system_emulation || !info->target_name || strcmp(info->target_name, "x86_64") != 0) {
    fprintf(stderr, "whatif: the recorder plugin needs qemu-x86_64 in user mode (got %s%s)\n",
            info->target_name ? info->target_name : "?", info->system_emulation ? ", system mode" : "");
    return -1;
  }
  const char *out = NULL;
  uint64_t level = 0, chunk = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *eq = strchr(a, '=');
    if (!eq) {
      fprintf(stderr, "whatif: plugin argument '%s' is not key=value\n", a);
      return -1;
    }
    size_t kl = (size_t)(eq - a);
    const char *v = eq + 1;
    bool ok = true;
    if (kl == 3 && !strncmp(a, "out", kl)) out = v;
    else if (kl == 4 && !strncmp(a, "skip", kl)) ok = arg_u64(v, &R.skip);
    else if (kl == 3 && !strncmp(a, "max", kl)) ok = arg_u64(v, &R.max);
    else if (kl == 4 && !strncmp(a, "seed", kl)) ok = arg_u64(v, &R.seed);
    else if (kl == 4 && !strncmp(a, "func", kl)) ok = arg_u64(v, &R.func_vaddr) && R.func_vaddr;
    else if (kl == 5 && !strncmp(a, "level", kl)) ok = arg_u64(v, &level) && level <= 22;
    else if (kl == 5 && !strncmp(a, "chunk", kl)) ok = arg_u64(v, &chunk) && chunk <= UINT32_MAX;
    else if (kl == 6 && !strncmp(a, "notify", kl)) {
      uint64_t fd = 0;
      ok = arg_u64(v, &fd) && fd <= INT_MAX;
      /* A stale or wrong descriptor only disables the notifications. */
      if (ok && fcntl((int)fd, F_GETFD) >= 0) {
        R.notify_fd = (int)fd;
        fcntl(R.notify_fd, F_SETFD, FD_CLOEXEC); /* not into programs the guest execs */
        fcntl(R.notify_fd, F_SETFL, O_NONBLOCK);
      }
    }
    else if (kl == 3 && !strncmp(a, "roi", kl)) {
      if (!strcmp(v, "all")) R.roi = ROI_ALL;
      else if (!strcmp(v, "ssc")) R.roi = ROI_SSC;
      else if (!strcmp(v, "func")) R.roi = ROI_FUNC;
      else ok = false;
    } else {
      fprintf(stderr, "whatif: unknown plugin argument '%s'\n", a);
      return -1;
    }
    if (!ok) {
      fprintf(stderr, "whatif: bad plugin argument '%s'\n", a);
      return -1;
    }
  }
  if (!out) {
    fprintf(stderr, "whatif: plugin argument out=PATH is missing\n");
    return -1;
  }
  if (R.roi == ROI_FUNC && !R.func_vaddr) {
    fprintf(stderr, "whatif: roi=func needs func=ADDRESS\n");
    return -1;
  }
  trace_writer_opts opts = {.chunk_insns = (uint32_t)chunk, .zstd_level = (int)level, .threaded = true,
                            .merge_split = true};
  /* The writer's compression thread must never receive guest signals: QEMU's host signal
   * handler assumes it runs on a vCPU thread. Threads inherit the mask at creation. */
  pl_sigmask old;
  pl_block_signals(&old);
  wi_err err = {0};
  R.w = tw_open(out, &opts, &err);
  pl_restore_signals(&old);
  if (!R.w) {
    fprintf(stderr, "whatif: %s\n", err.msg);
    return -1;
  }
  R.phase = R.roi == ROI_ALL ? P_IN : P_BEFORE;
  R.skip_left = R.roi == ROI_ALL ? R.skip : 0;
  pthread_atfork(NULL, NULL, on_fork_child);
  if (!pl_hook_fatal_kill(on_fatal_signal))
    fprintf(stderr, "whatif: warning: cannot hook QEMU's kill(); a crashing program's trace will be lost\n");
  qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
  qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
  qemu_plugin_register_vcpu_syscall_ret_cb(id, on_syscall_ret);
  qemu_plugin_register_atexit_cb(id, on_atexit, NULL);
  return 0;
}
