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

/* The tracker table (mem_str_state) and the training (mem_str_train) live in mem_int.h, so
 * the miss path inlines them. */

static size_t str_bytes(const cache_config *cfg) {
  (void)cfg;
  return sizeof(mem_str_state);
}
static void str_init(void *st, const cache_config *cfg) {
  (void)cfg;
  memset(st, 0, sizeof(mem_str_state));
}
static uint32_t str_train(void *st, const cache_config *cfg, uint32_t line_shift,
                          const mem_pf_access *a, uint64_t *out, uint32_t max) {
  return mem_str_train(st, degree_of(cfg), line_shift, a, out, max);
}
static const mem_pf_ops pf_stream = {"stream", str_bytes, str_init, str_train};

const mem_pf_ops *const mem_pf_table[PF_NUM] = {NULL, &pf_next_line, &pf_ip_stride, &pf_stream};
const char *const mem_pf_names[PF_NUM + 1] = {"none", "next_line", "ip_stride", "stream", NULL};
