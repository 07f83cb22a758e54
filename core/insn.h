/* insn.h — the ISA-neutral static instruction record (from the decoder) and the dynamic
 * instruction record (from the trace). Everything above core/ sees instructions only as these. */
#ifndef WHATIF_INSN_H
#define WHATIF_INSN_H

#include <stdbool.h>
#include <stdint.h>

/* ---- architectural register families --------------------------------------------------
 * Every architectural register the model renames is one bit of a 64-bit set. Partial
 * registers belong to their family (AL/AH/AX/EAX/RAX are RG_RAX; XMM0/YMM0/ZMM0 are
 * RG_V0). xmm16-31 (AVX-512 only; never executed under QEMU) fold onto V0-V15. */
enum {
  RG_RAX = 0, RG_RCX, RG_RDX, RG_RBX, RG_RSP, RG_RBP, RG_RSI, RG_RDI,
  RG_R8, RG_R9, RG_R10, RG_R11, RG_R12, RG_R13, RG_R14, RG_R15, /* 0..15 */
  RG_FLAGS = 16,                  /* RFLAGS (status flags as one register) */
  RG_V0 = 17,                     /* V0..V15 = 17..32: xmm/ymm/zmm 0..15 */
  RG_ST0 = 33,                    /* ST0..ST7 = 33..40 (x87 and MMX alias) */
  RG_FPSW = 41,                   /* x87 status/control word, tag word */
  RG_MXCSR = 42,
  RG_K0 = 43,                     /* K0..K7 = 43..50 (AVX-512 masks) */
  RG_SEG = 51,                    /* segment bases (fs/gs) as one register */
  RG_NUM = 52
};
#define RG_BIT(r) (1ULL << (r))
typedef uint64_t regset_t;

/* Name of a register family ("rax", "flags", "v3", ...). */
const char *reg_name(int r);

/* ---- operation classes ---------------------------------------------------------------- */
/* What the instruction computes, independent of its memory operands: an `add rax, [mem]` is
 * IC_ALU with one memory read. The machine configuration maps each class to micro-ops,
 * ports and latencies; memory operands add load / store-address / store-data micro-ops. */
typedef enum insn_class {
  IC_NOP = 0,    /* nop, prefetch hints, endbr, pause (no result) */
  IC_ZERO,       /* zeroing idiom (xor eax,eax; vpxor x,x,x): no inputs, eliminated at rename */
  IC_MOV,        /* register-to-register move (eliminable), incl. vector moves, movzx/movsx */
  IC_LOAD,       /* pure load: mov reg,[mem], pop, vmovdqu ymm,[mem], broadcast from memory */
  IC_STORE,      /* pure store: mov [mem],reg, push, vmovdqu [mem],ymm */
  IC_ALU,        /* integer add/sub/logic/cmp/test/inc/neg/not/cmov/setcc/bswap/xchg */
  IC_SHIFT,      /* shifts and rotates */
  IC_BITCNT,     /* popcnt/lzcnt/tzcnt/bsf/bsr/pdep/pext/crc32 (slow integer, 3 cycles) */
  IC_MUL,        /* integer multiply */
  IC_DIV,        /* integer divide */
  IC_LEA,        /* address arithmetic */
  IC_BRANCH,     /* control transfer (see branch kind) */
  IC_VEC_ALU,    /* SIMD integer add/logic/compare/min/max/blend */
  IC_VEC_MUL,    /* SIMD integer multiply, psadbw, pmaddwd */
  IC_FP_ADD,     /* FP add/sub/compare/min/max/round (scalar or vector) */
  IC_FP_MUL,     /* FP multiply */
  IC_FMA,        /* fused multiply-add */
  IC_FP_DIV,     /* FP divide and square root (unpipelined) */
  IC_SHUFFLE,    /* in-lane shuffles: pshufb/pshufd, unpack, pack, palignr, shifts of whole
                    bytes, vpermilps, insert/extract of elements, broadcasts and widening
                    moves into an xmm register */
  IC_CONVERT,    /* int<->fp and fp<->fp conversions, movd/movq between GPR and vector */
  IC_STRING,     /* movs/stos/lods/cmps/scas (usually with rep) */
  IC_GATHER,     /* vector gather */
  IC_ATOMIC,     /* lock-prefixed read-modify-write, xchg with memory, cmpxchg */
  IC_SERIAL,     /* syscall, cpuid, fences, rdtsc, xgetbv, other serializing ops */
  IC_X87,        /* x87 floating point */
  IC_OTHER,      /* anything else (microcoded, rare) */
  IC_PERMUTE,    /* cross-lane shuffles (data crosses a 128-bit lane): vpermd/q/ps/pd,
                    vperm2i128/f128, vinserti128/vextracti128 between registers, widening
                    moves (vpmovzx/sx) into a ymm register, broadcasts into a ymm register
                    from a register (from memory a broadcast is a load).
                    Golden Cove runs these only on port 5 (in-lane shuffles also on port 1).
                    Added last so the numbers of the older classes did not change. */
  IC_NUM
} insn_class;

