/* mfir_placeholder.c — keeps the mfir library non-empty until its first module lands. */
int mfir_placeholder(void);
int mfir_placeholder(void) { return 0; }
