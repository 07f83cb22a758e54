/* symbols.c — ELF executable segments and function symbols (libelf), DWARF source lines
 * (libdw's dwfl, which also finds separate debug files), all at a load bias. */
#include "symbols.h"

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A candidate symbol before deduplication; rank orders candidates at one address. */
typedef struct sym_cand {
  uint64_t addr, size;
  const char *name;
  uint32_t rank; /* lower is preferred */
  uint32_t seq;  /* discovery order, to make the sort total */
} sym_cand;

/* One line-table row at a runtime address; line 0 marks the end of a sequence. */
typedef struct sym_row {
  uint64_t addr;
  const char *file;
  uint32_t line;
  uint32_t seq;
} sym_row;

/* The line-table rows of one compilation unit, sorted, one per address. */
typedef struct sym_cu {
  sym_row *rows;
  size_t n;
} sym_cu;

struct sym_file {
  char *path;
  uint64_t bias;
  wi_arena *names;
  VEC(sym_segment) segs;
  VEC(sym_func) funcs;  /* deduplicated, sorted */
  VEC(sym_cand) all;    /* every candidate (aliases), sorted by address then rank */
  bool has_symtab;      /* the file itself has a .symtab */
  /* libdwfl session, opened on first use (lines, or symbols of a separate debug file) */
  bool dw_tried;
  Dwfl *dwfl;
  Dwfl_Module *mod;
  int64_t delta;        /* our address - dwfl's module address */
  bool dwarf_tried, has_dwarf;
  wi_map64 cu_index;    /* CU DIE offset + 1 -> index in cus + 1 */
  VEC(sym_cu) cus;      /* line rows of the CUs looked at so far */
};

/* ---- ELF header check -------------------------------------------------------------------- */

static const char *machine_name(unsigned m) {
  switch (m) {
  case EM_386: return "i386";
  case EM_ARM: return "arm";
  case EM_AARCH64: return "aarch64";
  case EM_RISCV: return "riscv";
  case EM_PPC64: return "ppc64";
  case EM_S390: return "s390";
  default: return NULL;
  }
}

wi_rc sym_check_elf(const char *path, sym_elf_info *info, wi_err *err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return wi_fail(err, WI_EIO, "%s: cannot open: %s", path, strerror(errno));
  unsigned char id[EI_NIDENT];
  Elf64_Ehdr eh;
  wi_rc rc = WI_OK;
  ssize_t n = pread(fd, id, sizeof id, 0);
  if (n < 0) {
    rc = wi_fail(err, WI_EIO, "%s: cannot read: %s", path, strerror(errno));
    goto out;
  }
  if (n < (ssize_t)sizeof id || memcmp(id, ELFMAG, SELFMAG) != 0) {
    rc = wi_fail(err, WI_EINVAL, "%s: not an ELF file (whatif records x86-64 ELF programs)", path);
    goto out;
  }
  if (id[EI_CLASS] != ELFCLASS64) {
    rc = wi_fail(err, WI_EINVAL, "%s: 32-bit ELF file, not x86-64", path);
    goto out;
  }
  if (id[EI_DATA] != ELFDATA2LSB) {
    rc = wi_fail(err, WI_EINVAL, "%s: big-endian ELF file, not x86-64", path);
    goto out;
  }
  if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh) {
    rc = wi_fail(err, WI_EINVAL, "%s: truncated ELF header", path);
    goto out;
  }
  if (eh.e_machine != EM_X86_64) {
    const char *m = machine_name(eh.e_machine);
    if (m) rc = wi_fail(err, WI_EINVAL, "%s: ELF file for %s, not x86-64", path, m);
    else rc = wi_fail(err, WI_EINVAL, "%s: ELF file for machine %u, not x86-64", path, eh.e_machine);
    goto out;
  }
  if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
    rc = wi_fail(err, WI_EINVAL, "%s: ELF file is not an executable (type %u)", path, eh.e_type);
    goto out;
  }
  sym_elf_info inf = {.entry = eh.e_entry, .is_dyn = eh.e_type == ET_DYN};
  if (eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum > 0 && eh.e_phnum < 4096) {
    for (unsigned i = 0; i < eh.e_phnum; i++) {
      Elf64_Phdr ph;
      if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph) {
        rc = wi_fail(err, WI_EINVAL, "%s: truncated program headers", path);
        goto out;
      }
      if (ph.p_type == PT_INTERP) inf.has_interp = true;
    }
  }
  if (info) *info = inf;
