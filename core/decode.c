/* decode.c — x86-64 decoder: Capstone 4 (detail on) into the ISA-neutral dec_insn record, with
 * our own rule tables for what Capstone gets wrong, and the per-trace PC -> record cache. */
#include "decode.h"

#include <capstone.h>
#include <stdlib.h>
#include <string.h>

#include "dec_int.h"
#include "trace.h"
#include "util.h"

/* How the pieces fit. Capstone gives operands (with access flags), implicit registers, an
 * eflags bitmask and an instruction id. Per id we look up one row of a sorted mnemonic table
 * (resolved once per decoder, so decoding is a table index, not a string search). The row
 * gives the operation class and rules; rules say how to read memory-operand direction,
 * moves, zero idioms, flags and the implicit operands Capstone omits. Capstone's own
 * access flags are trusted only for register operands; memory direction comes from the
 * instruction form (see R_* below).
 *
 * Modelling decisions (the record is a static best guess; the trace's recorded accesses are
 * authoritative for memory):
 * - Memory operands are listed in access order, reads before writes (push [m], pop [m],
 *   call [m], movs). Sizes are bytes, 0 when unknown or above 255 (xsave, fxsave).
 * - RSP of push/pop/call/ret/enter is an address source (addr_src) and a destination;
 *   leave's address is rbp. String instructions read and write rsi/rdi (src, addr_src, dst)
 *   and, with a rep prefix, rcx.
 * - RG_FLAGS is the status flags (OF SF ZF AF PF CF). DF/IF/TF are not tracked (string
 *   instructions would otherwise depend on the last compare). Partial flag writers (inc,
 *   dec, rol, bt) count as full writers: cores rename CF apart, so there is no merge. A
 *   shift by cl also reads FLAGS (a count of 0 leaves them unchanged).
 * - Partial registers: see write_merges (the one place the rule lives).
 * - Zero idioms (xor, sub, pxor, xorps, xorpd, psubX, pcmpgtX with identical sources on a 32/64-bit
 *   GPR or a vector register): IC_ZERO, DF_ZERO_IDIOM, no sources. pcmpeqX with identical
 *   sources is the all-ones idiom: DF_ZERO_IDIOM and no sources, but it keeps its class
 *   (it still executes). sbb r,r is an ordinary ALU op (reads the register and CF).
 * - Serializing: cpuid, lfence, mfence, rdtsc, rdtscp, xgetbv, syscall are IC_SERIAL with
 *   DF_SERIAL. sfence only orders stores: IC_SERIAL without DF_SERIAL.
 * - prefetchX: IC_NOP with no operands and n_mem 0 (QEMU reports no access for it and the
 *   model treats it as a no-op). nop [m] and lea access no memory.
 * - xchg with memory: IC_ATOMIC and DF_LOCK (locked without the prefix). cmpxchg with memory
 *   is IC_ATOMIC with or without lock (insn.h); xadd without lock is IC_ALU.
 * - mov reg, imm is IC_ALU; movd/movq between a GPR and a vector register IC_CONVERT;
 *   movss/movsd register forms are blends (IC_SHUFFLE); broadcast from memory IC_LOAD.
 * - Shuffles: IC_PERMUTE when data crosses a 128-bit lane (vpermd/q/ps/pd, vperm2x128,
 *   vinsert/vextract of a 128-bit lane between registers, ymm broadcasts from a register,
 *   vpmovzx/sx into ymm), IC_SHUFFLE when it stays in its lane (pshufb, unpck, palignr,
 *   vpermilps, xmm broadcasts). Golden Cove has a cross-lane unit on port 5 only
 *   (llvm-mca -mcpu=sapphirerapids, uops.info); vinserti128 from memory is a load and a
 *   blend (IC_VEC_ALU), vextracti128 to memory a store.
 * - bt/bts/btr/btc are IC_SHIFT (they run on the shift ports).
 * - Gathers: one memory operand of the element size; the destination is also a source
 *   (unselected elements keep it) and the mask register is written (cleared).
 * - x87 uses static st(i) names: most operations read and write st0 and read their st(i)
 *   operands; stack-top movement is not modelled. FPSW is written by operations that set
 *   condition codes and read by fnstsw/fnstcw; fldcw writes it.
 * - vzeroupper: IC_NOP without registers (families do not split off the upper halves).
 * - Mnemonics without a row: IC_OTHER with Capstone's registers and directions. */

/* ==== register families ==================================================================== */

/* Register kinds: what a write to the register does to the rest of its family. */
enum {
  RK_NONE = 0, /* not tracked (rip, eiz, cs/ds/es/ss, control/debug registers) */
  RK_GPR8,     /* al, bl, sil, r8b ... */
  RK_GPR8H,    /* ah, bh, ch, dh */
  RK_GPR16,
  RK_GPR32,
  RK_GPR64,
  RK_XMM,
  RK_YMM,
  RK_ZMM,
  RK_MM,    /* MMX (aliases the x87 stack registers) */
  RK_ST,    /* x87 stack register */
  RK_K,     /* AVX-512 mask */
  RK_OTHER, /* flags, fpsw, fs/gs base: whole registers */
};

typedef struct dec_reg {
  int8_t fam;   /* REG_* family, or -1 when not tracked */
  uint8_t kind; /* RK_* */
} dec_reg;

/* Family and kind of a Capstone register id. */
static dec_reg reg_info(unsigned r) {
  if (r >= X86_REG_XMM0 && r <= X86_REG_XMM31)
    return (dec_reg){(int8_t)(RG_V0 + ((r - X86_REG_XMM0) & 15)), RK_XMM}; /* 16-31 fold */
  if (r >= X86_REG_YMM0 && r <= X86_REG_YMM31)
    return (dec_reg){(int8_t)(RG_V0 + ((r - X86_REG_YMM0) & 15)), RK_YMM};
  if (r >= X86_REG_ZMM0 && r <= X86_REG_ZMM31)
    return (dec_reg){(int8_t)(RG_V0 + ((r - X86_REG_ZMM0) & 15)), RK_ZMM};
  if (r >= X86_REG_ST0 && r <= X86_REG_ST7) return (dec_reg){(int8_t)(RG_ST0 + (r - X86_REG_ST0)), RK_ST};
  if (r >= X86_REG_FP0 && r <= X86_REG_FP7) return (dec_reg){(int8_t)(RG_ST0 + (r - X86_REG_FP0)), RK_ST};
  if (r >= X86_REG_MM0 && r <= X86_REG_MM7) return (dec_reg){(int8_t)(RG_ST0 + (r - X86_REG_MM0)), RK_MM};
  if (r >= X86_REG_K0 && r <= X86_REG_K7) return (dec_reg){(int8_t)(RG_K0 + (r - X86_REG_K0)), RK_K};
  if (r >= X86_REG_R8 && r <= X86_REG_R15) return (dec_reg){(int8_t)(RG_R8 + (r - X86_REG_R8)), RK_GPR64};
  if (r >= X86_REG_R8D && r <= X86_REG_R15D) return (dec_reg){(int8_t)(RG_R8 + (r - X86_REG_R8D)), RK_GPR32};
  if (r >= X86_REG_R8W && r <= X86_REG_R15W) return (dec_reg){(int8_t)(RG_R8 + (r - X86_REG_R8W)), RK_GPR16};
  if (r >= X86_REG_R8B && r <= X86_REG_R15B) return (dec_reg){(int8_t)(RG_R8 + (r - X86_REG_R8B)), RK_GPR8};
  switch (r) {
  case X86_REG_AL: return (dec_reg){RG_RAX, RK_GPR8};
  case X86_REG_AH: return (dec_reg){RG_RAX, RK_GPR8H};
  case X86_REG_AX: return (dec_reg){RG_RAX, RK_GPR16};
  case X86_REG_EAX: return (dec_reg){RG_RAX, RK_GPR32};
  case X86_REG_RAX: return (dec_reg){RG_RAX, RK_GPR64};
  case X86_REG_CL: return (dec_reg){RG_RCX, RK_GPR8};
  case X86_REG_CH: return (dec_reg){RG_RCX, RK_GPR8H};
  case X86_REG_CX: return (dec_reg){RG_RCX, RK_GPR16};
  case X86_REG_ECX: return (dec_reg){RG_RCX, RK_GPR32};
  case X86_REG_RCX: return (dec_reg){RG_RCX, RK_GPR64};
  case X86_REG_DL: return (dec_reg){RG_RDX, RK_GPR8};
  case X86_REG_DH: return (dec_reg){RG_RDX, RK_GPR8H};
  case X86_REG_DX: return (dec_reg){RG_RDX, RK_GPR16};
  case X86_REG_EDX: return (dec_reg){RG_RDX, RK_GPR32};
  case X86_REG_RDX: return (dec_reg){RG_RDX, RK_GPR64};
  case X86_REG_BL: return (dec_reg){RG_RBX, RK_GPR8};
  case X86_REG_BH: return (dec_reg){RG_RBX, RK_GPR8H};
  case X86_REG_BX: return (dec_reg){RG_RBX, RK_GPR16};
  case X86_REG_EBX: return (dec_reg){RG_RBX, RK_GPR32};
  case X86_REG_RBX: return (dec_reg){RG_RBX, RK_GPR64};
  case X86_REG_SPL: return (dec_reg){RG_RSP, RK_GPR8};
  case X86_REG_SP: return (dec_reg){RG_RSP, RK_GPR16};
  case X86_REG_ESP: return (dec_reg){RG_RSP, RK_GPR32};
  case X86_REG_RSP: return (dec_reg){RG_RSP, RK_GPR64};
  case X86_REG_BPL: return (dec_reg){RG_RBP, RK_GPR8};
  case X86_REG_BP: return (dec_reg){RG_RBP, RK_GPR16};
  case X86_REG_EBP: return (dec_reg){RG_RBP, RK_GPR32};
  case X86_REG_RBP: return (dec_reg){RG_RBP, RK_GPR64};
  case X86_REG_SIL: return (dec_reg){RG_RSI, RK_GPR8};
  case X86_REG_SI: return (dec_reg){RG_RSI, RK_GPR16};
  case X86_REG_ESI: return (dec_reg){RG_RSI, RK_GPR32};
  case X86_REG_RSI: return (dec_reg){RG_RSI, RK_GPR64};
  case X86_REG_DIL: return (dec_reg){RG_RDI, RK_GPR8};
  case X86_REG_DI: return (dec_reg){RG_RDI, RK_GPR16};
  case X86_REG_EDI: return (dec_reg){RG_RDI, RK_GPR32};
  case X86_REG_RDI: return (dec_reg){RG_RDI, RK_GPR64};
  case X86_REG_EFLAGS: return (dec_reg){RG_FLAGS, RK_OTHER};
  case X86_REG_FPSW: return (dec_reg){RG_FPSW, RK_OTHER};
  case X86_REG_FS:
  case X86_REG_GS: return (dec_reg){RG_SEG, RK_OTHER};
  default: return (dec_reg){-1, RK_NONE};
  }
}

