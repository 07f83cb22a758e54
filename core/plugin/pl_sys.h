/* pl_sys.h — operating-system helpers of the recorder plugin: signal masks and the hook that
 * runs before QEMU kills itself for a fatal guest signal. Kept apart from whatif_plugin.c
 * because <signal.h> under _GNU_SOURCE declares RG_RAX, RG_RSP, ... (ucontext indices),
 * which collide with insn.h's register families. */
#ifndef WHATIF_PL_SYS_H
#define WHATIF_PL_SYS_H

#include <stdbool.h>
#include <stddef.h>

/* Storage for a saved signal mask (a sigset_t is 128 bytes on Linux). */
typedef struct pl_sigmask {
  unsigned long long opaque[16];
} pl_sigmask;

/* Block every signal in the calling thread, saving the previous mask in *old. Threads created
 * while blocked inherit the full mask. */
void pl_block_signals(pl_sigmask *old);
/* Restore a mask saved by pl_block_signals. */
void pl_restore_signals(const pl_sigmask *old);

/* QEMU 7.2 (Debian) does not run plugin atexit callbacks when the guest dies from a signal:
 * its dump_core_and_abort() resets the host handler and calls kill(getpid(), sig) without
 * preexit_cleanup(). This patches qemu-x86_64's imported `kill` (its GOT slot) so that
 * hook(sig) runs first whenever QEMU sends itself a terminating signal (not SIGSTOP & co.,
 * which QEMU uses for job control). Returns false when the import is not found (then a crash
 * loses the trace, as before). Call once. */
bool pl_hook_fatal_kill(void (*hook)(int sig));

/* Copy the n1 bytes at addr and then the n2 bytes after them from the process's own memory
 * into out, without faulting: returns the bytes copied, n1 + n2, n1 when the second part is
 * not readable, 0 when the first is not (or the kernel refuses process_vm_readv). Each part
 * must lie within one page (a part is copied whole or not at all). */
size_t pl_read_self(void *out, const void *addr, size_t n1, size_t n2);

/* Name of a signal ("Segmentation fault"), for messages. */
const char *pl_signal_name(int sig);

#endif
