/* ras.c — return-address stack with none / tos / full repair. */
#include "ras.h"

#include <string.h>

#include "bpred.h"

void ras_init(ras_hdr *h, uint64_t *e, uint32_t depth) {
  h->tos = 0;
  h->count = 0;
  memset(e, 0, depth * sizeof *e);
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