/* THE partial-register rule (the only place it lives): does writing a register of this kind
 * keep part of the family's old value, making the old value a source as well?
 *   8/16-bit GPR writes merge into the 64-bit register;
 *   32-bit GPR writes zero-extend (no merge);
 *   legacy-SSE writes to an xmm register keep bits 255:128 (merge), VEX/EVEX writes zero
 *   them (no merge); ymm/zmm writes are whole;
 *   MMX, x87, mask and whole registers (flags, fpsw) do not merge. */
static bool write_merges(unsigned kind, bool xmm_partial) {
  switch (kind) {
  case RK_GPR8:
  case RK_GPR8H:
  case RK_GPR16: return true;
  /* Full-width legacy-SSE writes do not depend on the old register (the upper ymm half is
   * assumed clean after vzeroupper, as compilers guarantee); only partial writes merge. */
  case RK_XMM: return xmm_partial;
  default: return false;
  }
}

/* Vector width in bytes of a register kind (0 for non-vector kinds). */
static unsigned kind_vec_bytes(unsigned kind) {
  switch (kind) {
  case RK_XMM: return 16;
  case RK_YMM: return 32;
  case RK_ZMM: return 64;
  case RK_MM: return 8;
  default: return 0;
  }
}

static bool kind_is_gpr(unsigned kind) { return kind >= RK_GPR8 && kind <= RK_GPR64; }

/* ==== mnemonic table ======================================================================= */

/* Rules of a table row. */
enum {
  R_MOVE = 1u << 0,     /* move form: memory source -> IC_LOAD, memory destination -> IC_STORE
                           (pure write), immediate source -> IC_ALU, GPR<->vector -> IC_CONVERT;
                           register-register keeps the row's class */
  R_STFORM = 1u << 1,   /* a memory operand 0 is a pure write and the insn is IC_STORE */
  R_W0 = 1u << 2,       /* a memory operand 0 is a pure write; the class is kept */
  R_RMW0 = 1u << 3,     /* a memory operand 0 is read-modify-write */
  R_FP = 1u << 4,       /* operates on floating-point data (DF_FP) beyond the FP classes */
  R_ZERO = 1u << 5,     /* identical source registers: zero idiom (IC_ZERO, no sources) */
  R_ONES = 1u << 6,     /* identical source registers: all-ones idiom (no sources; executes) */
  R_WFLAGS = 1u << 7,   /* a SIMD instruction that writes the status flags */
  R_NOREGS = 1u << 8,   /* no registers and no memory access (nop, hints, fences) */
  R_SERIAL = 1u << 9,   /* DF_SERIAL */
  R_BIGMEM = 1u << 10,  /* memory block larger than 255 bytes or variable: mem_size 0 */
  R_XCHG = 1u << 11,    /* xchg: with a memory operand it is an implicitly locked atomic */
  R_X87NW = 1u << 12,   /* x87 that does not write the stack top (compares, stores) */
  R_X87PUSH = 1u << 13, /* x87 load that pushes: does not read the old stack top */
  R_X87OPW = 1u << 14,  /* x87 that also writes its stack-register operands (fxch) */
  R_X87NOST = 1u << 15, /* x87 control/status op: touches no stack register */
  R_CSMEM = 1u << 16,   /* unknown mnemonic: take memory direction from Capstone */
  R_RFLAGS = 1u << 17,  /* reads the status flags though Capstone does not say so (rcl, cmc) */
  R_MEM4 = 1u << 18,    /* the memory operand is 4 bytes (Capstone says 16 for comiss) */
  R_MEM8 = 1u << 19,    /* the memory operand is 8 bytes (Capstone says 16 for comisd) */
  R_PARTIAL = 1u << 20, /* legacy-SSE form that writes only part of its xmm destination and
                           keeps the rest (scalar sqrt/round/rcp, movss/movsd reg-reg,
                           movlps/movhps loads, pinsr, insertps): the old value is a source */
  R_XLANE = 1u << 21,   /* crosses 128-bit lanes when its vector operands are 256-bit or wider
                           (broadcast, vpmovzx/sx into ymm): IC_PERMUTE then; xmm forms and
                           the forms R_MOVE turns into loads keep their class */
  R_LDBLEND = 1u << 22, /* with a memory source the lane comes from the load and is blended in
                           (vinserti128 ymm, ymm, [m]: no shuffle port): IC_VEC_ALU */
};

/* Special handling of a row (implicit operands Capstone omits, branch kinds, fixups). */
enum {
  SP_NONE = 0,
  SP_JMP,      /* jmp: direct or indirect */
  SP_JCC,      /* jcc, jrcxz, loop*: conditional direct */
  SP_CALL,     /* call: pushes the return address */
  SP_RET,      /* ret: pops the return address */
  SP_PUSH,     /* push, pushf: one implicit stack write */
  SP_POP,      /* pop, popf: one implicit stack read */
  SP_LEAVE,    /* rsp = rbp; rbp = [rsp] */
  SP_ENTER,    /* push rbp; rbp = rsp; rsp -= n */
  SP_XLAT,     /* al = [rbx + al] */
  SP_SYSCALL,  /* Linux syscall ABI registers */
  SP_CMPXCHG,  /* writes rax (and rdx) and flags; atomic with memory */
  SP_GATHER,   /* merges into the destination, clears the mask */
  SP_LEA,      /* address arithmetic: base/index are data sources, no memory access */
  SP_STRDUAL,  /* movsd/cmpsd: SSE with xmm operands, else the string instruction */
  SP_STRING,   /* movs/stos/lods/scas/cmps: rep prefix, rsi/rdi/rcx */
  SP_VZEROALL, /* writes every vector register */
  SP_FCMOV,    /* x87 conditional move: reads the status flags */
  SP_STMXCSR,  /* reads mxcsr */
  SP_LDMXCSR,  /* writes mxcsr */
  SP_FPSW_R,   /* reads the x87 status/control word */
  SP_FPSW_W,   /* writes the x87 status/control word */
  SP_RDSEG,    /* rdfsbase/rdgsbase */
  SP_WRSEG,    /* wrfsbase/wrgsbase */
  SP_SIGNX,    /* cwd/cdq/cqo: write rdx only (Capstone also lists rax) */
};

/* One row: a mnemonic as Capstone names it (or a prefix of one), its class and rules. */
typedef struct dec_ent {
  const char *name;
  uint8_t cls;    /* insn_class of the register form */
  uint32_t rules; /* R_* */
  uint8_t sp;     /* SP_* */
} dec_ent;

/* Exact mnemonics, sorted by name (strcmp order; dec_check_tables verifies it). Capstone's
 * VEX forms ("vaddps") are found by stripping the leading 'v' when they have no row of their
 * own. Classes follow insn.h: the class is what the instruction computes; memory operands add
 * loads and stores on top. */