/* Name of a class ("alu", "fma", ...), as used in machine configurations. */
const char *insn_class_name(int cls);
/* Class id for a name, or -1. */
int insn_class_from_name(const char *name);

/* Branch kinds. BR_NONE for non-branches. */
typedef enum branch_kind {
  BR_NONE = 0,
  BR_COND,      /* conditional direct jump (jcc, jrcxz, loop*) */
  BR_JUMP,      /* unconditional direct jump */
  BR_IND_JUMP,  /* indirect jump (register or memory) */
  BR_CALL,      /* direct call */
  BR_IND_CALL,  /* indirect call */
  BR_RET,       /* return */
  BR_NUM
} branch_kind;
const char *branch_kind_name(int br);
static inline bool br_is_call(int br) { return br == BR_CALL || br == BR_IND_CALL; }
static inline bool br_is_indirect(int br) { return br == BR_IND_JUMP || br == BR_IND_CALL; }

/* Memory operand direction. */
enum { MEM_R = 1, MEM_W = 2, MEM_RW = 3 };

/* Decoder flags. */
enum {
  DF_REP = 1 << 0,        /* rep/repe/repne prefix on a string instruction */
  DF_LOCK = 1 << 1,       /* lock prefix */
  DF_VEX = 1 << 2,        /* VEX/EVEX encoded (writes zero the upper vector bits) */
  DF_SERIAL = 1 << 3,     /* serializing: drains the pipeline before and after */
  DF_ZERO_IDIOM = 1 << 4, /* recognised dependency-breaking idiom */
  DF_INVALID = 1 << 5,    /* could not be decoded (treated as IC_OTHER, no operands) */
  DF_FP = 1 << 6,         /* operates on floating point data */
  DF_WIDE = 1 << 7,       /* 256-bit (ymm) or wider vector operation */
};

#define DEC_MAX_MEM 2
#define DEC_TEXT_LEN 48

/* The static (per-PC) record produced by the decoder once per instruction address. */
typedef struct dec_insn {
  uint64_t pc;
  uint64_t target;          /* direct branch target (0 if none) */
  regset_t src;             /* registers read by the computation (data operands) */
  regset_t addr_src;        /* registers read only to form memory addresses (base/index) */
  regset_t dst;             /* registers written (flags included) */
  uint8_t len;              /* bytes */
  uint8_t cls;              /* insn_class */
  uint8_t br;               /* branch_kind */
  uint8_t n_mem;            /* explicit + implicit memory operands, at most DEC_MAX_MEM */
  uint8_t mem_dir[DEC_MAX_MEM];  /* MEM_R / MEM_W / MEM_RW from the instruction form (Capstone corrected); the trace's
                                    recorded directions are authoritative */
  uint8_t mem_size[DEC_MAX_MEM]; /* bytes, 0 if unknown */
  uint16_t flags;           /* DF_* */
  uint8_t vec_bytes;        /* vector width in bytes (16, 32) or 0 */
  uint8_t pad;
  char text[DEC_TEXT_LEN];  /* disassembly "mnemonic operands", truncated */
} dec_insn;

/* ---- dynamic instructions -------------------------------------------------------------- */

/* One memory access of a dynamic instruction. Contiguous same-direction accesses that QEMU
 * split (e.g. a 32-byte ymm load) are merged into one. For a collapsed rep-string, `addr` is
 * the lowest address touched and `size` the total bytes. */
typedef struct trace_mem {
  uint64_t addr;
  uint32_t size;     /* bytes */
  uint8_t is_store;
  uint8_t pad[3];
} trace_mem;

/* Dynamic instruction flags. */
enum {
  TI_TAKEN = 1 << 0, /* next_pc != pc + len (a taken branch, or an ASYNC transfer) */
  TI_ASYNC = 1 << 1, /* the transfer to next_pc is not this instruction's doing (signal
                        delivery, sigreturn, syscall restart): not a branch outcome */
  TI_REP = 1 << 2,   /* a collapsed run of rep-string iterations (see rep) */
  TI_LAST = 1 << 3,  /* last instruction of the trace; next_pc is where execution stopped */
};

/* One dynamic instruction on the recorded (correct) path. */
typedef struct trace_insn {
  uint64_t pc;
  uint64_t next_pc;  /* the PC that executed next */
  uint32_t sid;      /* static id: index into the trace's static table */
  uint32_t rep;      /* iterations (1 unless TI_REP) */
  uint32_t mem_off;  /* index of the first access in the batch's mem array */
  uint16_t n_mem;    /* accesses */
  uint8_t flags;     /* TI_* */
  uint8_t len;       /* bytes */
} trace_insn;

#endif
