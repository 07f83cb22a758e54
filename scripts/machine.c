/* machine.c — load machine configurations (Lua files) into ooo_config, resolving `base`. */
#include "machine.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "luacfg.h"

static bool looks_like_path(const char *s) {
  size_t n = strlen(s);
  return strchr(s, '/') || (n > 4 && !strcmp(s + n - 4, ".lua"));
}

char *machine_path(const char *name_or_path) {
  if (!name_or_path) name_or_path = MACHINE_DEFAULT;
  if (looks_like_path(name_or_path)) return xstrdup(name_or_path);
  for (const char *p = name_or_path; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
          *p == '-'))
      return NULL;
  char *rel = xasprintf("uarch/configs/%s.lua", name_or_path);
  char *path = cli_find_data(rel);
  if (!path) {
    /* installed layout: share/whatif/configs/<name>.lua */
    free(rel);
    rel = xasprintf("configs/%s.lua", name_or_path);
    path = cli_find_data(rel);
  }
  free(rel);
  return path;
}

/* The file's base name without ".lua". */
static void stem(const char *path, char *out, size_t n) {
  const char *b = strrchr(path, '/');
  b = b ? b + 1 : path;
  snprintf(out, n, "%s", b);
  size_t k = strlen(out);
  if (k > 4 && !strcmp(out + k - 4, ".lua")) out[k - 4] = 0;
}

static wi_rc load_rec(const char *name_or_path, const char *rel_dir, ooo_config *cfg, int depth, wi_err *err) {
  if (depth > 8) return wi_fail(err, WI_EINVAL, "%s: `base` chain deeper than 8 (a cycle?)", name_or_path);
  char *path = NULL;
  if (rel_dir && looks_like_path(name_or_path) && name_or_path[0] != '/')
    path = xasprintf("%s/%s", rel_dir, name_or_path);
  else
    path = machine_path(name_or_path);
  if (!path)
    return wi_fail(err, WI_EINVAL, "unknown machine '%s' (no uarch/configs/%s.lua; give a .lua file path)",
                   name_or_path, name_or_path);
  cfg_val *v = luacfg_load_file(path, err);
  if (!v) {
    free(path);
    return err ? err->rc : WI_EINVAL;
  }
  wi_rc rc = WI_OK;
  if (v->kind != CV_TABLE) {
    rc = wi_fail(err, WI_EINVAL, "%s: a machine configuration must return a table, not a %s", path,
                 cv_kind_name(v->kind));
    goto out;
  }
  const cfg_val *base = cv_get(v, "base");
  if (base) {
    if (base->kind != CV_STR) {
      rc = wi_fail(err, WI_EINVAL, "%s: base must be a string (a machine name or a file), not a %s", path,
                   cv_kind_name(base->kind));
      goto out;
    }
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else strcpy(dir, ".");
    rc = load_rec(base->str, dir, cfg, depth + 1, err);
    free(dir);
    if (rc) goto out;
  } else {
    ooo_config_default(cfg);
  }
  stem(path, cfg->name, sizeof cfg->name);
  rc = ooo_config_apply(cfg, v, path, err);
  if (rc) goto out;
  if (depth == 0) {
    wi_err e2 = {0};
    if (ooo_config_check(cfg, &e2)) rc = wi_fail(err, e2.rc, "%s: %s", path, e2.msg);
  }
out:
  cv_free(v);
  free(path);
  return rc;
}

wi_rc machine_load(const char *name_or_path, ooo_config *cfg, wi_err *err) {
  return load_rec(name_or_path ? name_or_path : MACHINE_DEFAULT, NULL, cfg, 0, err);
}

wi_rc machine_apply_expr(ooo_config *cfg, const char *expr, wi_err *err) {
  cfg_val *v = luacfg_eval(expr, "override", err);
  if (!v) return err ? err->rc : WI_EINVAL;
  wi_rc rc = ooo_config_apply(cfg, v, "override", err);
  cv_free(v);
  if (rc) return rc;
  return ooo_config_check(cfg, err);
}