/* clang-format off */
static const dec_ent k_exact[] = {
    {"adc",              IC_ALU,     R_RMW0,                    SP_NONE},
    {"adcx",             IC_ALU,     0,                         SP_NONE},
    {"add",              IC_ALU,     R_RMW0,                    SP_NONE},
    {"addpd",            IC_FP_ADD,  0,                         SP_NONE},
    {"addps",            IC_FP_ADD,  0,                         SP_NONE},
    {"addsd",            IC_FP_ADD,  0,                         SP_NONE},
    {"addss",            IC_FP_ADD,  0,                         SP_NONE},
    {"addsubpd",         IC_FP_ADD,  0,                         SP_NONE},
    {"addsubps",         IC_FP_ADD,  0,                         SP_NONE},
    {"adox",             IC_ALU,     0,                         SP_NONE},
    {"aesdec",           IC_VEC_MUL, 0,                         SP_NONE},
    {"aesdeclast",       IC_VEC_MUL, 0,                         SP_NONE},
    {"aesenc",           IC_VEC_MUL, 0,                         SP_NONE},
    {"aesenclast",       IC_VEC_MUL, 0,                         SP_NONE},
    {"aesimc",           IC_VEC_MUL, 0,                         SP_NONE},
    {"aeskeygenassist",  IC_VEC_MUL, 0,                         SP_NONE},
    {"and",              IC_ALU,     R_RMW0,                    SP_NONE},
    {"andn",             IC_ALU,     0,                         SP_NONE},
    {"andnpd",           IC_VEC_ALU, R_FP,                      SP_NONE},
    {"andnps",           IC_VEC_ALU, R_FP,                      SP_NONE},
    {"andpd",            IC_VEC_ALU, R_FP,                      SP_NONE},
    {"andps",            IC_VEC_ALU, R_FP,                      SP_NONE},
    {"bextr",            IC_ALU,     0,                         SP_NONE},
    {"blendpd",          IC_VEC_ALU, R_FP,                      SP_NONE},
    {"blendps",          IC_VEC_ALU, R_FP,                      SP_NONE},
    {"blendvpd",         IC_VEC_ALU, R_FP,                      SP_NONE},
    {"blendvps",         IC_VEC_ALU, R_FP,                      SP_NONE},
    {"blsi",             IC_ALU,     0,                         SP_NONE},
    {"blsmsk",           IC_ALU,     0,                         SP_NONE},
    {"blsr",             IC_ALU,     0,                         SP_NONE},
    {"bsf",              IC_BITCNT,  0,                         SP_NONE},
    {"bsr",              IC_BITCNT,  0,                         SP_NONE},
    {"bswap",            IC_ALU,     0,                         SP_NONE},
    {"bt",               IC_SHIFT,   0,                         SP_NONE},
    {"btc",              IC_SHIFT,   R_RMW0,                    SP_NONE},
    {"btr",              IC_SHIFT,   R_RMW0,                    SP_NONE},
    {"bts",              IC_SHIFT,   R_RMW0,                    SP_NONE},
    {"bzhi",             IC_ALU,     0,                         SP_NONE},
    {"call",             IC_BRANCH,  0,                         SP_CALL},
    {"cbw",              IC_ALU,     0,                         SP_NONE},
    {"cdq",              IC_ALU,     0,                         SP_SIGNX},
    {"cdqe",             IC_ALU,     0,                         SP_NONE},
    {"clc",              IC_ALU,     0,                         SP_NONE},
    {"cld",              IC_ALU,     0,                         SP_NONE},
    {"cmc",              IC_ALU,     R_RFLAGS,                  SP_NONE},
    {"cmp",              IC_ALU,     0,                         SP_NONE},
    {"cmppd",            IC_FP_ADD,  0,                         SP_NONE},
    {"cmpps",            IC_FP_ADD,  0,                         SP_NONE},
    {"cmpsb",            IC_STRING,  0,                         SP_STRING},
    {"cmpsd",            IC_FP_ADD,  0,                         SP_STRDUAL},
    {"cmpsq",            IC_STRING,  0,                         SP_STRING},
    {"cmpss",            IC_FP_ADD,  0,                         SP_NONE},
    {"cmpsw",            IC_STRING,  0,                         SP_STRING},
    {"cmpxchg",          IC_ALU,     R_RMW0,                    SP_CMPXCHG},
    {"cmpxchg16b",       IC_ALU,     R_RMW0,                    SP_CMPXCHG},
    {"cmpxchg8b",        IC_ALU,     R_RMW0,                    SP_CMPXCHG},
    {"comisd",           IC_FP_ADD,  R_WFLAGS | R_MEM8,         SP_NONE},
    {"comiss",           IC_FP_ADD,  R_WFLAGS | R_MEM4,         SP_NONE},
    {"cpuid",            IC_SERIAL,  R_SERIAL,                  SP_NONE},
    {"cqo",              IC_ALU,     0,                         SP_SIGNX},
    {"crc32",            IC_BITCNT,  0,                         SP_NONE},
    {"cwd",              IC_ALU,     0,                         SP_SIGNX},
    {"cwde",             IC_ALU,     0,                         SP_NONE},
    {"dec",              IC_ALU,     R_RMW0,                    SP_NONE},
    {"div",              IC_DIV,     0,                         SP_NONE},
    {"divpd",            IC_FP_DIV,  0,                         SP_NONE},
    {"divps",            IC_FP_DIV,  0,                         SP_NONE},
    {"divsd",            IC_FP_DIV,  0,                         SP_NONE},
    {"divss",            IC_FP_DIV,  0,                         SP_NONE},
    {"dppd",             IC_FP_MUL,  0,                         SP_NONE},
    {"dpps",             IC_FP_MUL,  0,                         SP_NONE},
    {"emms",             IC_OTHER,   0,                         SP_NONE},
    {"endbr32",          IC_NOP,     R_NOREGS,                  SP_NONE},
    {"endbr64",          IC_NOP,     R_NOREGS,                  SP_NONE},
    {"enter",            IC_OTHER,   0,                         SP_ENTER},
    {"extractps",        IC_SHUFFLE, R_W0 | R_FP,               SP_NONE},
    {"fbld",             IC_X87,     R_X87PUSH,                 SP_NONE},
    {"fbstp",            IC_X87,     R_W0 | R_X87NW,            SP_NONE},
    {"fcom",             IC_X87,     R_X87NW,                   SP_NONE},
    {"fcomi",            IC_X87,     R_X87NW,                   SP_NONE},
    {"fcomip",           IC_X87,     R_X87NW,                   SP_NONE},
    {"fcomp",            IC_X87,     R_X87NW,                   SP_NONE},
    {"fcompp",           IC_X87,     R_X87NW,                   SP_NONE},
    {"fdecstp",          IC_X87,     R_X87NOST,                 SP_NONE},
    {"femms",            IC_OTHER,   0,                         SP_NONE},
    {"ffree",            IC_X87,     R_X87NOST,                 SP_NONE},
    {"ffreep",           IC_X87,     R_X87NOST,                 SP_NONE},
    {"ficom",            IC_X87,     R_X87NW,                   SP_NONE},
    {"ficomp",           IC_X87,     R_X87NW,                   SP_NONE},
    {"fild",             IC_X87,     R_X87PUSH,                 SP_NONE},
    {"fincstp",          IC_X87,     R_X87NOST,                 SP_NONE},
    {"fist",             IC_X87,     R_W0 | R_X87NW,            SP_NONE},
    {"fistp",            IC_X87,     R_W0 | R_X87NW,            SP_NONE},
    {"fisttp",           IC_X87,     R_W0 | R_X87NW,            SP_NONE},
    {"fld",              IC_X87,     R_X87PUSH,                 SP_NONE},
    {"fld1",             IC_X87,     R_X87PUSH,                 SP_NONE},
    {"fldcw",            IC_X87,     R_X87NOST,                 SP_FPSW_W},
    {"fldenv",           IC_X87,     R_X87NOST,                 SP_FPSW_W},
    {"fldl2e",           IC_X87,     R_X87PUSH,                 SP_NONE},
    {"fldl2t",           IC_X87,     R_X87PUSH,                 SP_NONE},
    {"fldlg2",           IC_X87,     R_X87PUSH,                 SP_NONE},
    {"fldln2",           IC_X87,     R_X87PUSH,                 SP_NONE},
    {"fldpi",            IC_X87,     R_X87PUSH,                 SP_NONE},
    {"fldz",             IC_X87,     R_X87PUSH,                 SP_NONE},
    {"fnclex",           IC_X87,     R_X87NOST,                 SP_FPSW_W},
    {"fninit",           IC_X87,     R_X87NOST,                 SP_FPSW_W},
    {"fnop",             IC_NOP,     R_NOREGS,                  SP_NONE},
    {"fnsave",           IC_X87,     R_W0 | R_X87NOST | R_BIGMEM, SP_FPSW_R},
    {"fnstcw",           IC_X87,     R_STFORM | R_X87NOST,      SP_FPSW_R},
    {"fnstenv",          IC_X87,     R_W0 | R_X87NOST,          SP_FPSW_R},
    {"fnstsw",           IC_X87,     R_W0 | R_X87NOST,          SP_FPSW_R},
    {"frstor",           IC_X87,     R_X87NOST | R_BIGMEM,      SP_FPSW_W},
    {"fst",              IC_X87,     R_STFORM | R_X87NW,        SP_NONE},
    {"fstp",             IC_X87,     R_STFORM | R_X87NW,        SP_NONE},
    {"ftst",             IC_X87,     R_X87NW,                   SP_NONE},
    {"fucom",            IC_X87,     R_X87NW,                   SP_NONE},
    {"fucomi",           IC_X87,     R_X87NW,                   SP_NONE},
    {"fucomip",          IC_X87,     R_X87NW,                   SP_NONE},
    {"fucomp",           IC_X87,     R_X87NW,                   SP_NONE},
    {"fucompp",          IC_X87,     R_X87NW,                   SP_NONE},
    {"fxam",             IC_X87,     R_X87NW,                   SP_NONE},
    {"fxch",             IC_X87,     R_X87OPW,                  SP_NONE},
    {"fxrstor",          IC_OTHER,   R_BIGMEM,                  SP_NONE},
    {"fxrstor64",        IC_OTHER,   R_BIGMEM,                  SP_NONE},
    {"fxsave",           IC_OTHER,   R_W0 | R_BIGMEM,           SP_NONE},
    {"fxsave64",         IC_OTHER,   R_W0 | R_BIGMEM,           SP_NONE},
    {"haddpd",           IC_FP_ADD,  0,                         SP_NONE},
    {"haddps",           IC_FP_ADD,  0,                         SP_NONE},
    {"hlt",              IC_OTHER,   R_NOREGS,                  SP_NONE},
    {"hsubpd",           IC_FP_ADD,  0,                         SP_NONE},
    {"hsubps",           IC_FP_ADD,  0,                         SP_NONE},
    {"idiv",             IC_DIV,     0,                         SP_NONE},
    {"imul",             IC_MUL,     0,                         SP_NONE},
    {"inc",              IC_ALU,     R_RMW0,                    SP_NONE},
    {"insertps",         IC_SHUFFLE, R_FP | R_PARTIAL,                      SP_NONE},
    {"int",              IC_SERIAL,  R_SERIAL,                  SP_NONE},
    {"int3",             IC_OTHER,   R_NOREGS,                  SP_NONE},
    {"jmp",              IC_BRANCH,  0,                         SP_JMP},
    {"lahf",             IC_ALU,     0,                         SP_NONE},
    {"lddqu",            IC_MOV,     R_MOVE,                    SP_NONE},
    {"ldmxcsr",          IC_OTHER,   0,                         SP_LDMXCSR},
    {"lea",              IC_LEA,     0,                         SP_LEA},
    {"leave",            IC_LOAD,    0,                         SP_LEAVE},
    {"lfence",           IC_SERIAL,  R_SERIAL | R_NOREGS,       SP_NONE},
    {"lodsb",            IC_STRING,  0,                         SP_STRING},
    {"lodsd",            IC_STRING,  0,                         SP_STRING},
    {"lodsq",            IC_STRING,  0,                         SP_STRING},
    {"lodsw",            IC_STRING,  0,                         SP_STRING},
    {"loop",             IC_BRANCH,  0,                         SP_JCC},
    {"loope",            IC_BRANCH,  0,                         SP_JCC},
    {"loopne",           IC_BRANCH,  0,                         SP_JCC},
    {"lzcnt",            IC_BITCNT,  0,                         SP_NONE},
    {"maxpd",            IC_FP_ADD,  0,                         SP_NONE},
    {"maxps",            IC_FP_ADD,  0,                         SP_NONE},
    {"maxsd",            IC_FP_ADD,  0,                         SP_NONE},
    {"maxss",            IC_FP_ADD,  0,                         SP_NONE},
    {"mfence",           IC_SERIAL,  R_SERIAL | R_NOREGS,       SP_NONE},
    {"minpd",            IC_FP_ADD,  0,                         SP_NONE},
    {"minps",            IC_FP_ADD,  0,                         SP_NONE},
    {"minsd",            IC_FP_ADD,  0,                         SP_NONE},
    {"minss",            IC_FP_ADD,  0,                         SP_NONE},
    {"mov",              IC_MOV,     R_MOVE,                    SP_NONE},
    {"movabs",           IC_MOV,     R_MOVE,                    SP_NONE},
    {"movapd",           IC_MOV,     R_MOVE | R_FP,             SP_NONE},
    {"movaps",           IC_MOV,     R_MOVE | R_FP,             SP_NONE},
    {"movbe",            IC_ALU,     R_W0,                      SP_NONE},
    {"movd",             IC_MOV,     R_MOVE,                    SP_NONE},
    {"movddup",          IC_SHUFFLE, R_MOVE | R_FP,             SP_NONE},
    {"movdq2q",          IC_MOV,     R_MOVE,                    SP_NONE},
    {"movdqa",           IC_MOV,     R_MOVE,                    SP_NONE},
    {"movdqu",           IC_MOV,     R_MOVE,                    SP_NONE},
    {"movhlps",          IC_SHUFFLE, R_FP,                      SP_NONE},
    {"movhpd",           IC_SHUFFLE, R_STFORM | R_FP | R_PARTIAL,           SP_NONE},
    {"movhps",           IC_SHUFFLE, R_STFORM | R_FP | R_PARTIAL,           SP_NONE},
    {"movlhps",          IC_SHUFFLE, R_FP,                      SP_NONE},
    {"movlpd",           IC_SHUFFLE, R_STFORM | R_FP | R_PARTIAL,           SP_NONE},
    {"movlps",           IC_SHUFFLE, R_STFORM | R_FP | R_PARTIAL,           SP_NONE},
    {"movmskpd",         IC_CONVERT, 0,                         SP_NONE},
    {"movmskps",         IC_CONVERT, 0,                         SP_NONE},
    {"movntdq",          IC_MOV,     R_MOVE,                    SP_NONE},
    {"movntdqa",         IC_MOV,     R_MOVE,                    SP_NONE},
    {"movnti",           IC_MOV,     R_MOVE,                    SP_NONE},
    {"movntpd",          IC_MOV,     R_MOVE | R_FP,             SP_NONE},
    {"movntps",          IC_MOV,     R_MOVE | R_FP,             SP_NONE},
    {"movntq",           IC_MOV,     R_MOVE,                    SP_NONE},
    {"movntsd",          IC_MOV,     R_MOVE | R_FP,             SP_NONE},
    {"movntss",          IC_MOV,     R_MOVE | R_FP,             SP_NONE},
    {"movq",             IC_MOV,     R_MOVE,                    SP_NONE},
    {"movq2dq",          IC_MOV,     R_MOVE,                    SP_NONE},
    {"movsb",            IC_STRING,  R_W0,                      SP_STRING},
    {"movsd",            IC_SHUFFLE, R_MOVE | R_FP | R_PARTIAL, SP_STRDUAL},
    {"movshdup",         IC_SHUFFLE, R_MOVE | R_FP,             SP_NONE},
    {"movsldup",         IC_SHUFFLE, R_MOVE | R_FP,             SP_NONE},
    {"movsq",            IC_STRING,  R_W0,                      SP_STRING},
    {"movss",            IC_SHUFFLE, R_MOVE | R_FP | R_PARTIAL,             SP_NONE},
    {"movsw",            IC_STRING,  R_W0,                      SP_STRING},
    {"movsx",            IC_MOV,     R_MOVE,                    SP_NONE},
    {"movsxd",           IC_MOV,     R_MOVE,                    SP_NONE},
    {"movupd",           IC_MOV,     R_MOVE | R_FP,             SP_NONE},
    {"movups",           IC_MOV,     R_MOVE | R_FP,             SP_NONE},
    {"movzx",            IC_MOV,     R_MOVE,                    SP_NONE},
    {"mpsadbw",          IC_VEC_MUL, 0,                         SP_NONE},
    {"mul",              IC_MUL,     0,                         SP_NONE},
    {"mulpd",            IC_FP_MUL,  0,                         SP_NONE},
    {"mulps",            IC_FP_MUL,  0,                         SP_NONE},
    {"mulsd",            IC_FP_MUL,  0,                         SP_NONE},
    {"mulss",            IC_FP_MUL,  0,                         SP_NONE},
    {"mulx",             IC_MUL,     0,                         SP_NONE},
    {"neg",              IC_ALU,     R_RMW0,                    SP_NONE},
    {"nop",              IC_NOP,     R_NOREGS,                  SP_NONE},
    {"not",              IC_ALU,     R_RMW0,                    SP_NONE},
    {"or",               IC_ALU,     R_RMW0,                    SP_NONE},
    {"orpd",             IC_VEC_ALU, R_FP,                      SP_NONE},
    {"orps",             IC_VEC_ALU, R_FP,                      SP_NONE},
    {"pabsb",            IC_VEC_ALU, 0,                         SP_NONE},
    {"pabsd",            IC_VEC_ALU, 0,                         SP_NONE},
    {"pabsw",            IC_VEC_ALU, 0,                         SP_NONE},
    {"packssdw",         IC_SHUFFLE, 0,                         SP_NONE},
    {"packsswb",         IC_SHUFFLE, 0,                         SP_NONE},
    {"packusdw",         IC_SHUFFLE, 0,                         SP_NONE},
    {"packuswb",         IC_SHUFFLE, 0,                         SP_NONE},
    {"paddb",            IC_VEC_ALU, 0,                         SP_NONE},
    {"paddd",            IC_VEC_ALU, 0,                         SP_NONE},
    {"paddq",            IC_VEC_ALU, 0,                         SP_NONE},
    {"paddsb",           IC_VEC_ALU, 0,                         SP_NONE},
    {"paddsw",           IC_VEC_ALU, 0,                         SP_NONE},
    {"paddusb",          IC_VEC_ALU, 0,                         SP_NONE},
    {"paddusw",          IC_VEC_ALU, 0,                         SP_NONE},
    {"paddw",            IC_VEC_ALU, 0,                         SP_NONE},
    {"palignr",          IC_SHUFFLE, 0,                         SP_NONE},
    {"pand",             IC_VEC_ALU, 0,                         SP_NONE},
    {"pandn",            IC_VEC_ALU, 0,                         SP_NONE},
    {"pause",            IC_NOP,     R_NOREGS,                  SP_NONE},
    {"pavgb",            IC_VEC_ALU, 0,                         SP_NONE},
    {"pavgw",            IC_VEC_ALU, 0,                         SP_NONE},
    {"pblendvb",         IC_VEC_ALU, 0,                         SP_NONE},
    {"pblendw",          IC_VEC_ALU, 0,                         SP_NONE},
    {"pclmulqdq",        IC_VEC_MUL, 0,                         SP_NONE},
    {"pcmpeqb",          IC_VEC_ALU, R_ONES,                    SP_NONE},
    {"pcmpeqd",          IC_VEC_ALU, R_ONES,                    SP_NONE},
    {"pcmpeqq",          IC_VEC_ALU, R_ONES,                    SP_NONE},
    {"pcmpeqw",          IC_VEC_ALU, R_ONES,                    SP_NONE},
    {"pcmpestri",        IC_VEC_MUL, R_WFLAGS,                  SP_NONE},
    {"pcmpestrm",        IC_VEC_MUL, R_WFLAGS,                  SP_NONE},
    {"pcmpgtb",          IC_VEC_ALU, R_ZERO,                    SP_NONE},
    {"pcmpgtd",          IC_VEC_ALU, R_ZERO,                    SP_NONE},
    {"pcmpgtq",          IC_VEC_ALU, R_ZERO,                    SP_NONE},
    {"pcmpgtw",          IC_VEC_ALU, R_ZERO,                    SP_NONE},
    {"pcmpistri",        IC_VEC_MUL, R_WFLAGS,                  SP_NONE},
    {"pcmpistrm",        IC_VEC_MUL, R_WFLAGS,                  SP_NONE},
    {"pdep",             IC_BITCNT,  0,                         SP_NONE},
    {"pext",             IC_BITCNT,  0,                         SP_NONE},
    {"pextrb",           IC_SHUFFLE, R_W0,                      SP_NONE},
    {"pextrd",           IC_SHUFFLE, R_W0,                      SP_NONE},
    {"pextrq",           IC_SHUFFLE, R_W0,                      SP_NONE},
    {"pextrw",           IC_SHUFFLE, R_W0,                      SP_NONE},
    {"phaddd",           IC_VEC_ALU, 0,                         SP_NONE},
    {"phaddsw",          IC_VEC_ALU, 0,                         SP_NONE},
    {"phaddw",           IC_VEC_ALU, 0,                         SP_NONE},
    {"phminposuw",       IC_VEC_MUL, 0,                         SP_NONE},
    {"phsubd",           IC_VEC_ALU, 0,                         SP_NONE},
    {"phsubsw",          IC_VEC_ALU, 0,                         SP_NONE},
    {"phsubw",           IC_VEC_ALU, 0,                         SP_NONE},
    {"pinsrb",           IC_SHUFFLE, R_PARTIAL,                         SP_NONE},
    {"pinsrd",           IC_SHUFFLE, R_PARTIAL,                         SP_NONE},
    {"pinsrq",           IC_SHUFFLE, R_PARTIAL,                         SP_NONE},
    {"pinsrw",           IC_SHUFFLE, R_PARTIAL,                         SP_NONE},
    {"pmaddubsw",        IC_VEC_MUL, 0,                         SP_NONE},
    {"pmaddwd",          IC_VEC_MUL, 0,                         SP_NONE},
    {"pmaxsb",           IC_VEC_ALU, 0,                         SP_NONE},
    {"pmaxsd",           IC_VEC_ALU, 0,                         SP_NONE},
    {"pmaxsw",           IC_VEC_ALU, 0,                         SP_NONE},
    {"pmaxub",           IC_VEC_ALU, 0,                         SP_NONE},
    {"pmaxud",           IC_VEC_ALU, 0,                         SP_NONE},
    {"pmaxuw",           IC_VEC_ALU, 0,                         SP_NONE},
    {"pminsb",           IC_VEC_ALU, 0,                         SP_NONE},
    {"pminsd",           IC_VEC_ALU, 0,                         SP_NONE},
    {"pminsw",           IC_VEC_ALU, 0,                         SP_NONE},
    {"pminub",           IC_VEC_ALU, 0,                         SP_NONE},
    {"pminud",           IC_VEC_ALU, 0,                         SP_NONE},
    {"pminuw",           IC_VEC_ALU, 0,                         SP_NONE},
    {"pmovmskb",         IC_CONVERT, 0,                         SP_NONE},
    {"pmovsxbd",         IC_SHUFFLE, R_XLANE,                   SP_NONE},
    {"pmovsxbq",         IC_SHUFFLE, R_XLANE,                   SP_NONE},
    {"pmovsxbw",         IC_SHUFFLE, R_XLANE,                   SP_NONE},
    {"pmovsxdq",         IC_SHUFFLE, R_XLANE,                   SP_NONE},
    {"pmovsxwd",         IC_SHUFFLE, R_XLANE,                   SP_NONE},
    {"pmovsxwq",         IC_SHUFFLE, R_XLANE,                   SP_NONE},
    {"pmovzxbd",         IC_SHUFFLE, R_XLANE,                   SP_NONE},
    {"pmovzxbq",         IC_SHUFFLE, R_XLANE,                   SP_NONE},
    {"pmovzxbw",         IC_SHUFFLE, R_XLANE,                   SP_NONE},
    {"pmovzxdq",         IC_SHUFFLE, R_XLANE,                   SP_NONE},
    {"pmovzxwd",         IC_SHUFFLE, R_XLANE,                   SP_NONE},
    {"pmovzxwq",         IC_SHUFFLE, R_XLANE,                   SP_NONE},
    {"pmuldq",           IC_VEC_MUL, 0,                         SP_NONE},
    {"pmulhrsw",         IC_VEC_MUL, 0,                         SP_NONE},
    {"pmulhuw",          IC_VEC_MUL, 0,                         SP_NONE},
    {"pmulhw",           IC_VEC_MUL, 0,                         SP_NONE},
    {"pmulld",           IC_VEC_MUL, 0,                         SP_NONE},
    {"pmullw",           IC_VEC_MUL, 0,                         SP_NONE},
    {"pmuludq",          IC_VEC_MUL, 0,                         SP_NONE},
    {"pop",              IC_LOAD,    R_W0,                      SP_POP},
    {"popcnt",           IC_BITCNT,  0,                         SP_NONE},
    {"popf",             IC_OTHER,   0,                         SP_POP},
    {"popfq",            IC_OTHER,   0,                         SP_POP},
    {"por",              IC_VEC_ALU, 0,                         SP_NONE},
    {"psadbw",           IC_VEC_MUL, 0,                         SP_NONE},
    {"pshufb",           IC_SHUFFLE, 0,                         SP_NONE},
    {"pshufd",           IC_SHUFFLE, 0,                         SP_NONE},
    {"pshufhw",          IC_SHUFFLE, 0,                         SP_NONE},
    {"pshuflw",          IC_SHUFFLE, 0,                         SP_NONE},
    {"pshufw",           IC_SHUFFLE, 0,                         SP_NONE},
    {"psignb",           IC_VEC_ALU, 0,                         SP_NONE},
    {"psignd",           IC_VEC_ALU, 0,                         SP_NONE},
    {"psignw",           IC_VEC_ALU, 0,                         SP_NONE},
    {"pslld",            IC_VEC_ALU, 0,                         SP_NONE},
    {"pslldq",           IC_SHUFFLE, 0,                         SP_NONE},
    {"psllq",            IC_VEC_ALU, 0,                         SP_NONE},
    {"psllw",            IC_VEC_ALU, 0,                         SP_NONE},
    {"psrad",            IC_VEC_ALU, 0,                         SP_NONE},
    {"psraw",            IC_VEC_ALU, 0,                         SP_NONE},
    {"psrld",            IC_VEC_ALU, 0,                         SP_NONE},
    {"psrldq",           IC_SHUFFLE, 0,                         SP_NONE},
    {"psrlq",            IC_VEC_ALU, 0,                         SP_NONE},
    {"psrlw",            IC_VEC_ALU, 0,                         SP_NONE},
    {"psubb",            IC_VEC_ALU, R_ZERO,                    SP_NONE},
    {"psubd",            IC_VEC_ALU, R_ZERO,                    SP_NONE},
    {"psubq",            IC_VEC_ALU, R_ZERO,                    SP_NONE},
    {"psubsb",           IC_VEC_ALU, 0,                         SP_NONE},
    {"psubsw",           IC_VEC_ALU, 0,                         SP_NONE},
    {"psubusb",          IC_VEC_ALU, 0,                         SP_NONE},
    {"psubusw",          IC_VEC_ALU, 0,                         SP_NONE},
    {"psubw",            IC_VEC_ALU, R_ZERO,                    SP_NONE},
    {"ptest",            IC_VEC_ALU, R_WFLAGS,                  SP_NONE},
    {"punpckhbw",        IC_SHUFFLE, 0,                         SP_NONE},
    {"punpckhdq",        IC_SHUFFLE, 0,                         SP_NONE},
    {"punpckhqdq",       IC_SHUFFLE, 0,                         SP_NONE},
    {"punpckhwd",        IC_SHUFFLE, 0,                         SP_NONE},
    {"punpcklbw",        IC_SHUFFLE, 0,                         SP_NONE},
    {"punpckldq",        IC_SHUFFLE, 0,                         SP_NONE},
    {"punpcklqdq",       IC_SHUFFLE, 0,                         SP_NONE},
    {"punpcklwd",        IC_SHUFFLE, 0,                         SP_NONE},
    {"push",             IC_STORE,   0,                         SP_PUSH},
    {"pushf",            IC_STORE,   0,                         SP_PUSH},
    {"pushfq",           IC_STORE,   0,                         SP_PUSH},
    {"pxor",             IC_VEC_ALU, R_ZERO,                    SP_NONE},
    {"rcl",              IC_SHIFT,   R_RMW0 | R_RFLAGS,         SP_NONE},
    {"rcpps",            IC_FP_MUL,  0,                         SP_NONE},
    {"rcpss",            IC_FP_MUL,  R_PARTIAL,                         SP_NONE},
    {"rcr",              IC_SHIFT,   R_RMW0 | R_RFLAGS,         SP_NONE},
    {"rdfsbase",         IC_OTHER,   0,                         SP_RDSEG},
    {"rdgsbase",         IC_OTHER,   0,                         SP_RDSEG},
    {"rdtsc",            IC_SERIAL,  R_SERIAL,                  SP_NONE},
    {"rdtscp",           IC_SERIAL,  R_SERIAL,                  SP_NONE},
    {"ret",              IC_BRANCH,  0,                         SP_RET},
    {"retf",             IC_BRANCH,  0,                         SP_RET},
    {"retfq",            IC_BRANCH,  0,                         SP_RET},
    {"rol",              IC_SHIFT,   R_RMW0,                    SP_NONE},
    {"ror",              IC_SHIFT,   R_RMW0,                    SP_NONE},
    {"rorx",             IC_SHIFT,   0,                         SP_NONE},
    {"roundpd",          IC_FP_ADD,  0,                         SP_NONE},
    {"roundps",          IC_FP_ADD,  0,                         SP_NONE},
    {"roundsd",          IC_FP_ADD,  R_PARTIAL,                         SP_NONE},
    {"roundss",          IC_FP_ADD,  R_PARTIAL,                         SP_NONE},
    {"rsqrtps",          IC_FP_MUL,  0,                         SP_NONE},
    {"rsqrtss",          IC_FP_MUL,  R_PARTIAL,                         SP_NONE},
    {"sahf",             IC_ALU,     0,                         SP_NONE},
    {"sal",              IC_SHIFT,   R_RMW0,                    SP_NONE},
    {"sar",              IC_SHIFT,   R_RMW0,                    SP_NONE},
    {"sarx",             IC_SHIFT,   0,                         SP_NONE},
    {"sbb",              IC_ALU,     R_RMW0,                    SP_NONE},
    {"scasb",            IC_STRING,  0,                         SP_STRING},
    {"scasd",            IC_STRING,  0,                         SP_STRING},
    {"scasq",            IC_STRING,  0,                         SP_STRING},
    {"scasw",            IC_STRING,  0,                         SP_STRING},
    {"sfence",           IC_SERIAL,  R_NOREGS,                  SP_NONE},
    {"shl",              IC_SHIFT,   R_RMW0,                    SP_NONE},
    {"shld",             IC_SHIFT,   R_RMW0,                    SP_NONE},
    {"shlx",             IC_SHIFT,   0,                         SP_NONE},
    {"shr",              IC_SHIFT,   R_RMW0,                    SP_NONE},
    {"shrd",             IC_SHIFT,   R_RMW0,                    SP_NONE},
    {"shrx",             IC_SHIFT,   0,                         SP_NONE},
    {"shufpd",           IC_SHUFFLE, R_FP,                      SP_NONE},
    {"shufps",           IC_SHUFFLE, R_FP,                      SP_NONE},
    {"sqrtpd",           IC_FP_DIV,  0,                         SP_NONE},
    {"sqrtps",           IC_FP_DIV,  0,                         SP_NONE},
    {"sqrtsd",           IC_FP_DIV,  R_PARTIAL,                         SP_NONE},
    {"sqrtss",           IC_FP_DIV,  R_PARTIAL,                         SP_NONE},
    {"stc",              IC_ALU,     0,                         SP_NONE},
    {"std",              IC_ALU,     0,                         SP_NONE},
    {"stmxcsr",          IC_OTHER,   R_STFORM,                  SP_STMXCSR},
    {"stosb",            IC_STRING,  R_W0,                      SP_STRING},
    {"stosd",            IC_STRING,  R_W0,                      SP_STRING},
    {"stosq",            IC_STRING,  R_W0,                      SP_STRING},
    {"stosw",            IC_STRING,  R_W0,                      SP_STRING},
    {"sub",              IC_ALU,     R_RMW0 | R_ZERO,           SP_NONE},
    {"subpd",            IC_FP_ADD,  0,                         SP_NONE},
    {"subps",            IC_FP_ADD,  0,                         SP_NONE},
    {"subsd",            IC_FP_ADD,  0,                         SP_NONE},
    {"subss",            IC_FP_ADD,  0,                         SP_NONE},
    {"syscall",          IC_SERIAL,  R_SERIAL,                  SP_SYSCALL},
    {"test",             IC_ALU,     0,                         SP_NONE},
    {"tzcnt",            IC_BITCNT,  0,                         SP_NONE},
    {"ucomisd",          IC_FP_ADD,  R_WFLAGS | R_MEM8,         SP_NONE},
    {"ucomiss",          IC_FP_ADD,  R_WFLAGS | R_MEM4,         SP_NONE},
    {"ud2",              IC_OTHER,   R_NOREGS,                  SP_NONE},
    {"unpckhpd",         IC_SHUFFLE, R_FP,                      SP_NONE},
    {"unpckhps",         IC_SHUFFLE, R_FP,                      SP_NONE},
    {"unpcklpd",         IC_SHUFFLE, R_FP,                      SP_NONE},
    {"unpcklps",         IC_SHUFFLE, R_FP,                      SP_NONE},
    {"vbroadcastf128",   IC_SHUFFLE, R_MOVE | R_FP,             SP_NONE},
    {"vbroadcastsd",     IC_SHUFFLE, R_MOVE | R_FP | R_XLANE,   SP_NONE},
    {"vbroadcastss",     IC_SHUFFLE, R_MOVE | R_FP | R_XLANE,   SP_NONE},
    {"vextractf128",     IC_PERMUTE, R_STFORM | R_FP,           SP_NONE},
    {"vextracti128",     IC_PERMUTE, R_STFORM,                  SP_NONE},
    {"vinsertf128",      IC_PERMUTE, R_FP | R_LDBLEND,          SP_NONE},
    {"vinserti128",      IC_PERMUTE, R_LDBLEND,                 SP_NONE},
    {"vmaskmovpd",       IC_VEC_ALU, R_FP | R_STFORM,           SP_NONE},
    {"vmaskmovps",       IC_VEC_ALU, R_FP | R_STFORM,           SP_NONE},
    {"vpandd",           IC_VEC_ALU, 0,                         SP_NONE},
    {"vpandnd",          IC_VEC_ALU, 0,                         SP_NONE},
    {"vpandnq",          IC_VEC_ALU, 0,                         SP_NONE},
    {"vpandq",           IC_VEC_ALU, 0,                         SP_NONE},
    {"vpblendd",         IC_VEC_ALU, 0,                         SP_NONE},
    {"vpbroadcastb",     IC_SHUFFLE, R_MOVE | R_XLANE,          SP_NONE},
    {"vpbroadcastd",     IC_SHUFFLE, R_MOVE | R_XLANE,          SP_NONE},
    {"vpbroadcastq",     IC_SHUFFLE, R_MOVE | R_XLANE,          SP_NONE},
    {"vpbroadcastw",     IC_SHUFFLE, R_MOVE | R_XLANE,          SP_NONE},
    {"vperm2f128",       IC_PERMUTE, R_FP,                      SP_NONE},
    {"vperm2i128",       IC_PERMUTE, 0,                         SP_NONE},
    {"vpermd",           IC_PERMUTE, 0,                         SP_NONE},
    {"vpermilpd",        IC_SHUFFLE, R_FP,                      SP_NONE},
    {"vpermilps",        IC_SHUFFLE, R_FP,                      SP_NONE},
    {"vpermpd",          IC_PERMUTE, R_FP,                      SP_NONE},
    {"vpermps",          IC_PERMUTE, R_FP,                      SP_NONE},
    {"vpermq",           IC_PERMUTE, 0,                         SP_NONE},
    {"vpmaskmovd",       IC_VEC_ALU, R_STFORM,                  SP_NONE},
    {"vpmaskmovq",       IC_VEC_ALU, R_STFORM,                  SP_NONE},
    {"vpord",            IC_VEC_ALU, 0,                         SP_NONE},
    {"vporq",            IC_VEC_ALU, 0,                         SP_NONE},
    {"vpsllvd",          IC_VEC_ALU, 0,                         SP_NONE},
    {"vpsllvq",          IC_VEC_ALU, 0,                         SP_NONE},
    {"vpsravd",          IC_VEC_ALU, 0,                         SP_NONE},
    {"vpsrlvd",          IC_VEC_ALU, 0,                         SP_NONE},
    {"vpsrlvq",          IC_VEC_ALU, 0,                         SP_NONE},
    {"vpxord",           IC_VEC_ALU, R_ZERO,                    SP_NONE},
    {"vpxorq",           IC_VEC_ALU, R_ZERO,                    SP_NONE},
    {"vtestpd",          IC_VEC_ALU, R_FP | R_WFLAGS,           SP_NONE},
    {"vtestps",          IC_VEC_ALU, R_FP | R_WFLAGS,           SP_NONE},
    {"vzeroall",         IC_ZERO,    R_NOREGS,                  SP_VZEROALL},
    {"vzeroupper",       IC_NOP,     R_NOREGS,                  SP_NONE},
    {"wait",             IC_NOP,     R_NOREGS,                  SP_NONE},
    {"wrfsbase",         IC_OTHER,   0,                         SP_WRSEG},
    {"wrgsbase",         IC_OTHER,   0,                         SP_WRSEG},
    {"xadd",             IC_ALU,     R_RMW0,                    SP_NONE},
    {"xchg",             IC_ALU,     R_RMW0 | R_XCHG,           SP_NONE},
    {"xgetbv",           IC_SERIAL,  R_SERIAL,                  SP_NONE},
    {"xlatb",            IC_LOAD,    0,                         SP_XLAT},
    {"xor",              IC_ALU,     R_RMW0 | R_ZERO,           SP_NONE},
    {"xorpd",            IC_VEC_ALU, R_FP | R_ZERO,             SP_NONE},
    {"xorps",            IC_VEC_ALU, R_FP | R_ZERO,             SP_NONE},
};

