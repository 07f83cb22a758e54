/* ras.c — return-address stack with none / tos / full repair. */
#include "ras.h"

#include <string.h>

#include "bpred.h"

void ras_init(ras_hdr *h, uint64_t *e, uint32_t depth) {
  h->tos = 0;
  h->count = 0;
  memset(e, 0, depth * sizeof *e);
}

void ras_push(ras_hdr *h, uint64_t *e, uint32_t depth, uint64_t ret_addr) {
  h->tos = h->tos + 1 == depth ? 0 : h->tos + 1;
  e[h->tos] = ret_addr;
  if (h->count < depth) h->count++;
}

bool ras_pop(ras_hdr *h, uint64_t *e, uint32_t depth, uint64_t *addr) {
  if (!h->count) {
    *addr = 0;
    return false;
  }
  *addr = e[h->tos];
  h->tos = h->tos ? h->tos - 1 : depth - 1;
  h->count--;
  return true;
}

bool ras_top(const ras_hdr *h, const uint64_t *e, uint64_t *addr) {
  if (!h->count) {
    *addr = 0;
    return false;
  }
  *addr = e[h->tos];
  return true;
}

void ras_save(const ras_hdr *h, const uint64_t *e, ras_ckpt *c) {
  c->h = *h;
  c->top = e[h->tos];
}

void ras_restore(ras_hdr *h, uint64_t *e, uint32_t depth, int policy, const ras_ckpt *c,
                 const uint64_t *full_copy) {
  switch (policy) {
  case RAS_REPAIR_TOS:
    *h = c->h;
    e[h->tos] = c->top;
    break;
  case RAS_REPAIR_FULL:
    *h = c->h;
    memcpy(e, full_copy, depth * sizeof *e);
    break;
  default: break; /* none: the corruption stays */
  }
}
