/* whatif_lua.c — the loadable Lua module whatif.so (`require "whatif"` from the system lua5.4).
 * Its entry point, luaopen_whatif, lives in the scripts library (scripts/lua_whatif.c); the
 * reference below makes the linker pull it (and everything it needs) into the module. */
#include "lua_whatif.h"

void *whatif_lua_entry(void);
void *whatif_lua_entry(void) { return (void *)luaopen_whatif; }