/* Mnemonic families by prefix (the longest matching prefix wins), for names with no exact
 * row: cmovCC, setCC, jCC, the FMA forms, conversions, SSE compare predicates, x87. */
static const dec_ent k_prefix[] = {
    {"cmov",             IC_ALU,     0,                         SP_NONE},
    {"set",              IC_ALU,     R_W0,                      SP_NONE},
    {"j",                IC_BRANCH,  0,                         SP_JCC},
    {"prefetch",         IC_NOP,     R_NOREGS,                  SP_NONE},
    {"cmp",              IC_FP_ADD,  0,                         SP_NONE},
    {"vcmp",             IC_FP_ADD,  0,                         SP_NONE},
    {"cvt",              IC_CONVERT, R_W0 | R_FP,               SP_NONE},
    {"vcvt",             IC_CONVERT, R_W0 | R_FP,               SP_NONE},
    {"vfmadd",           IC_FMA,     0,                         SP_NONE},
    {"vfmsub",           IC_FMA,     0,                         SP_NONE},
    {"vfnmadd",          IC_FMA,     0,                         SP_NONE},
    {"vfnmsub",          IC_FMA,     0,                         SP_NONE},
    {"vgather",          IC_GATHER,  R_FP,                      SP_GATHER},
    {"vpgather",         IC_GATHER,  0,                         SP_GATHER},
    {"f",                IC_X87,     0,                         SP_NONE},
    {"fcmov",            IC_X87,     0,                         SP_FCMOV},
    {"xsave",            IC_OTHER,   R_W0 | R_BIGMEM,           SP_NONE},
    {"xrstor",           IC_OTHER,   R_BIGMEM,                  SP_NONE},
    {"sha",              IC_VEC_MUL, 0,                         SP_NONE},
    {"vrcp",             IC_FP_MUL,  0,                         SP_NONE},
    {"vrsqrt",           IC_FP_MUL,  0,                         SP_NONE},
    {"vrndscale",        IC_FP_ADD,  0,                         SP_NONE},
    {"vbroadcast",       IC_SHUFFLE, R_MOVE | R_XLANE,          SP_NONE},
    {"vpbroadcast",      IC_SHUFFLE, R_MOVE | R_XLANE,          SP_NONE},
    {"vmovdq",           IC_MOV,     R_MOVE,                    SP_NONE},
    {"vextract",         IC_PERMUTE, R_STFORM,                  SP_NONE},
    {"vinsert",          IC_PERMUTE, R_LDBLEND,                 SP_NONE},
    {"vperm",            IC_PERMUTE, 0,                         SP_NONE},
};
/* clang-format on */

