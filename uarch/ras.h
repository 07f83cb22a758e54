/* ras.h — return-address stack: a circular stack (overflow overwrites the oldest entry) with
 * three repair policies after a squash:
 *   none  nothing is restored: wrong-path calls and returns leave their pushes and pops;
 *   tos   the top-of-stack pointer and the entry it points to are checkpointed at every branch
 *         and restored (Skadron et al., "Improving prediction for procedure returns with
 *         return-address-stack repair mechanisms", MICRO 1998);
 *   full  the whole stack is checkpointed and restored.
 * State lives in caller-provided memory (the model's state block): a ras_hdr plus `depth`
 * return addresses. */
#ifndef WHATIF_RAS_H
#define WHATIF_RAS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ras_hdr {
  uint32_t tos;    /* index of the top entry */
  uint32_t count;  /* valid entries (saturates at depth) */
} ras_hdr;

/* What a branch checkpoints (the full policy also copies the entries, see ras_save_full). */
typedef struct ras_ckpt {
  ras_hdr h;
  uint64_t top;    /* entry at h.tos */
} ras_ckpt;

void ras_init(ras_hdr *h, uint64_t *e, uint32_t depth);
void ras_push(ras_hdr *h, uint64_t *e, uint32_t depth, uint64_t ret_addr);
/* Pop the predicted return address; false (and *addr = 0) when the stack is empty. */
bool ras_pop(ras_hdr *h, uint64_t *e, uint32_t depth, uint64_t *addr);
/* Peek without popping. */
bool ras_top(const ras_hdr *h, const uint64_t *e, uint64_t *addr);

void ras_save(const ras_hdr *h, const uint64_t *e, ras_ckpt *c);
/* Restore per policy (RAS_REPAIR_* from bpred.h); full_copy holds the depth entries saved for
 * the full policy (ignored otherwise). */
void ras_restore(ras_hdr *h, uint64_t *e, uint32_t depth, int policy, const ras_ckpt *c,
                 const uint64_t *full_copy);

#endif