out:
  close(fd);
  return rc;
}

/* ---- opening: segments and symbols ------------------------------------------------------- */

static int cand_cmp(const void *pa, const void *pb) {
  const sym_cand *a = pa, *b = pb;
  if (a->addr != b->addr) return a->addr < b->addr ? -1 : 1;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  int c = strcmp(a->name, b->name);
  if (c) return c;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Rank of a candidate: .symtab before .dynsym, global before weak before local, sized first. */
static uint32_t cand_rank(bool dynsym, unsigned bind, uint64_t size) {
  uint32_t r = dynsym ? 8 : 0;
  r += bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 2 : 4;
  r += size ? 0 : 1;
  return r;
}

/* Collect the function symbols of the file's .symtab and .dynsym. */
static void read_symbols(sym_file *sf, Elf *elf) {
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(elf, scn)) != NULL) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) continue;
    if (!sh.sh_entsize) continue;
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data) continue;
    if (sh.sh_type == SHT_SYMTAB) sf->has_symtab = true;
    size_t n = sh.sh_size / sh.sh_entsize;
    for (size_t i = 0; i < n; i++) {
      GElf_Sym s;
      if (!gelf_getsym(data, (int)i, &s)) break;
      unsigned type = GELF_ST_TYPE(s.st_info);
      if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
      if (s.st_shndx == SHN_UNDEF || s.st_value == 0) continue;
      const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
      if (!name || !*name) continue;
      sym_cand c = {
        .addr = s.st_value + sf->bias,
        .size = s.st_size,
        .name = arena_strdup(sf->names, name),
        .rank = cand_rank(sh.sh_type == SHT_DYNSYM, GELF_ST_BIND(s.st_info), s.st_size),
        .seq = (uint32_t)sf->all.n,
      };
      VEC_PUSH(sf->all, c);
    }
  }
}

static void dw_init(sym_file *sf);

/* A stripped file (only .dynsym, like Debian's libc and ld.so) may have a separate debug file
 * with the full .symtab (found by build-id, e.g. from libc6-dbg): add its functions. */
static void read_debug_symbols(sym_file *sf) {
  dw_init(sf);
  if (!sf->mod) return;
  int n = dwfl_module_getsymtab(sf->mod);
  for (int i = 1; i < n; i++) {
    GElf_Sym s;
    GElf_Addr addr = 0;
    GElf_Word shndx = 0;
    const char *name = dwfl_module_getsym_info(sf->mod, i, &s, &addr, &shndx, NULL, NULL);
    if (!name || !*name) continue;
    unsigned type = GELF_ST_TYPE(s.st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
    if (shndx == SHN_UNDEF || shndx == (GElf_Word)-1 || !addr) continue;
    sym_cand c = {
      .addr = (uint64_t)((int64_t)addr + sf->delta),
      .size = s.st_size,
      .name = arena_strdup(sf->names, name),
      .rank = cand_rank(false, GELF_ST_BIND(s.st_info), s.st_size),
      .seq = (uint32_t)sf->all.n,
    };
    VEC_PUSH(sf->all, c);
  }
}

/* Sort the candidates and keep one function per address. */
static void finish_symbols(sym_file *sf) {
  if (sf->all.n) qsort(sf->all.a, sf->all.n, sizeof *sf->all.a, cand_cmp);
  for (size_t i = 0; i < sf->all.n; i++) {
    if (i && sf->all.a[i].addr == sf->all.a[i - 1].addr) continue;
    sym_func f = {sf->all.a[i].addr, sf->all.a[i].size, sf->all.a[i].name};
    /* A preferred size-0 entry borrows the size of an alias that has one. */
    for (size_t j = i + 1; !f.size && j < sf->all.n && sf->all.a[j].addr == f.addr; j++)
      f.size = sf->all.a[j].size;
    VEC_PUSH(sf->funcs, f);
  }
}

sym_file *sym_open(const char *path, uint64_t bias, wi_err *err) {
  if (sym_check_elf(path, NULL, err) != WI_OK) return NULL;
  if (elf_version(EV_CURRENT) == EV_NONE) {
    wi_fail(err, WI_EINVAL, "%s: libelf initialisation failed", path);
    return NULL;
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    wi_fail(err, WI_EIO, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
  if (!elf) {
    wi_fail(err, WI_EINVAL, "%s: %s", path, elf_errmsg(-1));
    close(fd);
    return NULL;
  }
  sym_file *sf = xcalloc(1, sizeof *sf);
  sf->path = xstrdup(path);
  sf->bias = bias;
  sf->names = arena_new(1 << 16);
  size_t nph = 0;
  if (elf_getphdrnum(elf, &nph) != 0) nph = 0;
  for (size_t i = 0; i < nph; i++) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, (int)i, &ph)) continue;
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || !ph.p_memsz) continue;
    sym_segment s = {ph.p_vaddr + bias, ph.p_memsz, ph.p_offset, WI_MIN(ph.p_filesz, ph.p_memsz)};
    VEC_PUSH(sf->segs, s);
  }
  read_symbols(sf, elf);
  elf_end(elf);
  close(fd);
  if (!sf->has_symtab) read_debug_symbols(sf);
  finish_symbols(sf);
  return sf;
}

