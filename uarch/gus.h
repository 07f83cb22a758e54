/* gus.h — the one-pass, resource-centric Gus model: predicted cycles, per-PC taint ranking and
 * per-resource sensitivity (issue 7 item 1).
 *
 * The model. Every abstract resource of the machine — front-end fetch/decode, rename/dispatch
 * width, the reorder buffer, each execution port, retire width, the L1D fill buffers, the line
 * bandwidth between cache levels, the data TLBs — has an earliest-available time and a taint
 * set. Dynamic instructions are processed once, in program order. Each stage of an instruction
 * (dispatch, address, load, execute, store, retire) starts at the maximum of its inputs' ready
 * times and the available times of the resources it uses; it inherits the taint set of the
 * constraint that bound it (the argmax; on ties a full ROB wins over dispatch width over the
 * front end, and later stages keep the instruction's own chain) plus itself, and each resource it uses takes over the set of whatever decided its new available
 * time (the resource's previous users when it was busy, else the instruction). A FIFO taint
 * queue holds the last Q = window x ROB dynamic instructions: when instruction n is dispatched
 * it enters and instruction n - Q leaves; if that one is a member of n's dispatch taint set
 * (still on the binding chain that decided when n could dispatch), taint[pc] is incremented. At
 * the end the instructions left in the queue are tested against the last retirement's set.
 * Sensitivity analysis re-runs the model once per resource and scaling.
 *
 * Resources are fluid: a port, width or link of throughput k per cycle advances its available
 * time by 1/k per use, counted from the user's dispatch (so an instruction waiting for its
 * operands does not hold up younger independent ones). Timing is kept in integer ticks
 * (GUS_TICKS per cycle): widths 1..16 give exact per-use costs and runs are bit-for-bit
 * deterministic on every host.
 *
 * Taint sets are binding chains, kept as persistent nodes (an interval of instruction indices
 * plus a parent set), so that extending a set is O(1). The taint-queue tests, whose instruction
 * advances by one per test, keep the last few chains they followed as arrays (paths) from their
 * oldest live node: a test walks its set's chain only down to a path (usually a node or none)
 * and reads that path's oldest live node. Nothing is allocated per instruction (the rings grow,
 * rarely, if they must).
 *
 * What the model leaves out (by design, it is one-pass): branch prediction and wrong-path
 * fetch, instruction-cache misses, prefetchers, DRAM scheduling, scheduler/load-queue/store-queue
 * capacity, memory-ordering violations. Use uarch/ooo for those. */
#ifndef WHATIF_GUS_H
#define WHATIF_GUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "insn.h"
#include "trace.h"
#include "util.h"

#define GUS_TICKS 720720u  /* ticks per cycle: divisible by every integer 1..16 */
#define GUS_MAX_PORTS 32
#define GUS_MAX_UOPS 4     /* executed micro-ops per instruction class */

/* ---- resources ----------------------------------------------------------------------------- */

/* Resource ids. Ports are GUS_R_PORT0 + p for p < gus_machine.n_ports. */
enum {
  GUS_R_FRONTEND = 0, /* decode: fe_width instructions/cycle; fe_latency cycles to dispatch */
  GUS_R_DISPATCH,     /* rename/dispatch: dispatch_width slots/cycle */
  GUS_R_ROB,          /* reorder buffer: rob entries (instructions); "throughput" = size */
  GUS_R_RETIRE,       /* in-order retire: retire_width slots/cycle */
  GUS_R_FILLBUF,      /* L1D fill buffers (MSHRs), each held for a miss's latency */
  GUS_R_L2,           /* L2 -> L1D line bandwidth; latency = L2 load-to-use latency */
  GUS_R_LLC,          /* LLC -> L2 line bandwidth; latency = LLC load-to-use latency */
  GUS_R_DRAM,         /* DRAM -> LLC line bandwidth; latency = DRAM load-to-use latency */
  GUS_R_TLB,          /* data TLBs: "throughput" = reach (ways), latency = STLB hit + walk */
  GUS_R_PORT0,        /* first execution port */
  GUS_R_MAX = GUS_R_PORT0 + GUS_MAX_PORTS
};
/* Binding constraints that are not resources (for gus_result.bound). */
enum {
  GUS_B_DATA = GUS_R_MAX, /* a register operand (its producer's result) */
  GUS_B_MEMDEP,           /* store-to-load forwarding from an in-flight store */
  GUS_B_NUM
};