/* The row for mnemonics the tables do not know: class IC_OTHER, Capstone's directions. */
static const dec_ent k_unknown = {"", IC_OTHER, R_CSMEM, SP_NONE};
/* movsd/cmpsd without vector operands are the string instructions. */
static const dec_ent k_str_movsd = {"movsd", IC_STRING, R_W0, SP_STRING};
static const dec_ent k_str_cmpsd = {"cmpsd", IC_STRING, 0, SP_STRING};

static int ent_cmp(const void *key, const void *elt) {
  return strcmp((const char *)key, ((const dec_ent *)elt)->name);
}

static const dec_ent *find_exact(const char *name) {
  return bsearch(name, k_exact, WI_ARRAY_LEN(k_exact), sizeof k_exact[0], ent_cmp);
}

static const dec_ent *find_prefix(const char *name) {
  const dec_ent *best = NULL;
  size_t best_len = 0;
  for (size_t i = 0; i < WI_ARRAY_LEN(k_prefix); i++) {
    size_t n = strlen(k_prefix[i].name);
    if (n > best_len && strncmp(name, k_prefix[i].name, n) == 0) {
      best = &k_prefix[i];
      best_len = n;
    }
  }
  return best;
}

/* The row for a Capstone mnemonic: exact, exact without the VEX 'v', longest prefix. */
static const dec_ent *resolve_name(const char *name) {
  const dec_ent *e = find_exact(name);
  if (!e && name[0] == 'v') e = find_exact(name + 1);
  if (!e) e = find_prefix(name);
  return e ? e : &k_unknown;
}

