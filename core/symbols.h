/* symbols.h — one ELF object's executable segments, function symbols and DWARF source lines
 * (libelf + libdw), at a load bias: every address in and out of this API is a runtime address
 * (ELF virtual address + bias). */
#ifndef WHATIF_SYMBOLS_H
#define WHATIF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* What sym_check_elf learns from an ELF header. */
typedef struct sym_elf_info {
  uint64_t entry; /* e_entry (ELF virtual address, no bias) */
  bool is_dyn;    /* ET_DYN (PIE or shared object) rather than ET_EXEC */
  bool has_interp;/* has a PT_INTERP (dynamically linked) */
} sym_elf_info;

/* Check that path names a readable 64-bit little-endian x86-64 ELF executable or shared
 * object. Returns WI_OK and fills *info (may be NULL); otherwise WI_EIO (cannot read) or
 * WI_EINVAL ("not an ELF file", "ELF for <machine>, not x86-64", ...) with a one-line message
 * naming path. Cheap: reads the ELF and program headers only. */
wi_rc sym_check_elf(const char *path, sym_elf_info *info, wi_err *err);

typedef struct sym_file sym_file;

/* An executable PT_LOAD segment (PF_X) at its runtime address. */
typedef struct sym_segment {
  uint64_t addr;      /* runtime address of the segment's first byte (p_vaddr + bias) */
  uint64_t size;      /* bytes in memory (p_memsz) */
  uint64_t file_off;  /* p_offset */
  uint64_t file_size; /* bytes backed by the file (p_filesz); the rest reads as zero */
} sym_segment;

/* A function symbol at its runtime address. */
typedef struct sym_func {
  uint64_t addr;
  uint64_t size;      /* bytes; 0 when the symbol table gives none (hand-written assembly) */
  const char *name;   /* owned by the sym_file */
} sym_func;

/* Open the ELF file at path as loaded with the given bias. Reads program headers and the
 * function symbols of .symtab and .dynsym (merged; one symbol per address: a .symtab entry is
 * preferred, then global over weak over local, then a sized one, then the first name in
 * byte order). Source lines are loaded lazily on first use. Returns NULL and fills err (WI_EIO,
 * WI_EINVAL naming path) on failure. Free with sym_close. */
sym_file *sym_open(const char *path, uint64_t bias, wi_err *err);
void sym_close(sym_file *sf); /* accepts NULL */

const char *sym_path(const sym_file *sf);
uint64_t sym_bias(const sym_file *sf);

/* Executable segments, in program-header order. */
size_t sym_n_segments(const sym_file *sf);
const sym_segment *sym_segment_at(const sym_file *sf, size_t i);
/* The bytes of executable segment i as loaded (file part, zeros up to size): a malloc'd buffer
 * of sym_segment_at(sf, i)->size bytes that the caller frees. NULL with err filled on a read
 * error. */
uint8_t *sym_segment_bytes(const sym_file *sf, size_t i, wi_err *err);

/* Function symbols sorted by address (no two at one address). */
size_t sym_n_funcs(const sym_file *sf);
const sym_func *sym_func_at(const sym_file *sf, size_t i);
/* The function named name (any of the names merged at its address counts), or NULL. */
const sym_func *sym_func_by_name(const sym_file *sf, const char *name);
/* The function containing addr: the last symbol at or below addr whose size covers addr (a
 * size-0 symbol covers up to the next symbol), or NULL. */
const sym_func *sym_func_lookup(const sym_file *sf, uint64_t addr);

/* Whether DWARF line information was found (in the file or a separate debug file). */
bool sym_has_lines(sym_file *sf);
/* Source file (as recorded by the compiler, usually absolute) and line of addr. The file
 * string stays valid until sym_close. false when addr has no line information. */
bool sym_line_at(sym_file *sf, uint64_t addr, const char **file, uint32_t *line);
/* The line of the statement addr belongs to, in the function it was compiled into: inside
 * inlined code (an intrinsic, a static inline helper) the call site of the outermost inlined
 * function (DW_AT_call_file / DW_AT_call_line), i.e. the line written in the enclosing
 * function; elsewhere the same as sym_line_at. The line table alone names the innermost
 * (header) line for inlined code. The file string stays valid until sym_close. (Added for
 * validate/: KEY source markers of the bundled workloads sit on lines that call intrinsics.) */
bool sym_stmt_line_at(sym_file *sf, uint64_t addr, const char **file, uint32_t *line);
/* Call fn once for every address in [lo, hi) where the line table starts a row, in address
 * order, with the row that applies there (of several rows at one address, the last). An
 * address between two reported rows belongs to the earlier one. Returns the rows reported. */
typedef void (*sym_line_fn)(void *ctx, uint64_t addr, const char *file, uint32_t line);
size_t sym_lines_in(sym_file *sf, uint64_t lo, uint64_t hi, sym_line_fn fn, void *ctx);

#endif
