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

/* push, pop, top and save are inline: fetch calls them for every call, return and branch of a
 * call-heavy program, from another translation unit. */
static inline void ras_push(ras_hdr *h, uint64_t *e, uint32_t depth, uint64_t ret_addr) {
  h->tos = h->tos + 1 == depth ? 0 : h->tos + 1;
  e[h->tos] = ret_addr;
  if (h->count < depth) h->count++;
}

/* Pop the predicted return address; false (and *addr = 0) when the stack is empty. */
static inline bool ras_pop(ras_hdr *h, uint64_t *e, uint32_t depth, uint64_t *addr) {
  if (!h->count) {
    *addr = 0;
    return false;
  }
  *addr = e[h->tos];
  h->tos = h->tos ? h->tos - 1 : depth - 1;
  h->count--;
  return true;
}

/* Peek without popping. */
static inline bool ras_top(const ras_hdr *h, const uint64_t *e, uint64_t *addr) {
  if (!h->count) {
    *addr = 0;
    return false;
  }
  *addr = e[h->tos];
  return true;
}

static inline void ras_save(const ras_hdr *h, const uint64_t *e, ras_ckpt *c) {
  c->h = *h;
  c->top = e[h->tos];
}

/* Restore per policy (RAS_REPAIR_* from bpred.h); full_copy holds the depth entries saved for
 * the full policy (ignored otherwise). */
void ras_restore(ras_hdr *h, uint64_t *e, uint32_t depth, int policy, const ras_ckpt *c,
                 const uint64_t *full_copy);

#endif
