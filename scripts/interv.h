/* interv.h — the textual form of interventions (`ras{repair="full"}`, `latency{pc=0x401a2c,
 * add=1}`), parsed through Lua into the C structs replay/ takes.
 *
 * The text is a Lua expression evaluated in an environment where every name is a constructor
 * that tags its table argument with the name as `kind` (so `foo{...}` parses, and replay/ then
 * reports "unknown intervention kind 'foo'"). A list is several expressions separated by commas
 * (or semicolons): "ras{repair='full'}, wrong_path{policy='off'}". */
#ifndef WHATIF_INTERV_H
#define WHATIF_INTERV_H

#include <stddef.h>

#include "replay.h"
#include "util.h"

struct lua_State;

/* Parse a list of interventions from text; `where` names the source in error messages (e.g.
 * "--do" or "list.txt:12"). On success *out (free with interv_free_list) holds *n >= 1 items.
 * Errors (WI_EINVAL) say which intervention and why; nothing is returned then. */
wi_rc interv_parse_list(const char *text, const char *where, rp_interv **out, size_t *n, wi_err *err);
/* Parse exactly one intervention. */
wi_rc interv_parse_one(const char *text, const char *where, rp_interv *out, wi_err *err);
void interv_free_list(rp_interv *v, size_t n); /* accepts NULL */

/* Convert the Lua value at idx into an intervention: a tagged table (as the constructors make)
 * or a string in the textual form. Does not raise Lua errors. */
wi_rc interv_from_lua(struct lua_State *L, int idx, rp_interv *out, wi_err *err);
/* Set one constructor per kind (remove, latency, ...) as fields of the table at idx. */
void interv_push_constructors(struct lua_State *L, int idx);

#endif
