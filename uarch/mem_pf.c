/* mem_pf.c — hardware prefetchers (next-line, IP-stride, stream) as tables of functions over a
 * fixed-size state region that lives in the memory system's copied state block. */
#include <string.h>

#include "mem_int.h"

static uint32_t degree_of(const cache_config *cfg) {
  uint32_t d = cfg->pf_degree ? cfg->pf_degree : 1;
  return d > MEM_PF_MAX ? MEM_PF_MAX : d;
}

/* ---- next-line: on a miss (or the first use of a prefetched line) fetch the next lines --- */

static size_t nl_bytes(const cache_config *cfg) {
  (void)cfg;
  return 8;
}
static void nl_init(void *st, const cache_config *cfg) {
  (void)cfg;
  memset(st, 0, 8);
}
static uint32_t nl_train(void *st, const cache_config *cfg, uint32_t line_shift,
                         const mem_pf_access *a, uint64_t *out, uint32_t max) {
  (void)st;
  (void)line_shift;
  return mem_nl_train(degree_of(cfg), a, out, max);
}
static const mem_pf_ops pf_next_line = {"next_line", nl_bytes, nl_init, nl_train};

/* ---- IP-stride: per-PC last address, stride and 2-bit confidence ------------------------- */

/* The table layout and the training (mem_ips_train) live in mem_int.h, so the L1 hit path
 * inlines them. */

static size_t ips_bytes(const cache_config *cfg) {
  (void)cfg;
  return sizeof(mem_ips_entry) * MEM_IPS_ENTRIES;
}
static void ips_init(void *st, const cache_config *cfg) {
  (void)cfg;
  memset(st, 0, sizeof(mem_ips_entry) * MEM_IPS_ENTRIES);
}
static uint32_t ips_train(void *st, const cache_config *cfg, uint32_t line_shift,
                          const mem_pf_access *a, uint64_t *out, uint32_t max) {
  return mem_ips_train(st, degree_of(cfg), line_shift, a, out, max);
}
static const mem_pf_ops pf_ip_stride = {"ip_stride", ips_bytes, ips_init, ips_train};

/* ---- stream: per-4-KiB-region direction detection, prefetch ahead within the region ------- */

#define STR_TRACKERS 32 /* Intel's L2 streamer tracks 32 streams (optimization manual) */
#define STR_WAYS 4      /* trackers are found by region: 8 sets of 4 */
#define STR_REGION_SHIFT 12 /* streams do not cross 4 KiB pages (physical contiguity unknown) */

typedef struct str_tracker {
  uint64_t region;      /* region number + 1; 0 = free */
  uint64_t last;        /* last line address */
  uint64_t next;        /* next line to prefetch (0 = none yet) */
  int32_t dir;          /* +1 / -1 / 0 */
  uint32_t conf;
  uint32_t lru;
  uint32_t pad;
} str_tracker;

typedef struct str_state {
  str_tracker t[STR_TRACKERS];
  uint32_t clock;
} str_state;

static size_t str_bytes(const cache_config *cfg) {
  (void)cfg;
  return sizeof(str_state);
}
static void str_init(void *st, const cache_config *cfg) {
  (void)cfg;
  memset(st, 0, sizeof(str_state));
}
static uint32_t str_train(void *st, const cache_config *cfg, uint32_t line_shift,
                          const mem_pf_access *a, uint64_t *out, uint32_t max) {
  str_state *s = st;
  uint32_t rshift = STR_REGION_SHIFT > line_shift ? STR_REGION_SHIFT - line_shift : 0;
  uint64_t region = (a->line >> rshift) + 1;
  str_tracker *set = &s->t[(region % (STR_TRACKERS / STR_WAYS)) * STR_WAYS], *t = NULL;
  for (uint32_t i = 0; i < STR_WAYS; i++)
    if (set[i].region == region) {
      t = &set[i];
      break;
    }
  s->clock++;
  if (!t) {
    if (a->hit) return 0; /* allocate trackers on misses only */
    str_tracker *lru = &set[0];
    for (uint32_t i = 1; i < STR_WAYS; i++)
      if (set[i].lru < lru->lru) lru = &set[i];
    memset(lru, 0, sizeof *lru);
    lru->region = region;
    lru->last = a->line;
    lru->lru = s->clock;
    return 0;
  }
  t->lru = s->clock;
  if (a->line == t->last) return 0;
  int32_t dir = a->line > t->last ? 1 : -1;
  if (dir == t->dir) {
    if (t->conf < 3) t->conf++;
  } else {
    t->dir = dir;
    t->conf = 1;
    t->next = 0;
  }
  t->last = a->line;
  if (t->conf < 2) return 0;
  /* Keep the prefetch pointer `degree` lines ahead of the demand stream. */
  uint32_t dgr = degree_of(cfg), n = 0;
  uint64_t lo = (region - 1) << rshift, hi = lo + ((uint64_t)1 << rshift); /* [lo, hi) */
  uint64_t want_end = dir > 0 ? a->line + dgr : a->line - dgr;
  uint64_t p = t->next;
  if (!p || (dir > 0 ? p <= a->line : p >= a->line)) p = dir > 0 ? a->line + 1 : a->line - 1;
  while (n < max && (dir > 0 ? p <= want_end : p >= want_end) && p >= lo && p < hi) {
    out[n++] = p;
    p = dir > 0 ? p + 1 : p - 1;
  }
  t->next = p;
  return n;
}
static const mem_pf_ops pf_stream = {"stream", str_bytes, str_init, str_train};

const mem_pf_ops *const mem_pf_table[PF_NUM] = {NULL, &pf_next_line, &pf_ip_stride, &pf_stream};
const char *const mem_pf_names[PF_NUM + 1] = {"none", "next_line", "ip_stride", "stream", NULL};
