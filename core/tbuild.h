/* tbuild.h — synthetic trace builder for tests: assemble an x86-64 snippet with the system
 * assembler, script its dynamic execution instruction by instruction, write a complete .wtr.
 *
 *   wi_err err;
 *   tbuild *tb = tb_new("loop: add rax, [rbx]\n dec rcx\n jnz loop\n done: ret\n", 0x401000, &err);
 *   tb_loop(tb, "loop", "done", 100, NULL, NULL);    // 100 iterations, branch taken 99 times
 *   tb_exec(tb, tb_label(tb, "done"), NULL, 0);       // explicit instruction, no accesses
 *   tb_write(tb, "/tmp/x.wtr", &err);
 *   tb_free(tb);
 *
 * Control flow is implied by the sequence of executed PCs: an instruction whose successor is
 * not its fall-through is a taken transfer. Errors in the scripting calls (an address that is
 * not an instruction boundary, an unknown label) are remembered; tb_write then fails with the
 * first one and tb_error returns it. Not thread-safe; one builder per test. */
#ifndef WHATIF_TBUILD_H
#define WHATIF_TBUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "insn.h"
#include "trace.h"
#include "util.h"

typedef struct tbuild tbuild;

/* Default data address of access `slot` of the instruction at pc when no tb_mem_fn is given:
 * TB_DATA_BASE + 64 * (pc - base) + 8 * slot (a fixed address per pc and slot). */
#define TB_DATA_BASE 0x10000000ULL

/* Asked once per memory access of each instruction executed by tb_run/tb_loop. *addr, *size
 * (bytes) and *is_store arrive holding the defaults (the address above; size and direction
 * from the decoder: a read-modify-write operand is a load in one slot then a store in the
 * next) and may be changed. */
typedef void (*tb_mem_fn)(void *ctx, uint64_t pc, int slot, uint64_t *addr, uint32_t *size, bool *is_store);

/* Assemble asm_src (GNU as, Intel syntax without prefixes; labels allowed; `.intel_syntax
 * noprefix` and `.text` are prepended) with `as`, link it at base with `ld` (so absolute and
 * RIP-relative references inside the snippet resolve), extract .text with `objcopy` and find
 * instruction boundaries with Capstone. Returns NULL and fills err (WI_EINVAL with the
 * assembler's first message, WI_ECHILD if a tool cannot run). Free with tb_free. */
tbuild *tb_new(const char *asm_src, uint64_t base, wi_err *err);
void tb_free(tbuild *tb); /* accepts NULL */

/* Address of a label (any symbol the snippet defines in .text); 0 and an error if unknown. */
uint64_t tb_label(tbuild *tb, const char *name);
/* Length in bytes of the instruction at pc, or 0 if pc is not an instruction boundary. */
uint8_t tb_len(const tbuild *tb, uint64_t pc);
/* Decoded form of the instruction at pc, or NULL. */
const dec_insn *tb_decoded(const tbuild *tb, uint64_t pc);
/* The assembled code: base address and bytes. */
uint64_t tb_base(const tbuild *tb);
const uint8_t *tb_code(const tbuild *tb, size_t *n);

/* Append one dynamic instruction at pc with exactly the n accesses in mem (mem may be NULL
 * when n == 0). */
void tb_exec(tbuild *tb, uint64_t pc, const trace_mem *mem, int n);
/* Mark the transfer from the last appended instruction to the next one as asynchronous. */
void tb_async(tbuild *tb);
/* Execute the instructions from from_pc up to but excluding to_pc sequentially (every
 * branch inside falls through; use tb_exec for transfers you want taken). Accesses come from
 * the decoder's memory operands, adjusted by fn (NULL: defaults). */
void tb_run(tbuild *tb, uint64_t from_pc, uint64_t to_pc, tb_mem_fn fn, void *ctx);
/* Run the body [loop_label, end_label) `iterations` times. The instruction just before
 * end_label must be a branch to loop_label; it is taken every time but the last (the next
 * instruction you append decides where the last iteration goes). */
void tb_loop(tbuild *tb, const char *loop_label, const char *end_label, uint64_t iterations, tb_mem_fn fn,
             void *ctx);
/* Where execution stops after the last instruction (default: its fall-through). */
void tb_end_pc(tbuild *tb, uint64_t pc);
/* Extra metadata (program="<synthetic>" is always written). */
void tb_meta(tbuild *tb, const char *key, const char *value);
/* Writer options for tb_write (chunk size, level, threading); default NULL options. */
void tb_set_opts(tbuild *tb, const trace_writer_opts *opts);
/* Dynamic instructions appended so far. */
uint64_t tb_count(const tbuild *tb);
/* The first scripting error, or NULL. */
const char *tb_error(const tbuild *tb);

/* Write a complete .wtr at path: the dynamic stream, one code region with the assembled
 * bytes, a symbol per label (size: up to the next label), object "<synthetic>", metadata.
 * May be called more than once (identical files). */
wi_rc tb_write(tbuild *tb, const char *path, wi_err *err);

#endif
