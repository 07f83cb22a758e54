/* rp_store.h — the sweep results store (SQLite): runs and one row per replay; resumable,
 * mergeable.
 *
 * Schema (version 1):
 *   meta(key TEXT PRIMARY KEY, value TEXT)              -- schema_version = 1
 *   run(id INTEGER PRIMARY KEY,
 *       trace_hash TEXT, config_hash TEXT,                -- 16 hex digits each; UNIQUE together
 *       tool_version TEXT, command TEXT, trace_path TEXT, config_name TEXT,
 *       base_cycles INTEGER, base_insns INTEGER, base_ipc REAL, created TEXT)
 *   replay(run_id INTEGER, idx INTEGER,                   -- idx: position in the full job list
 *          interv TEXT,                                   -- interventions, canonical text
 *          pc INTEGER,                                    -- the PC of a per-PC sweep, else NULL
 *          cycles INTEGER, insns INTEGER, ipc REAL,
 *          delta_cycles INTEGER, delta_ipc REAL, ipc_pct REAL,
 *          mpki REAL, wp_fetched INTEGER,
 *          start_insn INTEGER,                            -- checkpoint the replay started from
 *          wall_s REAL,                                   -- seconds (not part of the result)
 *          PRIMARY KEY (run_id, interv))
 *
 * Durability: a resumable database cannot be written to a temporary and renamed (the partial
 * state IS the resume point). The store uses WAL journaling and commits every batch of rows
 * (rp_store_put commits at least once per second and every 64 rows; rp_store_set_batch), so a killed sweep leaves a
 * valid database holding every batch committed before the kill; running the same sweep again
 * skips the interventions that have rows (rp_store_has). */
#ifndef WHATIF_RP_STORE_H
#define WHATIF_RP_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

typedef struct rp_store rp_store;

typedef struct rp_run_info {
  uint64_t trace_hash, config_hash;
  const char *tool_version, *command, *trace_path, *config_name;
  uint64_t base_cycles, base_insns;
  double base_ipc;
} rp_run_info;

typedef struct rp_row {
  int64_t idx;
  const char *interv;
  bool has_pc;
  uint64_t pc;
  uint64_t cycles, insns;
  double ipc;
  int64_t delta_cycles;
  double delta_ipc, ipc_pct;
  double mpki;
  uint64_t wp_fetched;
  uint64_t start_insn;
  double wall_s;
} rp_row;

/* Open (creating if needed) a store at path. Returns NULL and fills err (WI_EIO) on failure. */
rp_store *rp_store_open(const char *path, wi_err *err);
/* Commit pending rows and close. Accepts NULL. Returns the commit's status. */
wi_rc rp_store_close(rp_store *s, wi_err *err);
/* Find the run of (trace_hash, config_hash) or create it. When it exists and its baseline
 * differs from ri's, fails with WI_ESTATE (the model changed: start a new database). */
wi_rc rp_store_run(rp_store *s, const rp_run_info *ri, int64_t *run_id, wi_err *err);
/* True when run_id already has a row for interv. */
bool rp_store_has(rp_store *s, int64_t run_id, const char *interv);
/* Number of rows of run_id. */
int64_t rp_store_count(rp_store *s, int64_t run_id);
/* Insert a row (batched; see the durability note). */
wi_rc rp_store_put(rp_store *s, int64_t run_id, const rp_row *row, wi_err *err);
/* Commit after every `rows` rows (default 64) or `seconds` seconds (default 1.0), whichever
 * comes first; values <= 0 keep the current setting. */
void rp_store_set_batch(rp_store *s, int rows, double seconds);
/* Commit pending rows now. */
wi_rc rp_store_flush(rp_store *s, wi_err *err);
/* Merge the store at in_path into s: runs matched by (trace_hash, config_hash), rows added when
 * absent. *rows (may be NULL) gets the number of rows added. */
wi_rc rp_store_merge(rp_store *s, const char *in_path, int64_t *rows, wi_err *err);

#endif
