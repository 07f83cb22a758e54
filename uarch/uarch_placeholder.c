/* uarch_placeholder.c — keeps the uarch library non-empty until its first module lands. */
int uarch_placeholder(void);
int uarch_placeholder(void) { return 0; }
