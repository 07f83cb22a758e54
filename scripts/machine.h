/* machine.h — load machine configurations (Lua files under uarch/configs/ or any path) into the
 * out-of-order model's C configuration. */
#ifndef WHATIF_MACHINE_H
#define WHATIF_MACHINE_H

#include "ooo.h"
#include "util.h"

/* The bundled default machine. */
#define MACHINE_DEFAULT "golden_cove"

/* Load a configuration into *cfg: `name_or_path` is a bundled machine name (found as
 * uarch/configs/<name>.lua through cli_find_data) or a path to a .lua file (anything with a
 * '/' or ending in ".lua"); NULL means MACHINE_DEFAULT. The file returns a table; its `base`
 * key names the configuration it modifies (a name, or a path relative to the file), else it
 * modifies the built-in Golden Cove defaults. Unknown keys, wrong types and out-of-range
 * values are errors naming the file and the key; the result is checked (ooo_config_check).
 * On error *cfg is unspecified. */
wi_rc machine_load(const char *name_or_path, ooo_config *cfg, wi_err *err);

/* Apply a Lua table expression such as `{core = {rob = 256}}` on top of *cfg and check. */
wi_rc machine_apply_expr(ooo_config *cfg, const char *expr, wi_err *err);

/* Path of the file machine_load would read for name_or_path (caller frees), or NULL. */
char *machine_path(const char *name_or_path);

#endif
