/* val.h — ranking-vs-perturbation validation: per-PC perturbation ground truth on the detailed
 * model, the rankings under test (Gus taint at 1x/2x/4x ROB, MFIR critical-path share, naive
 * baselines), their rank agreement, the injected-cause checks, and the reports (text, JSON,
 * self-contained HTML).
 *
 * The experiment on one trace (val_run):
 *   1. The baseline runs once with per-sid statistics (rp_base with OOO_SID_STATS).
 *   2. The PC set: static instructions executed at least min_count times, the `top` most
 *      executed (ties by pc), plus every PC of the trace's injected-cause set (so a check
 *      can never fail by its cause being left out of the sweep).
 *   3. Ground truth per PC, by exact replays (rp_sweep, results in job order, so nothing
 *      depends on the thread count): delta = intervened cycles - baseline cycles (signed) under
 *        latency+1  latency{pc=X, add=1}: one more cycle on each execution's last micro-op;
 *        removal    remove{pc=X}: every execution dropped, as if it never existed.
 *      "Importance" for the statistics is +delta for latency+1 (cycles an extra cycle costs)
 *      and -delta for removal (cycles removing it saves): larger = more important.
 *   4. Rankings as scores per PC (larger = more important): gus_taint_{1,2,4}x (uarch/gus,
 *      taint queue of 1/2/4 x ROB), mfir_critical_path (cycles of the window's critical path
 *      at that PC, mfir_critical_path "end", on a window centred in the trace), exec_count
 *      (committed executions), rob_head_stall (cycles at the ROB head not committable).
 *   5. For each ranking and ground truth: Kendall tau-b with a 95% percentile-bootstrap
 *      interval (fixed seed: reproducible), Spearman's rho, top-10 precision (val_topk). The
 *      stability of the Gus ranking: tau-b between its windows.
 *   6. The injected-cause check when the trace is a bundled workload with a known cause
 *      (val_cause_find): pass when the top PC by the check's ground truth is in the expected
 *      set; for each ranking, whether its top PC is.
 *
 * Everything in a val_result except the wall times (the *_s fields) is deterministic: the
 * same trace, machine and options give the same bytes of JSON (val_json without timings) for
 * any thread count. */
#ifndef WHATIF_VAL_H
#define WHATIF_VAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "insn.h"
#include "replay.h"
#include "trace.h"
#include "util.h"

/* ---- ground truths and rankings --------------------------------------------------------- */

enum { VAL_GT_LAT = 0, VAL_GT_REMOVE, VAL_GT_NUM };
enum {
  VAL_RK_GUS1 = 0, /* Gus taint, queue = 1 x ROB */
  VAL_RK_GUS2,     /* Gus taint, 2 x ROB (the Gus default) */
  VAL_RK_GUS4,     /* Gus taint, 4 x ROB */
  VAL_RK_MFIR,     /* MFIR critical-path cycles at the PC */
  VAL_RK_COUNT,    /* naive: committed executions */
  VAL_RK_HEAD,     /* naive: cycles stalled at the ROB head */
  VAL_RK_NUM
};
/* "latency+1", "removal". */
const char *val_gt_name(int gt);
/* The intervention template of a ground truth: "latency{add=1}", "remove{}". */
const char *val_gt_template(int gt);
/* "gus_taint_1x", ..., "mfir_critical_path", "exec_count", "rob_head_stall". */
const char *val_rk_name(int rk);
/* One line saying what a ranking's score is (for reports). */
const char *val_rk_doc(int rk);

/* ---- injected causes (val_cause.c) ------------------------------------------------------- */

/* A bundled workload with a known bottleneck and how to find its instructions: the PCs whose
 * source line carries a `KEY` marker comment in <workload>.c (or, with func, the PCs of that
 * function), filtered by class / branch kind / memory read. */
typedef struct val_cause {
  const char *workload;  /* program basename, e.g. "fma_chain" */
  const char *cause;     /* what the bottleneck is, for reports */
  const char *func;      /* NULL: KEY lines of <workload>.c; else every PC of this function */
  int cls;               /* insn_class the PC must have, or -1 */
  int br;                /* branch_kind the PC must have, or -1 */
  bool load;             /* the PC must read memory */
  int gt;                /* ground truth of the check (VAL_GT_*) */
  const char *why;       /* why that ground truth */
} val_cause;

/* The table entry of workload name (a program basename), or NULL. */
const val_cause *val_cause_find(const char *workload);
/* Every entry (for documentation and the demo). */
const val_cause *val_cause_at(size_t i, size_t *n);

/* The expected set of cause c on trace t: sorted sids. Reads the source file of the KEY
 * lines at the path the debug information names, else <src_dir>/<basename> (src_dir may be
 * NULL). Returns WI_OK with *n = 0 when nothing matches (the caller reports it); WI_EIO when
 * no source file can be read (message names the paths tried). *out is malloc'd. */
wi_rc val_cause_pcs(const val_cause *c, const trace_t *t, const char *src_dir, uint32_t **out, size_t *n,
                    wi_err *err);

/* ---- the experiment --------------------------------------------------------------------- */