/* ---- machine description ------------------------------------------------------------------- */

/* One executed micro-op. */
typedef struct gus_uop {
  uint32_t ports;     /* bit p set: may issue on port p */
  uint16_t latency;   /* cycles from issue to result (load uops: ignored, the cache decides) */
  uint16_t occupancy; /* cycles its port stays busy (1 = fully pipelined; dividers more) */
} gus_uop;

/* How one insn_class executes. An instruction takes max(1, n + its stores) dispatch slots (a
 * load micro-fuses with its consumer, a store address with its data), as in uarch/ooo. */
typedef struct gus_class_uops {
  uint8_t n;                 /* executed micro-ops (0: eliminated at rename; result = inputs) */
  gus_uop uop[GUS_MAX_UOPS]; /* run in sequence, each on the previous one's result */
} gus_class_uops;

typedef struct gus_cache {
  uint32_t size;     /* bytes */
  uint32_t ways;
  uint32_t latency;  /* cycles, load-to-use on a hit at this level */
} gus_cache;

/* The machine the model runs: the same widths, ports, port groups and latencies as the detailed
 * model's configuration (gus_machine_from_ooo), or built by hand. Plain data: copy freely. */
typedef struct gus_machine {
  uint32_t fe_width;        /* instructions fetched and decoded per cycle */
  uint32_t fe_taken;        /* taken branches fetched per cycle (0 = no limit) */
  uint32_t fe_latency;      /* cycles from fetch to the earliest dispatch */
  uint32_t fe_queue;        /* instructions the front end may run ahead of dispatch */
  uint32_t dispatch_width;  /* slots renamed and dispatched per cycle */
  uint32_t retire_width;    /* instructions retired per cycle */
  uint32_t retire_latency;  /* cycles from completion to the earliest retirement */
  uint32_t rob;             /* reorder-buffer entries (instructions) */
  uint32_t n_ports;         /* execution ports, 1..GUS_MAX_PORTS */
  char port_name[GUS_MAX_PORTS][12]; /* "P0", ...; empty = "p<index>" */
  gus_class_uops cls[IC_NUM];        /* per insn_class; memory operands add the uops below */
  gus_uop load;             /* load micro-op (ports; occupancy per line) */
  gus_uop sta, std;         /* store-address and store-data micro-ops */
  uint32_t line;            /* cache line bytes (power of two) */
  gus_cache l1d, l2, llc;
  uint32_t dram_latency;    /* cycles, load-to-use from DRAM on a row hit */
  uint32_t dram_channels, dram_banks; /* banks per channel; lines interleave over channels */
  uint32_t dram_row;        /* row bytes per bank */
  uint32_t dram_t_rcd;      /* cycles added when the bank has no open row (activate) */
  uint32_t dram_t_rp;       /* cycles added on top when another row is open (precharge) */
  uint32_t page;            /* page bytes (power of two) */
  uint32_t dtlb_entries, dtlb_ways;
  uint32_t stlb_entries, stlb_ways;
  uint32_t stlb_latency;    /* cycles added to a load that misses the DTLB and hits the STLB */
  uint32_t walk_latency;    /* cycles added on top when it misses the STLB too */
  double l2_bw, llc_bw, dram_bw; /* lines/cycle into the level above (L1D, L2, LLC) */
  uint32_t fill_buffers;    /* L1D misses in flight at once */
  uint32_t stlf_latency;    /* cycles from store data ready to a forwarded load's result */
  bool stack_engine;        /* push/pop/call/ret update rsp at rename (no dependency chain) */
  /* Scaling, as sensitivity analysis applies it (1.0 = as configured). tput[r] multiplies a
   * resource's throughput (width, ports' issue rate, bandwidth, ROB and fill-buffer entries);
   * lat[r] multiplies its latency (front-end depth, uop latencies on a port, cache level
   * latency). */
  double tput[GUS_R_MAX];
  double lat[GUS_R_MAX];
} gus_machine;