int dec_table_class(const char *mnemonic) {
  const dec_ent *e = resolve_name(mnemonic);
  return e == &k_unknown ? -1 : e->cls;
}

bool dec_check_tables(char *msg, size_t cap) {
  for (size_t i = 0; i < WI_ARRAY_LEN(k_exact); i++) {
    if (k_exact[i].cls >= IC_NUM) {
      snprintf(msg, cap, "k_exact[%zu] \"%s\": bad class", i, k_exact[i].name);
      return false;
    }
    if (i && strcmp(k_exact[i - 1].name, k_exact[i].name) >= 0) {
      snprintf(msg, cap, "k_exact not sorted at [%zu] \"%s\"", i, k_exact[i].name);
      return false;
    }
  }
  for (size_t i = 0; i < WI_ARRAY_LEN(k_prefix); i++) {
    if (k_prefix[i].cls >= IC_NUM || !k_prefix[i].name[0]) {
      snprintf(msg, cap, "k_prefix[%zu]: bad row", i);
      return false;
    }
  }
  if (cap) msg[0] = '\0';
  return true;
}

/* ==== decoder ============================================================================== */

struct dec_ctx {
  csh cs;
  cs_insn *insn;                      /* Capstone's reusable buffer (cs_disasm_iter) */
  const dec_ent *ent[X86_INS_ENDING]; /* table row per Capstone instruction id */
};

dec_ctx *dec_new(void) {
  dec_ctx *d = xcalloc(1, sizeof *d);
  /* Fails only when libcapstone lacks x86 or memory is exhausted: nothing to recover. */
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs) != CS_ERR_OK)
    wi_die(1, "capstone: cannot open an x86-64 disassembler (cs_open failed)");
  cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
  d->insn = cs_malloc(d->cs);
  if (!d->insn) wi_die(1, "out of memory in cs_malloc");
  d->ent[0] = &k_unknown;
  for (unsigned id = 1; id < X86_INS_ENDING; id++) {
    const char *name = cs_insn_name(d->cs, id);
    d->ent[id] = name ? resolve_name(name) : &k_unknown;
  }
  return d;
}

void dec_free(dec_ctx *d) {
  if (!d) return;
  cs_free(d->insn, 1);
  cs_close(&d->cs);
  free(d);
}

/* Status-flag bits of Capstone's eflags mask (OF SF ZF AF PF CF): the FLAGS family. System
 * flags (DF, IF, TF, ...) are left out on purpose: string instructions read DF and cld/std
 * write it, and routing those through FLAGS would chain them to unrelated compares. */
#define EFL_TEST_STATUS                                                                                      \
  (X86_EFLAGS_TEST_OF | X86_EFLAGS_TEST_SF | X86_EFLAGS_TEST_ZF | X86_EFLAGS_TEST_PF | X86_EFLAGS_TEST_CF |  \
   X86_EFLAGS_TEST_AF)
#define EFL_TEST_ANY                                                                                         \
  (EFL_TEST_STATUS | X86_EFLAGS_TEST_NT | X86_EFLAGS_TEST_DF | X86_EFLAGS_TEST_RF | X86_EFLAGS_TEST_IF |     \
   X86_EFLAGS_TEST_TF)
#define EFL_WRITE_STATUS                                                                                     \
  (X86_EFLAGS_MODIFY_AF | X86_EFLAGS_MODIFY_CF | X86_EFLAGS_MODIFY_SF | X86_EFLAGS_MODIFY_ZF |               \
   X86_EFLAGS_MODIFY_PF | X86_EFLAGS_MODIFY_OF | X86_EFLAGS_RESET_OF | X86_EFLAGS_RESET_CF |                 \
   X86_EFLAGS_RESET_SF | X86_EFLAGS_RESET_AF | X86_EFLAGS_RESET_PF | X86_EFLAGS_RESET_ZF |                   \
   X86_EFLAGS_SET_CF | X86_EFLAGS_SET_OF | X86_EFLAGS_SET_SF | X86_EFLAGS_SET_ZF | X86_EFLAGS_SET_AF |       \
   X86_EFLAGS_SET_PF | X86_EFLAGS_UNDEFINED_OF | X86_EFLAGS_UNDEFINED_SF | X86_EFLAGS_UNDEFINED_ZF |         \
   X86_EFLAGS_UNDEFINED_PF | X86_EFLAGS_UNDEFINED_AF | X86_EFLAGS_UNDEFINED_CF)
#define EFL_WRITE_ANY                                                                                        \
  (EFL_WRITE_STATUS | X86_EFLAGS_MODIFY_TF | X86_EFLAGS_MODIFY_IF | X86_EFLAGS_MODIFY_DF |                   \
   X86_EFLAGS_MODIFY_NT | X86_EFLAGS_MODIFY_RF | X86_EFLAGS_RESET_DF | X86_EFLAGS_RESET_IF |                 \
   X86_EFLAGS_RESET_TF | X86_EFLAGS_RESET_NT | X86_EFLAGS_RESET_RF | X86_EFLAGS_RESET_AC |                   \
   X86_EFLAGS_SET_DF | X86_EFLAGS_SET_IF)
/* x87 condition codes C0-C3 in Capstone's fpu_flags (the same union as eflags). */
#define FPU_TEST_ANY                                                                                         \
  (X86_FPU_FLAGS_TEST_C0 | X86_FPU_FLAGS_TEST_C1 | X86_FPU_FLAGS_TEST_C2 | X86_FPU_FLAGS_TEST_C3)

/* A memory operand being collected. */
typedef struct mem_op {
  uint8_t dir;  /* MEM_R / MEM_W / MEM_RW */
  uint8_t size; /* bytes, 0 unknown */
} mem_op;