typedef struct val_opts {
  uint64_t min_count;    /* PCs executed at least this many times (default 1000) */
  uint64_t top;          /* at most this many PCs, most executed first (0: no limit; default 20) */
  unsigned threads;      /* replay threads (0: 1) */
  uint32_t boot_iters;   /* bootstrap resamples (default 1000) */
  uint64_t seed;         /* bootstrap seed (default VAL_SEED) */
  bool no_mfir;          /* leave out the MFIR ranking */
  uint64_t mfir_window;  /* instructions of the MFIR window, centred in the trace (default 500000;
                            UINT64_MAX: the whole trace) */
  const char *tmp_dir;   /* where the MFIR database is built (NULL: $TMPDIR or /tmp); removed */
  const char *src_dir;   /* directory of the workloads' sources, for KEY lines (may be NULL) */
  const char *workload;  /* workload name for the injected check (NULL: the trace's program
                            basename; "" for none) */
  FILE *log;             /* stage lines ("baseline 1.2 s") go here (NULL: none) */
  bool progress;         /* progress bars of the replays (stderr, only on a terminal) */
} val_opts;

#define VAL_SEED 0x5eed2024u
void val_opts_default(val_opts *o);

/* One static instruction of the PC set. */
typedef struct val_pc {
  uint64_t pc;
  uint32_t sid;
  uint64_t count;              /* committed executions in the baseline */
  int64_t delta[VAL_GT_NUM];   /* intervened - baseline cycles */
  double score[VAL_RK_NUM];    /* ranking scores */
  bool expected;               /* in the injected-cause set */
  char text[DEC_TEXT_LEN];     /* disassembly */
  char where[96];              /* "function+0x1c" or "0x..." */
  char line[96];               /* "file.c:12" (basename) or "" */
} val_pc;

/* Agreement of one ranking with one ground truth (or of two Gus windows). */
typedef struct val_cmp {
  int rk, gt;                  /* ranking and ground truth (stability: rk and rk2) */
  int rk2;
  size_t n;                    /* PCs compared */
  double tau, ci_lo, ci_hi;    /* Kendall tau-b and its 95% bootstrap interval (NaN: undefined) */
  double spearman;
  double top10;                /* top-10 precision (NaN for stability rows) */
  size_t boot_kept;            /* finite bootstrap replicates */
} val_cmp;

/* The injected-cause check of one trace. */
typedef struct val_check {
  const val_cause *cause;
  uint32_t *exp_sids;          /* expected set (sorted sids) */
  size_t n_exp;
  size_t top_truth;            /* index into pcs of the top PC by the check's ground truth
                                  (SIZE_MAX: none) */
  size_t top_rank[VAL_RK_NUM]; /* index of each ranking's top PC (SIZE_MAX: none / ranking absent) */
  bool pass;
  char note[640];              /* why it could not run or what it found ("" if nothing) */
} val_check;

typedef struct val_result {
  char *trace_path;            /* as given */
  char *workload;              /* program basename (or the override) */
  char *machine;               /* configuration name */
  uint64_t insns, cycles;      /* baseline */
  double ipc;
  uint32_t n_static;           /* static PCs of the trace */
  val_pc *pcs;                 /* the PC set, most executed first (ties by pc) */
  size_t n_pcs;
  size_t n_replays;
  bool has_rk[VAL_RK_NUM];     /* false for MFIR when left out or failed */
  char mfir_note[640];         /* why MFIR is absent, or its window */
  uint64_t mfir_start, mfir_count; /* its window (model instructions) */
  val_cmp cmp[VAL_RK_NUM][VAL_GT_NUM];
  val_cmp stab[3];             /* Gus 1x-2x, 2x-4x, 1x-4x */
  bool has_check;
  val_check check;
  uint64_t min_count, top;     /* the options used */
  uint32_t boot_iters;
  uint64_t seed;
  /* wall times, seconds (not deterministic; left out of byte-comparable JSON) */
  double baseline_s, sweep_s, gus_s, mfir_s, stats_s, total_s;
} val_result;

/* Run the experiment on baseline b, which must have been run (rp_base_run) with
 * OOO_SID_STATS. trace_path is only recorded. Fills *r (free with val_result_free); on
 * failure returns the error and leaves *r empty. */
wi_rc val_run(const rp_base *b, const char *trace_path, const val_opts *o, val_result *r, wi_err *err);
/* Convenience: baseline (with OOO_SID_STATS) + val_run. */
wi_rc val_run_trace(const trace_t *t, const char *trace_path, const ooo_config *cfg, const val_opts *o,
                    val_result *r, wi_err *err);
void val_result_free(val_result *r); /* accepts a zeroed result */

/* Importance of pc i under ground truth gt (+delta for latency+1, -delta for removal). */
double val_importance(const val_pc *p, int gt);

/* ---- reports (val_report.c, val_html.c) ----------------------------------------------------- */

/* Write the results of n traces as one JSON document: rankings (every ranking x ground truth
 * of every trace: name, ground_truth, kendall_tau_b, ci_low, ci_high, spearman,
 * top10_precision, n, workload), stability, injected, traces (with per-PC data) and, when
 * timings is true, wall times. */
void val_json(val_result *const *rs, size_t n, bool timings, FILE *f);
/* A text summary for people. */
void val_text(val_result *const *rs, size_t n, FILE *f);
/* A compact summary of several traces: tau-b of every ranking x ground truth per trace, the
 * Gus stability, and the injected-cause checks (used by `whatif demo`). */
void val_summary(val_result *const *rs, size_t n, FILE *f);
/* The self-contained HTML report (inline CSS and SVG, no external resources), written to a
 * temporary beside path and renamed. */
wi_rc val_html(val_result *const *rs, size_t n, const char *path, wi_err *err);

#endif