/* A Golden Cove / Sapphire Rapids class machine (12 ports), for tests and when no machine
 * configuration is given (gus_machine_from_ooo of ooo_config_default is what `whatif gus`
 * uses). */
void gus_machine_default(gus_machine *m);
/* The same machine as a detailed-model configuration: widths, ROB, ports and port groups,
 * per-class micro-ops and latencies, cache geometry and latencies, fill buffers, bandwidth
 * between levels (from mem.l2/llc.bandwidth and the DRAM channels / t_burst), store
 * forwarding, data TLBs, DRAM open rows (same address mapping; latency = LLC latency +
 * base_latency + t_cas + t_burst, plus t_rcd or t_rp + t_rcd). What Gus cannot represent is
 * ignored (predictors, prefetchers, DRAM scheduling, queue sizes). Returns WI_EINVAL if cfg has more than GUS_MAX_PORTS ports. Defined in gus_ooo.c. */
struct ooo_config;
wi_rc gus_machine_from_ooo(gus_machine *m, const struct ooo_config *cfg, wi_err *err);
/* Check ranges and consistency (widths >= 1, ports within n_ports, cache geometry powers of
 * two, scales > 0). Returns WI_EINVAL with a message naming the field. */
wi_rc gus_machine_check(const gus_machine *m, wi_err *err);
/* Number of resources of m (GUS_R_PORT0 + n_ports). */
int gus_res_count(const gus_machine *m);
/* Name of resource r ("frontend", "rob", "l2", "p5", ...) into buf; returns buf. */
const char *gus_res_name(const gus_machine *m, int r, char *buf, size_t n);
/* Name of a binding id (resource, "data" or "memdep") into buf; returns buf. */
const char *gus_bind_name(const gus_machine *m, int b, char *buf, size_t n);
/* Whether resource r has a latency that lat[r] scales. */
bool gus_res_has_latency(int r);

/* ---- instruction sources --------------------------------------------------------------------- */

/* Where a run reads its dynamic instructions: a trace (gus_source_trace) or memory
 * (gus_source_mem). open() returns a new cursor at the first instruction (several may be open
 * at once, on different threads; a cursor may be used on another thread than the one that
 * opened it, by one thread at a time); next() fills a batch (b->n == 0 at the end); decoded(sid)
 * returns the static record of sid (must be thread-safe: read-only). */
typedef struct gus_source {
  void *ctx;
  uint32_t n_static;
  uint64_t n_insns;                                   /* 0 if unknown */
  const dec_insn *(*decoded)(void *ctx, uint32_t sid);
  void *(*open)(void *ctx, wi_err *err);              /* NULL on failure */
  wi_rc (*next)(void *cursor, trace_batch *b, wi_err *err);
  void (*close)(void *cursor);
} gus_source;

/* A source over instructions in memory (for tests and synthetic benchmarks). The arrays must
 * outlive the source; insns[i].mem_off indexes mems; dec[sid] is the static record of sid. */
typedef struct gus_mem_stream {
  const dec_insn *dec;
  uint32_t n_static;
  const trace_insn *insns;
  size_t n;
  const trace_mem *mems;
} gus_mem_stream;
void gus_source_mem(gus_source *src, const gus_mem_stream *s);

/* A source over a trace (model instructions: rep runs collapsed). t must outlive src. */
void gus_source_trace(gus_source *src, const trace_t *t);

/* ---- running ------------------------------------------------------------------------------- */

typedef struct gus gus;

