/* replay_placeholder.c — keeps the replay library non-empty until its first module lands. */
int replay_placeholder(void);
int replay_placeholder(void) { return 0; }
