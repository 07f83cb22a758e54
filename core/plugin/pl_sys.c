/* pl_sys.c — signal masks and the fatal-signal hook of the recorder plugin (see pl_sys.h). */
#include "pl_sys.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

_Static_assert(sizeof(pl_sigmask) >= sizeof(sigset_t), "pl_sigmask too small");

void pl_block_signals(pl_sigmask *old) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, (sigset_t *)(void *)old);
}

void pl_restore_signals(const pl_sigmask *old) {
  pthread_sigmask(SIG_SETMASK, (const sigset_t *)(const void *)old, NULL);
}

size_t pl_read_self(void *out, const void *addr, size_t n1, size_t n2) {
  struct iovec local = {out, n1 + n2};
  struct iovec remote[2] = {{(void *)(uintptr_t)addr, n1}, {(void *)((uintptr_t)addr + n1), n2}};
  ssize_t got = process_vm_readv(getpid(), &local, 1, remote, n2 ? 2 : 1, 0);
  return got > 0 ? (size_t)got : 0;
}

const char *pl_signal_name(int sig) {
  const char *s = sigdescr_np(sig);
  return s ? s : "unknown signal";
}

/* ---- the kill() hook ------------------------------------------------------------------------- */

/* Set once by pl_hook_fatal_kill before QEMU can call kill(); read-only afterwards. */
static int (*real_kill)(pid_t, int);
static void (*fatal_hook)(int);

static int hooked_kill(pid_t pid, int sig) {
  bool job_control = sig == 0 || sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
                     sig == SIGTTOU || sig == SIGCONT || sig == SIGCHLD || sig == SIGURG ||
                     sig == SIGWINCH;
  if (pid == getpid() && !job_control && fatal_hook) fatal_hook(sig);
  return real_kill(pid, sig);
}

/* The main executable's dynamic section and load base. */
typedef struct exe_info {
  uintptr_t base;
  const ElfW(Dyn) *dyn;
  uintptr_t relro_lo, relro_hi; /* the part made read-only after relocation */
} exe_info;

static int find_exe(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  exe_info *e = data;
  /* The first object reported is the main program. */
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_DYNAMIC) {
      e->base = info->dlpi_addr;
      e->dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
    } else if (ph->p_type == PT_GNU_RELRO) {
      e->relro_lo = info->dlpi_addr + ph->p_vaddr;
      e->relro_hi = e->relro_lo + ph->p_memsz;
    }
  }
  return 1;
}

/* Address of the GOT slot through which the executable calls `name`, or NULL. */
static void **find_got_slot(const exe_info *e, const char *name) {
  uintptr_t jmprel = 0, rela = 0, symtab = 0, strtab = 0;
  size_t pltrelsz = 0, relasz = 0;
  for (const ElfW(Dyn) *d = e->dyn; d->d_tag != DT_NULL; d++) {
    switch (d->d_tag) {
    case DT_JMPREL: jmprel = d->d_un.d_ptr; break;
    case DT_PLTRELSZ: pltrelsz = d->d_un.d_val; break;
    case DT_RELA: rela = d->d_un.d_ptr; break;
    case DT_RELASZ: relasz = d->d_un.d_val; break;
    case DT_SYMTAB: symtab = d->d_un.d_ptr; break;
    case DT_STRTAB: strtab = d->d_un.d_ptr; break;
    default: break;
    }
  }
  if (!symtab || !strtab) return NULL;
  /* ld.so relocates these pointers in place for a PIE; be safe if it did not. */
  if (symtab < e->base) symtab += e->base;
  if (strtab < e->base) strtab += e->base;
  if (jmprel && jmprel < e->base) jmprel += e->base;
  if (rela && rela < e->base) rela += e->base;
  const ElfW(Sym) *syms = (const ElfW(Sym) *)symtab;
  const char *strs = (const char *)strtab;
  const struct { uintptr_t at; size_t bytes; } tables[2] = {{jmprel, pltrelsz}, {rela, relasz}};
  for (int t = 0; t < 2; t++) {
    if (!tables[t].at) continue;
    const ElfW(Rela) *r = (const ElfW(Rela) *)tables[t].at;
    size_t n = tables[t].bytes / sizeof *r;
    for (size_t i = 0; i < n; i++) {
      unsigned type = (unsigned)ELF64_R_TYPE(r[i].r_info);
      if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
      size_t si = ELF64_R_SYM(r[i].r_info);
      if (si && !strcmp(strs + syms[si].st_name, name)) return (void **)(e->base + r[i].r_offset);
    }
  }
  return NULL;
}

bool pl_hook_fatal_kill(void (*hook)(int sig)) {
  exe_info e = {0};
  dl_iterate_phdr(find_exe, &e);
  if (!e.dyn) return false;
  void **slot = find_got_slot(&e, "kill");
  if (!slot) return false;
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t start = (uintptr_t)slot & ~(uintptr_t)(page - 1);
  size_t len = (size_t)page * (((uintptr_t)slot + sizeof *slot > start + (uintptr_t)page) ? 2 : 1);
  /* With RELRO (qemu-x86_64 is linked -z now -z relro) the GOT is read-only: open it for this
   * one store and close it again; a slot outside RELRO is writable as it is. */
  bool relro = (uintptr_t)slot >= e.relro_lo && (uintptr_t)slot < e.relro_hi;
  if (relro && mprotect((void *)start, len, PROT_READ | PROT_WRITE) != 0) return false;
  real_kill = (int (*)(pid_t, int))*slot;
  fatal_hook = hook;
  *slot = (void *)hooked_kill;
  if (relro) mprotect((void *)start, len, PROT_READ);
  return true;
}
