/* mfir_build.c — build an MFIR database for a window of a trace: run the model unobserved up to
 * the window (less a margin), attach the capture, run through the window, finish. */
#include "mfir_int.h"

#define DEFAULT_MARGIN 4096u
#define MIN_MARGIN 64u /* more than any commit width: ooo_run may overshoot by commit_width - 1 */

wi_rc mfir_build(const trace_t *t, const ooo_config *cfg, const mfir_build_opts *o, const char *out_path,
                 mfir_build_stats *st, wi_err *err) {
  mfir_build_opts opts = *o;
  if (!opts.margin) opts.margin = DEFAULT_MARGIN;
  if (opts.margin < MIN_MARGIN) opts.margin = MIN_MARGIN;
  const trace_info *ti = trace_get_info(t);
  if (opts.start >= ti->n_insns)
    return wi_fail(err, WI_EINVAL, "mfir: window start %llu is beyond the trace (%llu instructions)",
                   (unsigned long long)opts.start, (unsigned long long)ti->n_insns);
  ooo_config def;
  if (!cfg) {
    ooo_config_default(&def);
    cfg = &def;
  }
  ooo_model *m = ooo_new(cfg, t, 0, err);
  if (!m) return err->rc;
  double t0 = wi_now();
  wi_rc rc = WI_OK;
  uint64_t warm = opts.start > opts.margin ? opts.start - opts.margin : 0;
  if (warm) rc = ooo_run(m, warm, err);
  double t1 = wi_now();
  mfir_capture *c = NULL;
  if (!rc) c = mfir_capture_new(out_path, t, cfg, &opts, err);
  if (!c) {
    ooo_free(m);
    return rc ? rc : err->rc;
  }
  ooo_set_observer(m, mfir_observer(), c);
  uint64_t end = opts.count == UINT64_MAX || opts.count > UINT64_MAX - opts.start ? UINT64_MAX
                                                                                   : opts.start + opts.count;
  /* In steps, for the progress line (stderr, terminals only); the result does not depend on them. */
  uint64_t last = end == UINT64_MAX || end > ti->n_insns ? ti->n_insns : end;
  wi_progress pr;
  progress_begin(&pr, "mfir", last);
  while (!rc && !ooo_finished(m) && !mfir_capture_done(c) && ooo_committed(m) < last) {
    uint64_t step = last - ooo_committed(m);
    if (step > 1000000) step = 1000000;
    rc = ooo_run(m, step, err);
    progress_update(&pr, ooo_committed(m));
  }
  progress_end(&pr);
  ooo_set_observer(m, NULL, NULL);
  ooo_free(m);
  if (rc) {
    mfir_capture_abort(c);
    return rc;
  }
  rc = mfir_capture_finish(c, st, err);
  if (!rc && st) st->model_seconds = t1 - t0;
  return rc;
}