void sym_close(sym_file *sf) {
  if (!sf) return;
  if (sf->dwfl) dwfl_end(sf->dwfl);
  for (size_t i = 0; i < sf->cus.n; i++) free(sf->cus.a[i].rows);
  VEC_FREE(sf->cus);
  map64_free(&sf->cu_index);
  VEC_FREE(sf->segs);
  VEC_FREE(sf->funcs);
  VEC_FREE(sf->all);
  arena_free(sf->names);
  free(sf->path);
  free(sf);
}

const char *sym_path(const sym_file *sf) { return sf->path; }
uint64_t sym_bias(const sym_file *sf) { return sf->bias; }
size_t sym_n_segments(const sym_file *sf) { return sf->segs.n; }
const sym_segment *sym_segment_at(const sym_file *sf, size_t i) {
  return i < sf->segs.n ? &sf->segs.a[i] : NULL;
}

uint8_t *sym_segment_bytes(const sym_file *sf, size_t i, wi_err *err) {
  if (i >= sf->segs.n) {
    wi_fail(err, WI_EINVAL, "%s: no executable segment %zu", sf->path, i);
    return NULL;
  }
  const sym_segment *s = &sf->segs.a[i];
  int fd = open(sf->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    wi_fail(err, WI_EIO, "%s: cannot open: %s", sf->path, strerror(errno));
    return NULL;
  }
  uint8_t *buf = xcalloc(1, (size_t)s->size);
  size_t done = 0;
  while (done < s->file_size) {
    ssize_t n = pread(fd, buf + done, (size_t)(s->file_size - done), (off_t)(s->file_off + done));
    if (n <= 0) {
      wi_fail(err, WI_EIO, "%s: short read of segment at file offset 0x%llx", sf->path,
              (unsigned long long)(s->file_off + done));
      free(buf);
      close(fd);
      return NULL;
    }
    done += (size_t)n;
  }
  close(fd);
  return buf;
}

size_t sym_n_funcs(const sym_file *sf) { return sf->funcs.n; }
const sym_func *sym_func_at(const sym_file *sf, size_t i) {
  return i < sf->funcs.n ? &sf->funcs.a[i] : NULL;
}

const sym_func *sym_func_by_name(const sym_file *sf, const char *name) {
  for (size_t i = 0; i < sf->all.n; i++) {
    if (strcmp(sf->all.a[i].name, name) != 0) continue;
    uint64_t addr = sf->all.a[i].addr;
    for (size_t j = 0; j < sf->funcs.n; j++) /* map the alias to its deduplicated entry */
      if (sf->funcs.a[j].addr == addr) return &sf->funcs.a[j];
  }
  return NULL;
}

const sym_func *sym_func_lookup(const sym_file *sf, uint64_t addr) {
  size_t lo = 0, hi = sf->funcs.n; /* first index with funcs[i].addr > addr */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (sf->funcs.a[mid].addr <= addr) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return NULL;
  const sym_func *f = &sf->funcs.a[lo - 1];
  if (f->size) return addr < f->addr + f->size ? f : NULL;
  /* Size unknown: covers up to the next symbol, within one executable segment. */
  if (lo < sf->funcs.n && addr >= sf->funcs.a[lo].addr) return NULL;
  for (size_t i = 0; i < sf->segs.n; i++) {
    const sym_segment *s = &sf->segs.a[i];
    if (f->addr >= s->addr && f->addr < s->addr + s->size) return addr < s->addr + s->size ? f : NULL;
  }
  return NULL;
}