/* Everything dec_decode accumulates before writing the record. */
typedef struct dec_acc {
  regset_t src, addr_src, dst;
  mem_op mem[4];
  unsigned n_mem;
  unsigned vec_bytes;
} dec_acc;

static void acc_mem(dec_acc *a, unsigned dir, unsigned size) {
  if (a->n_mem < WI_ARRAY_LEN(a->mem))
    a->mem[a->n_mem++] = (mem_op){(uint8_t)dir, (uint8_t)(size > 255 ? 0 : size)};
}

/* Read a register; `addr` puts it in addr_src instead of src. */
static void acc_read(dec_acc *a, unsigned reg, bool addr) {
  dec_reg ri = reg_info(reg);
  if (ri.fam < 0) return;
  if (addr)
    a->addr_src |= RG_BIT(ri.fam);
  else
    a->src |= RG_BIT(ri.fam);
}

/* Write a register, applying the partial-register rule. */
static void acc_write(dec_acc *a, unsigned reg, bool xmm_partial) {
  dec_reg ri = reg_info(reg);
  if (ri.fam < 0) return;
  a->dst |= RG_BIT(ri.fam);
  if (write_merges(ri.kind, xmm_partial)) a->src |= RG_BIT(ri.fam);
}

/* Prefix facts read from the instruction bytes (Capstone's prefix[0] keeps only one of
 * F0/F2/F3). VEX/EVEX: the first byte after the legacy prefixes is C4/C5/62, which in 64-bit
 * mode are always VEX/EVEX escapes. */
enum { PFX_LOCK = 1, PFX_REP = 2, PFX_VEX = 4 };
static unsigned scan_prefixes(const uint8_t *b, size_t n) {
  unsigned f = 0;
  for (size_t i = 0; i < n; i++) {
    switch (b[i]) {
    case 0xf0: f |= PFX_LOCK; continue;
    case 0xf2:
    case 0xf3: f |= PFX_REP; continue; /* also SSE mandatory prefixes, bnd */
    case 0x26:
    case 0x2e:
    case 0x36:
    case 0x3e:
    case 0x64:
    case 0x65:
    case 0x66:
    case 0x67: continue;
    case 0xc4:
    case 0xc5:
    case 0x62: return f | PFX_VEX;
    default: return f;
    }
  }
  return f;
}

/* The zero-idiom operand shape: two register sources that are the same register (op0 == op1
 * for two-operand legacy forms, op1 == op2 for three-operand VEX forms), no memory, and a
 * destination whose write does not merge (8/16-bit GPR writes keep the old upper bits). */
static bool same_sources(const cs_x86 *x) {
  for (unsigned i = 0; i < x->op_count; i++)
    if (x->operands[i].type != X86_OP_REG) return false;
  bool same;
  if (x->op_count == 2)
    same = x->operands[0].reg == x->operands[1].reg;
  else if (x->op_count == 3)
    same = x->operands[1].reg == x->operands[2].reg;
  else
    return false;
  if (!same) return false;
  unsigned k = reg_info(x->operands[0].reg).kind;
  return k == RK_GPR32 || k == RK_GPR64 || k == RK_XMM || k == RK_YMM || k == RK_ZMM || k == RK_MM;
}

static void set_invalid(dec_insn *out) {
  out->len = 1;
  out->cls = IC_OTHER;
  out->flags = DF_INVALID;
  memcpy(out->text, "(bad)", 6);
}

static void set_text(dec_insn *out, const cs_insn *in) {
  size_t cap = sizeof out->text - 1, n = 0;
  for (const char *s = in->mnemonic; *s && n < cap; s++)
    out->text[n++] = *s;
  if (in->op_str[0] && n < cap) out->text[n++] = ' ';
  for (const char *s = in->op_str; *s && n < cap; s++)
    out->text[n++] = *s;
  out->text[n] = '\0';
}

static bool is_fp_class(unsigned cls) {
  return cls == IC_FP_ADD || cls == IC_FP_MUL || cls == IC_FMA || cls == IC_FP_DIV || cls == IC_X87;
}

