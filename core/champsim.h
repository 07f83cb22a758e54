/* champsim.h — export a trace as a ChampSim input trace: one 64-byte input_instr record per
 * model instruction (rep runs collapsed), xz-compressed, with register ids chosen so that
 * ChampSim's instruction constructor infers every branch kind correctly. Prefix chs_ (cs_ is
 * Capstone's). */
#ifndef WHATIF_CHAMPSIM_H
#define WHATIF_CHAMPSIM_H

#include <stdbool.h>
#include <stdint.h>

#include "insn.h"
#include "util.h"

typedef struct trace trace_t;

/* ChampSim's inc/trace_instruction.h `input_instr` (the classic 64-byte layout, without the
 * later load_type byte): little-endian, natural alignment, no padding. */
typedef struct chs_instr {
  uint64_t ip;
  uint8_t is_branch;
  uint8_t branch_taken;
  uint8_t dst_regs[2]; /* destination_registers; 0 = none */
  uint8_t src_regs[4]; /* source_registers; 0 = none */
  uint64_t dst_mem[2]; /* destination_memory: store addresses; 0 = none */
  uint64_t src_mem[4]; /* source_memory: load addresses; 0 = none */
} chs_instr;
_Static_assert(sizeof(chs_instr) == 64, "ChampSim records are 64 bytes");

/* ChampSim's special register ids (champsim::REG_*), which decide branch kinds. */
enum { CHS_REG_SP = 6, CHS_REG_FLAGS = 25, CHS_REG_IP = 26 };
/* The id given to the target of an indirect branch that reads no general register (a
 * RIP-relative memory operand): ChampSim needs "reads another register" to call it indirect. */
enum { CHS_REG_INDIRECT = 60 };

/* ChampSim's branch_type enum, in its order. */
typedef enum chs_branch {
  CHS_DIRECT_JUMP = 0,
  CHS_INDIRECT,
  CHS_CONDITIONAL,
  CHS_DIRECT_CALL,
  CHS_INDIRECT_CALL,
  CHS_RETURN,
  CHS_OTHER,
  CHS_NOT_BRANCH,
} chs_branch;
const char *chs_branch_name(chs_branch b);

/* ChampSim register id of one of our register families (REG_*): non-zero and distinct per
 * family; RG_RSP is CHS_REG_SP and RG_FLAGS is CHS_REG_FLAGS, no family maps to
 * CHS_REG_IP or CHS_REG_INDIRECT. */
uint8_t chs_reg_id(int family);

/* The branch kind ChampSim's ooo_model_instr constructor infers from r's registers (its exact
 * rules: reads/writes of SP, IP, FLAGS and other registers). */
chs_branch chs_infer(const chs_instr *r);
/* The ChampSim kind a decoder branch kind (BR_*) must be inferred as. */
chs_branch chs_expected(int br);

/* Fill r for one dynamic instruction: d is its decoded form, ti its dynamic record and mems
 * the batch's access array (ti->mem_off indexes it). */
void chs_make(const dec_insn *d, const trace_insn *ti, const trace_mem *mems, chs_instr *r);

typedef struct chs_stats {
  uint64_t records;   /* records written (= model instructions) */
  uint64_t branches;  /* records with is_branch set */
  uint64_t xz_bytes;  /* size of the output file */
} chs_stats;

/* Export trace t to path as an .xz file (written to a temporary, then renamed). xz_preset is
 * 0..9 (liblzma presets; 0 picks the default 3). st may be NULL. Returns WI_EIO/WI_ECORRUPT
 * with a message on failure, leaving no file. */
wi_rc chs_export(const trace_t *t, const char *path, int xz_preset, chs_stats *st, wi_err *err);

/* Reading an exported file back (tests, tools). */
typedef struct chs_reader chs_reader;
chs_reader *chs_reader_open(const char *path, wi_err *err);
/* Next record into *r: 1 if one was read, 0 at the end, -1 with err filled on a bad file. */
int chs_reader_next(chs_reader *rd, chs_instr *r, wi_err *err);
void chs_reader_close(chs_reader *rd); /* accepts NULL */

#endif