/* ---- source lines ------------------------------------------------------------------------ */

static char *debuginfo_path; /* dwfl's search path: NULL = default; constant, never written */

static const Dwfl_Callbacks dwfl_cbs = {
  .find_elf = dwfl_build_id_find_elf,
  .find_debuginfo = dwfl_standard_find_debuginfo,
  .section_address = dwfl_offline_section_address,
  .debuginfo_path = &debuginfo_path,
};

static int row_cmp(const void *pa, const void *pb) {
  const sym_row *a = pa, *b = pb;
  if (a->addr != b->addr) return a->addr < b->addr ? -1 : 1;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Open the dwfl session: the module at our bias, its DWARF (perhaps from a separate debug
 * file) looked up once. */
static void dw_init(sym_file *sf) {
  if (sf->dw_tried) return;
  sf->dw_tried = true;
  map64_init(&sf->cu_index, 16);
  Dwfl *dwfl = dwfl_begin(&dwfl_cbs);
  if (!dwfl) return;
  sf->dwfl = dwfl;
  dwfl_report_begin(dwfl);
  /* add_p_vaddr: the module's bias equals ours for ET_DYN whatever its first p_vaddr. */
  Dwfl_Module *mod = dwfl_report_elf(dwfl, sf->path, sf->path, -1, sf->bias, true);
  dwfl_report_end(dwfl, NULL, NULL);
  if (!mod) return;
  Dwarf_Addr mbias = 0;
  if (!dwfl_module_getelf(mod, &mbias)) return;
  sf->mod = mod;
  /* dwfl gives module addresses (ELF vaddr + its bias); convert to ours if they differ. */
  sf->delta = (int64_t)(sf->bias - mbias);
}

/* Whether the module has DWARF; loads it on first use (decompressing a large debug file's
 * sections is the expensive part of symbols.c, so only lines pay for it). */
static bool dw_dwarf(sym_file *sf) {
  dw_init(sf);
  if (!sf->mod) return false;
  if (!sf->dwarf_tried) {
    sf->dwarf_tried = true;
    Dwarf_Addr dwbias = 0;
    sf->has_dwarf = dwfl_module_getdwarf(sf->mod, &dwbias) != NULL;
  }
  return sf->has_dwarf;
}

/* The rows of compilation unit cu, loaded on first use: sorted, one per address (of several
 * rows at one address the last applies; an end-of-sequence marker, line 0, only where no
 * sequence starts at the same address). */
static const sym_cu *cu_rows(sym_file *sf, Dwarf_Die *cu) {
  uint64_t key = dwarf_dieoffset(cu) + 1;
  uint32_t *ix = map64_get(&sf->cu_index, key);
  if (ix) return &sf->cus.a[*ix - 1];
  VEC(sym_row) rows = {0};
  size_t n = 0;
  if (dwfl_getsrclines(cu, &n) == 0) {
    for (size_t i = 0; i < n; i++) {
      Dwfl_Line *l = dwfl_onesrcline(cu, i);
      if (!l) continue;
      Dwarf_Addr a = 0;
      int lineno = 0;
      const char *file = dwfl_lineinfo(l, &a, &lineno, NULL, NULL, NULL);
      Dwarf_Addr lb = 0;
      Dwarf_Line *dl = dwfl_dwarf_line(l, &lb);
      bool end = false;
      if (dl) dwarf_lineendsequence(dl, &end);
      if (!end && lineno <= 0) continue; /* compiler-generated code with no line */
      sym_row r = {(uint64_t)((int64_t)a + sf->delta), file ? file : "?", end ? 0 : (uint32_t)lineno,
                   (uint32_t)i};
      VEC_PUSH(rows, r);
    }
  }
  if (rows.n) qsort(rows.a, rows.n, sizeof *rows.a, row_cmp);
  size_t w = 0;
  for (size_t i = 0; i < rows.n; i++) {
    sym_row r = rows.a[i];
    if (w && rows.a[w - 1].addr == r.addr) {
      if (r.line != 0) rows.a[w - 1] = r; /* a marker never hides a real row */
      continue;
    }
    rows.a[w++] = r;
  }
  sym_cu c = {rows.a, w};
  VEC_PUSH(sf->cus, c);
  map64_put(&sf->cu_index, key, (uint32_t)sf->cus.n);
  return &sf->cus.a[sf->cus.n - 1];
}

/* The rows of the compilation unit that contains addr, or NULL. */
static const sym_cu *cu_at(sym_file *sf, uint64_t addr) {
  if (!dw_dwarf(sf)) return NULL;
  Dwarf_Addr bias = 0;
  Dwarf_Die *cu = dwfl_module_addrdie(sf->mod, (Dwarf_Addr)((int64_t)addr - sf->delta), &bias);
  return cu ? cu_rows(sf, cu) : NULL;
}

bool sym_has_lines(sym_file *sf) {
  if (!dw_dwarf(sf)) return false;
  Dwarf_Addr bias = 0;
  return dwfl_module_nextcu(sf->mod, NULL, &bias) != NULL;
}

/* Index of the last row of c with addr <= a, or SIZE_MAX. */
static size_t row_floor(const sym_cu *c, uint64_t a) {
  size_t lo = 0, hi = c->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (c->rows[mid].addr <= a) lo = mid + 1;
    else hi = mid;
  }
  return lo ? lo - 1 : SIZE_MAX;
}