/* Per-resource accounting of one run. */
typedef struct gus_res_stats {
  uint64_t uses;     /* times an instruction used the resource (ports: micro-ops issued) */
  uint64_t bound;    /* times it was the binding constraint of an instruction's stage */
} gus_res_stats;

/* What a run found. Arrays are owned by the result: free with gus_result_free. */
typedef struct gus_result {
  uint64_t cycles;       /* predicted cycles: retire time of the last instruction, rounded up */
  uint64_t ticks;        /* the same in ticks (GUS_TICKS per cycle), for exact comparisons */
  uint64_t insns;        /* dynamic instructions modelled */
  uint32_t window;       /* taint-queue length as a multiple of the ROB */
  uint32_t n_static;
  uint64_t *taint;       /* [n_static]: times the PC left the taint queue while tainted */
  uint64_t *count;       /* [n_static]: dynamic executions */
  int n_res;             /* resources (gus_res_count) */
  gus_res_stats res[GUS_R_MAX];
  uint64_t bound_data;   /* stages bound by a register operand */
  uint64_t bound_memdep; /* loads bound by a forwarding store */
  uint64_t l1d_misses, l2_misses, llc_misses; /* line accesses that missed each level */
} gus_result;
void gus_result_free(gus_result *r); /* frees the arrays; accepts a zeroed result */

/* A model instance for machine m (copied) with a taint queue of window x ROB instructions
 * (window 1..16; 2 is the Gus default). n_static is a size hint for per-PC arrays (they grow
 * on demand). Returns NULL and fills err if m fails gus_machine_check or window is out of
 * range. Free with gus_free. Not thread-safe; one per thread. */
gus *gus_new(const gus_machine *m, uint32_t window, uint32_t n_static, wi_err *err);
void gus_free(gus *g); /* accepts NULL */

/* Model one dynamic instruction: its static id, static record (read on the first sight of sid
 * only; may be NULL afterwards), dynamic record and the batch's memory-access array
 * (ti->mem_off indexes it). Load/store direction comes from mems, not from d. */
void gus_step(gus *g, uint32_t sid, const dec_insn *d, const trace_insn *ti, const trace_mem *mems);
/* Flush the taint queue and fill *r (which the caller frees with gus_result_free). The model
 * must not be stepped afterwards. */
void gus_finish(gus *g, gus_result *r);

/* Run a whole source through a fresh model: gus_new + gus_step over every instruction +
 * gus_finish. Returns WI_OK and fills *r, or an error from the source or the machine. When the
 * process may run on two CPUs, the source's cursor is read on a second thread, a few batches
 * ahead of the model (results do not depend on it). */
wi_rc gus_run(const gus_machine *m, uint32_t window, const gus_source *src, gus_result *r,
              wi_err *err);

/* ---- sensitivity ----------------------------------------------------------------------------- */

/* Speedups of one resource (baseline cycles / scaled cycles; > 1 is faster). A value of 0
 * means "not applicable" (no latency to scale). */
typedef struct gus_sens_row {
  int res;                    /* resource id */
  double speedup_x2;          /* throughput x2 */
  double speedup_half_latency;/* latency x0.5 */
  double speedup_factor;      /* throughput x factor and latency / factor */
} gus_sens_row;

/* Sensitivity analysis: one baseline run (returned in *base if non-NULL) and, for every
 * resource the baseline used, one run per scaling (x2 throughput, x0.5 latency, and x factor).
 * Resources the baseline never used have speedup exactly 1 without a run. rows must hold
 * gus_res_count(m) entries, in resource order. threads >= 1 runs variants in parallel (each on
 * its own cursor; with threads == 1 each run reads its source on a second thread, as gus_run
 * does). Deterministic: the result does not depend on threads. */
wi_rc gus_sensitivity(const gus_machine *m, uint32_t window, const gus_source *src, double factor,
                      unsigned threads, gus_sens_row *rows, gus_result *base, wi_err *err);

#endif
