/* luacfg.h — turn Lua values (configuration files, intervention text) into cfg_val trees. */
#ifndef WHATIF_LUACFG_H
#define WHATIF_LUACFG_H

#include "cfgtree.h"
#include "util.h"

struct lua_State;

/* Run the Lua file at path (a data file that returns a table; the base and string/math
 * libraries are available) and convert its result. Lua errors are reported with file:line.
 * Returns NULL and fills err on failure; free the result with cv_free. */
cfg_val *luacfg_load_file(const char *path, wi_err *err);
/* Evaluate the Lua expression src (e.g. `{ core = { rob = 256 } }`); chunkname names it in
 * error messages. */
cfg_val *luacfg_eval(const char *src, const char *chunkname, wi_err *err);
/* Convert the value at stack index idx (tables recursively; functions and userdata are
 * errors naming their key path). */
cfg_val *luacfg_from_stack(struct lua_State *L, int idx, wi_err *err);
/* Push v onto the Lua stack as a fresh table/value. */
void luacfg_push(struct lua_State *L, const cfg_val *v);

#endif