bool sym_line_at(sym_file *sf, uint64_t addr, const char **file, uint32_t *line) {
  const sym_cu *c = cu_at(sf, addr);
  if (!c) return false;
  size_t i = row_floor(c, addr);
  if (i == SIZE_MAX || c->rows[i].line == 0) return false;
  if (file) *file = c->rows[i].file;
  if (line) *line = c->rows[i].line;
  return true;
}

bool sym_stmt_line_at(sym_file *sf, uint64_t addr, const char **file, uint32_t *line) {
  if (!dw_dwarf(sf)) return false;
  Dwarf_Addr bias = 0, a = (Dwarf_Addr)((int64_t)addr - sf->delta);
  Dwarf_Die *cu = dwfl_module_addrdie(sf->mod, a, &bias);
  if (!cu) return false;
  Dwarf_Die *scopes = NULL;
  int n = dwarf_getscopes(cu, a - bias, &scopes); /* innermost first, the CU last */
  int outer = -1;
  for (int i = 0; i < n; i++)
    if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) outer = i;
  bool found = false;
  if (outer >= 0) {
    Dwarf_Attribute at;
    Dwarf_Word cl = 0, cf = 0;
    Dwarf_Files *files = NULL;
    size_t nf = 0;
    if (dwarf_formudata(dwarf_attr(&scopes[outer], DW_AT_call_line, &at), &cl) == 0 &&
        dwarf_formudata(dwarf_attr(&scopes[outer], DW_AT_call_file, &at), &cf) == 0 && cl > 0 &&
        dwarf_getsrcfiles(cu, &files, &nf) == 0 && cf < nf) {
      const char *fn = dwarf_filesrc(files, cf, NULL, NULL);
      if (fn) {
        if (file) *file = fn;
        if (line) *line = (uint32_t)cl;
        found = true;
      }
    }
  }
  free(scopes);
  return found || sym_line_at(sf, addr, file, line);
}

size_t sym_lines_in(sym_file *sf, uint64_t lo, uint64_t hi, sym_line_fn fn, void *ctx) {
  if (hi <= lo) return 0;
  /* A function lies in one compilation unit; look at the units of both ends to be safe. */
  const sym_cu *cs[2] = {cu_at(sf, lo), cu_at(sf, hi - 1)};
  if (cs[1] == cs[0]) cs[1] = NULL;
  VEC(sym_row) out = {0};
  for (int k = 0; k < 2; k++) {
    const sym_cu *c = cs[k];
    if (!c) continue;
    size_t i = row_floor(c, lo);
    if (i == SIZE_MAX) i = 0;
    else if (c->rows[i].addr < lo) {
      /* The row covering lo starts before it: report it at lo so the range is covered. */
      sym_row r = c->rows[i];
      r.addr = lo;
      if (r.line) VEC_PUSH(out, r);
      i++;
    }
    for (; i < c->n && c->rows[i].addr < hi; i++)
      if (c->rows[i].line) VEC_PUSH(out, c->rows[i]);
  }
  if (out.n > 1) qsort(out.a, out.n, sizeof *out.a, row_cmp);
  size_t count = 0;
  for (size_t i = 0; i < out.n; i++) {
    if (i && out.a[i].addr == out.a[i - 1].addr) continue;
    fn(ctx, out.a[i].addr, out.a[i].file, out.a[i].line);
    count++;
  }
  VEC_FREE(out);
  return count;
}
