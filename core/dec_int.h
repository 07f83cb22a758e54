/* dec_int.h — decoder internals exposed for tests (not for models: use decode.h). */
#ifndef WHATIF_DEC_INT_H
#define WHATIF_DEC_INT_H

#include <stdbool.h>
#include <stddef.h>

/* Check the decoder's mnemonic tables (exact rows sorted and unique, classes in range).
 * Returns true if they are consistent; otherwise false with a one-line reason in msg. */
bool dec_check_tables(char *msg, size_t cap);

/* The class the tables give a Capstone mnemonic ("vaddps", "cmovne") for its register form,
 * or -1 when no row matches (the instruction then decodes as IC_OTHER). */
int dec_table_class(const char *mnemonic);

#endif
