/* insn.c — names of register families, instruction classes and branch kinds (insn.h). */
#include "insn.h"

#include <string.h>

#include "util.h"

static const char *const k_reg_names[RG_NUM] = {
    "rax", "rcx", "rdx",  "rbx",   "rsp", "rbp", "rsi", "rdi", "r8",  "r9",  "r10", "r11", "r12",
    "r13", "r14", "r15",  "flags", "v0",  "v1",  "v2",  "v3",  "v4",  "v5",  "v6",  "v7",  "v8",
    "v9",  "v10", "v11",  "v12",   "v13", "v14", "v15", "st0", "st1", "st2", "st3", "st4", "st5",
    "st6", "st7", "fpsw", "mxcsr", "k0",  "k1",  "k2",  "k3",  "k4",  "k5",  "k6",  "k7",  "seg",
};
_Static_assert(RG_V0 + 16 == RG_ST0 && RG_ST0 + 8 == RG_FPSW && RG_K0 + 8 == RG_SEG,
               "register family layout changed: update k_reg_names");

/* Class names as machine configurations spell them (index = insn_class). */
static const char *const k_class_names[IC_NUM] = {
    [IC_NOP] = "nop",         [IC_ZERO] = "zero",       [IC_MOV] = "mov",         [IC_LOAD] = "load",
    [IC_STORE] = "store",     [IC_ALU] = "alu",         [IC_SHIFT] = "shift",     [IC_BITCNT] = "bitcnt",
    [IC_MUL] = "mul",         [IC_DIV] = "div",         [IC_LEA] = "lea",         [IC_BRANCH] = "branch",
    [IC_VEC_ALU] = "vec_alu", [IC_VEC_MUL] = "vec_mul", [IC_FP_ADD] = "fp_add",   [IC_FP_MUL] = "fp_mul",
    [IC_FMA] = "fma",         [IC_FP_DIV] = "fp_div",   [IC_SHUFFLE] = "shuffle", [IC_CONVERT] = "convert",
    [IC_STRING] = "string",   [IC_GATHER] = "gather",   [IC_ATOMIC] = "atomic",   [IC_SERIAL] = "serial",
    [IC_X87] = "x87",         [IC_OTHER] = "other",     [IC_PERMUTE] = "permute",
};

static const char *const k_branch_names[BR_NUM] = {
    [BR_NONE] = "none", [BR_COND] = "cond",         [BR_JUMP] = "jump", [BR_IND_JUMP] = "ind_jump",
    [BR_CALL] = "call", [BR_IND_CALL] = "ind_call", [BR_RET] = "ret",
};

const char *reg_name(int r) { return r >= 0 && r < RG_NUM ? k_reg_names[r] : "?"; }

const char *insn_class_name(int cls) { return cls >= 0 && cls < IC_NUM ? k_class_names[cls] : "?"; }

int insn_class_from_name(const char *name) {
  if (!name) return -1;
  for (int i = 0; i < IC_NUM; i++)
    if (strcmp(k_class_names[i], name) == 0) return i;
  return -1;
}

const char *branch_kind_name(int br) { return br >= 0 && br < BR_NUM ? k_branch_names[br] : "?"; }