bool dec_decode(dec_ctx *d, const uint8_t *bytes, size_t n, uint64_t pc, dec_insn *out) {
  memset(out, 0, sizeof *out);
  out->pc = pc;
  const uint8_t *code = bytes;
  size_t size = n;
  uint64_t addr = pc;
  if (!d || !bytes || n == 0 || !cs_disasm_iter(d->cs, &code, &size, &addr, d->insn) || d->insn->size < 1 ||
      d->insn->size > 15 || !d->insn->detail) {
    set_invalid(out);
    return false;
  }
  const cs_insn *in = d->insn;
  const cs_detail *det = in->detail;
  const cs_x86 *x = &det->x86;
  const dec_ent *e = d->ent[in->id < X86_INS_ENDING ? in->id : 0];
  const unsigned pfx = scan_prefixes(bytes, in->size);
  const bool vex = (pfx & PFX_VEX) != 0;

  /* Operand shape: vector registers, where the memory operand is. */
  unsigned vec_bytes = 0;
  bool has_mem = false, mem0 = false, imm_src = false, has_gpr = false;
  for (unsigned i = 0; i < x->op_count; i++) {
    const cs_x86_op *op = &x->operands[i];
    if (op->type == X86_OP_REG) {
      dec_reg ri = reg_info(op->reg);
      vec_bytes = WI_MAX(vec_bytes, kind_vec_bytes(ri.kind));
      has_gpr |= kind_is_gpr(ri.kind);
    } else if (op->type == X86_OP_MEM) {
      has_mem = true;
      mem0 |= i == 0;
      vec_bytes = WI_MAX(vec_bytes, kind_vec_bytes(reg_info(op->mem.index).kind));
    } else if (op->type == X86_OP_IMM) {
      imm_src |= i == 1;
    }
  }
  const bool simd = vec_bytes > 0;
  if (e->sp == SP_STRDUAL && !simd) e = in->id == X86_INS_MOVSD ? &k_str_movsd : &k_str_cmpsd;
  const uint32_t rules = e->rules;
  const bool x87 = e->cls == IC_X87;
  /* movss/movsd loads zero the rest of the register; scalar conversions to FP merge. */
  const bool cvt_partial = in->id == X86_INS_CVTSI2SS || in->id == X86_INS_CVTSI2SD ||
                           in->id == X86_INS_CVTSS2SD || in->id == X86_INS_CVTSD2SS;
  const bool xmm_partial =
      !vex && (((rules & R_PARTIAL) && !(has_mem && !mem0 && (rules & R_MOVE))) || cvt_partial);
  const bool stack =
      e->sp == SP_PUSH || e->sp == SP_POP || e->sp == SP_CALL || e->sp == SP_RET || e->sp == SP_ENTER;

  dec_acc a = {0};
  unsigned cls = e->cls;
  unsigned flags = 0;
  if (vex) flags |= DF_VEX;
  if (rules & R_SERIAL) flags |= DF_SERIAL;
  if (is_fp_class(e->cls) || (rules & R_FP)) flags |= DF_FP;

  if (!(rules & R_NOREGS)) {
    /* Explicit operands. */
    for (unsigned i = 0; i < x->op_count; i++) {
      const cs_x86_op *op = &x->operands[i];
      if (op->type == X86_OP_REG) {
        if (x87 && reg_info(op->reg).kind == RK_ST) {
          /* Capstone's x87 access flags are unreliable (fcmov marks its source written). */
          acc_read(&a, op->reg, false);
          if (rules & R_X87OPW) acc_write(&a, op->reg, false);
          continue;
        }
        unsigned acc = op->access ? op->access : CS_AC_READ;
        if (acc & CS_AC_READ) acc_read(&a, op->reg, false);
        if (acc & CS_AC_WRITE) acc_write(&a, op->reg, xmm_partial);
      } else if (op->type == X86_OP_MEM) {
        bool lea = e->sp == SP_LEA;
        acc_read(&a, op->mem.base, !lea);
        acc_read(&a, op->mem.index, !lea);
        if (op->mem.segment == X86_REG_FS || op->mem.segment == X86_REG_GS)
          acc_read(&a, op->mem.segment, !lea);
        if (lea) continue;
        unsigned dir = MEM_R;
        if (rules & R_CSMEM) {
          dir = (op->access & CS_AC_WRITE) ? ((op->access & CS_AC_READ) ? MEM_RW : MEM_W) : MEM_R;
        } else if (i == 0) {
          if (rules & (R_MOVE | R_STFORM | R_W0))
            dir = MEM_W;
          else if (rules & R_RMW0)
            dir = MEM_RW;
        }
        unsigned msize = op->size;
        if (rules & R_BIGMEM)
          msize = 0;
        else if (rules & R_MEM4)
          msize = 4;
        else if (rules & R_MEM8)
          msize = 8;
        acc_mem(&a, dir, msize);
      }
    }

    /* Implicit registers (Capstone lists them separately). Flags are decided below from the
     * eflags mask. RSP of push/pop/call/ret only forms the stack address. */
    bool cs_rflags_r = false, cs_rflags_w = false;
    for (unsigned i = 0; i < det->regs_read_count; i++) {
      unsigned r = det->regs_read[i];
      if (r == X86_REG_EFLAGS) {
        cs_rflags_r = true;
        continue;
      }
      acc_read(&a, r, stack && reg_info(r).fam == RG_RSP);
    }
    for (unsigned i = 0; i < det->regs_write_count; i++) {
      unsigned r = det->regs_write[i];
      if (r == X86_REG_EFLAGS) {
        cs_rflags_w = true;
        continue;
      }
      acc_write(&a, r, xmm_partial);
    }

    /* Status flags. */
    if (x87) {
      /* The union holds fpu_flags (C0-C3) for x87; rflags only via fcomi & co. */
      uint64_t fpu = x->fpu_flags;
      if (e->sp == SP_FCMOV) {
        a.src |= RG_BIT(RG_FLAGS);
      } else if (!(rules & R_X87NOST)) { /* control ops: SP_FPSW_* says what they touch */
        if (fpu & FPU_TEST_ANY) a.src |= RG_BIT(RG_FPSW);
        if (fpu & ~(uint64_t)FPU_TEST_ANY & 0xffffull) a.dst |= RG_BIT(RG_FPSW);
      }
      if (cs_rflags_r) a.src |= RG_BIT(RG_FLAGS);
      if (cs_rflags_w) a.dst |= RG_BIT(RG_FLAGS);
    } else if (simd) {
      /* Capstone's eflags for SSE forms sharing ids with string/integer ones are wrong
       * (movsd, cmpltsd): only the rows that say so write flags. */
      if (rules & R_WFLAGS) a.dst |= RG_BIT(RG_FLAGS);
    } else {
      uint64_t ef = x->eflags;
      /* When the mask describes reads (or writes) at all, trust it; otherwise fall back to
       * Capstone's implicit rflags (adc/sbb/pushf list rflags but set no TEST bits). */
      if ((ef & EFL_TEST_STATUS) || (!(ef & EFL_TEST_ANY) && cs_rflags_r)) a.src |= RG_BIT(RG_FLAGS);
      if ((ef & EFL_WRITE_STATUS) || (!(ef & EFL_WRITE_ANY) && cs_rflags_w)) a.dst |= RG_BIT(RG_FLAGS);
      if (rules & R_RFLAGS) a.src |= RG_BIT(RG_FLAGS);
      /* A shift by cl leaves the flags unchanged when the count is 0: they are a source. */
      if (e->cls == IC_SHIFT && (a.dst & RG_BIT(RG_FLAGS)))
        for (unsigned i = 1; i < x->op_count; i++)
          if (x->operands[i].type == X86_OP_REG && x->operands[i].reg == X86_REG_CL)
            a.src |= RG_BIT(RG_FLAGS);
    }

    /* x87 stack top: most x87 operations read and write st(0). */
    if (x87 && !(rules & R_X87NOST)) {
      if (!(rules & R_X87PUSH)) a.src |= RG_BIT(RG_ST0);
      if (!(rules & R_X87NW)) a.dst |= RG_BIT(RG_ST0);
    }
  }

  /* Special rows: implicit operands and fixups. */
  switch (e->sp) {
  case SP_JMP:
  case SP_JCC:
  case SP_CALL:
    if (x->op_count >= 1 && x->operands[0].type == X86_OP_IMM) {
      out->target = (uint64_t)x->operands[0].imm;
      out->br = e->sp == SP_JMP ? BR_JUMP : e->sp == SP_JCC ? BR_COND : BR_CALL;
    } else {
      out->br = e->sp == SP_CALL ? BR_IND_CALL : e->sp == SP_JCC ? BR_COND : BR_IND_JUMP;
    }
    if (e->sp == SP_CALL) { /* the return address */
      acc_mem(&a, MEM_W, 8);
      a.addr_src |= RG_BIT(RG_RSP);
      a.dst |= RG_BIT(RG_RSP);
    }
    break;
  case SP_RET:
    out->br = BR_RET;
    acc_mem(&a, MEM_R, 8);
    a.addr_src |= RG_BIT(RG_RSP);
    a.dst |= RG_BIT(RG_RSP);
    break;
  case SP_PUSH:
  case SP_POP: {
    unsigned sz = (x->op_count >= 1 && x->operands[0].type != X86_OP_IMM && x->operands[0].size == 2) ? 2 : 8;
    acc_mem(&a, e->sp == SP_PUSH ? MEM_W : MEM_R, sz);
    a.addr_src |= RG_BIT(RG_RSP);
    a.dst |= RG_BIT(RG_RSP);
    break;
  }
  case SP_LEAVE: /* the stack address is rbp; rsp's new value comes from rbp too */
    a.src = 0;
    a.addr_src = RG_BIT(RG_RBP);
    a.dst = RG_BIT(RG_RSP) | RG_BIT(RG_RBP);
    acc_mem(&a, MEM_R, 8);
    break;
  case SP_ENTER:
    a.src |= RG_BIT(RG_RBP);
    a.addr_src |= RG_BIT(RG_RSP);
    a.dst |= RG_BIT(RG_RSP) | RG_BIT(RG_RBP);
    acc_mem(&a, MEM_W, 8);
    break;
  case SP_XLAT:
    a.src |= RG_BIT(RG_RAX);
    a.addr_src |= RG_BIT(RG_RBX) | RG_BIT(RG_RAX);
    a.dst |= RG_BIT(RG_RAX);
    acc_mem(&a, MEM_R, 1);
    break;
  case SP_SYSCALL: /* Linux x86-64: number, six arguments and rflags (saved in r11) in */
    a.src = RG_BIT(RG_RAX) | RG_BIT(RG_RDI) | RG_BIT(RG_RSI) | RG_BIT(RG_RDX) | RG_BIT(RG_R10) |
            RG_BIT(RG_R8) | RG_BIT(RG_R9) | RG_BIT(RG_FLAGS);
    a.addr_src = 0;
    a.dst = RG_BIT(RG_RAX) | RG_BIT(RG_RCX) | RG_BIT(RG_R11);
    a.n_mem = 0;
    break;
  case SP_CMPXCHG:
    a.src |= RG_BIT(RG_RAX);
    a.dst |= RG_BIT(RG_RAX) | RG_BIT(RG_FLAGS);
    if (in->id != X86_INS_CMPXCHG) { /* 8b/16b: rdx:rax compared, rcx:rbx stored */
      a.src |= RG_BIT(RG_RDX) | RG_BIT(RG_RBX) | RG_BIT(RG_RCX);
      a.dst |= RG_BIT(RG_RDX);
    }
    if (has_mem) cls = IC_ATOMIC;
    break;
  case SP_GATHER: /* unselected elements keep the destination; the mask is cleared */
    if (x->op_count >= 1 && x->operands[0].type == X86_OP_REG) acc_read(&a, x->operands[0].reg, false);
    if (x->op_count >= 3 && x->operands[x->op_count - 1].type == X86_OP_REG)
      acc_write(&a, x->operands[x->op_count - 1].reg, false);
    break;
  case SP_STRING:
    if (pfx & PFX_REP) {
      flags |= DF_REP;
      a.src |= RG_BIT(RG_RCX);
      a.dst |= RG_BIT(RG_RCX);
    }
    /* Only DF is read (left out on purpose, see EFL_TEST_STATUS); Capstone lists rflags. */
    a.src &= ~RG_BIT(RG_FLAGS);
    /* the pointers advance: their bases are data sources and destinations as well */
    for (unsigned i = 0; i < x->op_count; i++)
      if (x->operands[i].type == X86_OP_MEM) {
        dec_reg ri = reg_info(x->operands[i].mem.base);
        if (ri.fam >= 0) {
          a.src |= RG_BIT(ri.fam);
          a.dst |= RG_BIT(ri.fam);
        }
      }
    break;
  case SP_VZEROALL:
    for (int v = 0; v < 16; v++)
      a.dst |= RG_BIT(RG_V0 + v);
    break;
  case SP_STMXCSR: a.src |= RG_BIT(RG_MXCSR); break;
  case SP_LDMXCSR: a.dst |= RG_BIT(RG_MXCSR); break;
  case SP_FPSW_R: a.src |= RG_BIT(RG_FPSW); break;
  case SP_FPSW_W: a.dst |= RG_BIT(RG_FPSW); break;
  case SP_RDSEG: a.src |= RG_BIT(RG_SEG); break;
  case SP_WRSEG: a.dst |= RG_BIT(RG_SEG); break;
  case SP_SIGNX: a.dst &= ~RG_BIT(RG_RAX); break;
  default: break;
  }

  /* Class from the instruction form. */
  if (rules & R_MOVE) {
    if (has_mem)
      cls = mem0 ? IC_STORE : IC_LOAD;
    else if (imm_src)
      cls = IC_ALU; /* mov reg, imm: needs an ALU, nothing to eliminate */
    else if (has_gpr && simd)
      cls = IC_CONVERT; /* movd/movq between a GPR and a vector register */
  }
  if ((rules & R_STFORM) && mem0) cls = IC_STORE;
  if ((rules & R_XLANE) && cls == IC_SHUFFLE && vec_bytes >= 32) cls = IC_PERMUTE;
  if ((rules & R_LDBLEND) && has_mem && !mem0) cls = IC_VEC_ALU;
  if (pfx & PFX_LOCK) {
    flags |= DF_LOCK;
    /* (not a control transfer: `lock call [m]` faults on hardware; wrong-path fetch from data
     * can still decode one, and a branch must stay a branch) */
    if (has_mem && cls != IC_BRANCH) cls = IC_ATOMIC;
  }
  if ((rules & R_XCHG) && has_mem) {
    flags |= DF_LOCK; /* xchg with memory is locked without the prefix */
    cls = IC_ATOMIC;
  }
  if ((rules & (R_ZERO | R_ONES)) && !has_mem && same_sources(x)) {
    flags |= DF_ZERO_IDIOM;
    a.src = 0;
    a.addr_src = 0;
    if (rules & R_ZERO) cls = IC_ZERO;
  }

  /* Memory operands in access order: reads happen before writes (push [m], pop [m],
   * call [m], movs). Stable insertion sort of at most four. */
  for (unsigned i = 1; i < a.n_mem; i++) {
    mem_op m = a.mem[i];
    unsigned j = i;
    for (; j > 0 && (a.mem[j - 1].dir == MEM_W) && m.dir != MEM_W; j--)
      a.mem[j] = a.mem[j - 1];
    a.mem[j] = m;
  }
  unsigned nm = WI_MIN(a.n_mem, (unsigned)DEC_MAX_MEM);
  for (unsigned i = 0; i < nm; i++) {
    out->mem_dir[i] = a.mem[i].dir;
    out->mem_size[i] = a.mem[i].size;
  }

  out->len = (uint8_t)in->size;
  out->cls = (uint8_t)cls;
  out->n_mem = (uint8_t)nm;
  out->src = a.src;
  out->addr_src = a.addr_src;
  out->dst = a.dst;
  if (vec_bytes >= 32) flags |= DF_WIDE;
  out->flags = (uint16_t)flags;
  out->vec_bytes = (uint8_t)vec_bytes;
  set_text(out, in);
  return true;
}

/* ==== decode cache ========================================================================= */

struct dec_cache {
  const trace_t *t;
  dec_ctx *dec;               /* created on the first PC the trace did not execute */
  wi_arena *arena;            /* records decoded here (stable addresses) */
  wi_map64 map;               /* pc + 1 -> index into recs */
  VEC(const dec_insn *) recs; /* NULL entries: no code bytes at that PC */
  const dec_insn *top;        /* the record for pc == UINT64_MAX (its key would be 0) */
  bool have_top;
};

dec_cache *dec_cache_new(const trace_t *t) {
  dec_cache *c = xcalloc(1, sizeof *c);
  c->t = t;
  c->arena = arena_new(64 * 1024);
  map64_init(&c->map, 1024);
  return c;
}

void dec_cache_free(dec_cache *c) {
  if (!c) return;
  dec_free(c->dec);
  arena_free(c->arena);
  map64_free(&c->map);
  VEC_FREE(c->recs);
  free(c);
}

/* Look pc up in the trace: its static record, or a fresh decode of the code image. */
static const dec_insn *cache_fill(dec_cache *c, uint64_t pc) {
  uint32_t sid = trace_sid_of(c->t, pc);
  if (sid != UINT32_MAX) return trace_decoded(c->t, sid);
  size_t avail = 0;
  const uint8_t *bytes = trace_code_at(c->t, pc, &avail);
  if (!bytes || avail == 0) return NULL;
  if (!c->dec) c->dec = dec_new();
  dec_insn *rec = arena_alloc(c->arena, sizeof *rec);
  dec_decode(c->dec, bytes, WI_MIN(avail, (size_t)15), pc, rec);
  return rec;
}

const dec_insn *dec_cache_get(dec_cache *c, uint64_t pc) {
  if (pc == UINT64_MAX) {
    if (!c->have_top) {
      c->top = cache_fill(c, pc);
      c->have_top = true;
    }
    return c->top;
  }
  const uint32_t *ix = map64_get(&c->map, pc + 1);
  if (ix) return c->recs.a[*ix];
  const dec_insn *rec = cache_fill(c, pc);
  map64_put(&c->map, pc + 1, (uint32_t)c->recs.n);
  VEC_PUSH(c->recs, rec);
  return rec;
}
