/* hwsync command-line tool: one file per subcommand. */
#ifndef HWS_CLI_H
#define HWS_CLI_H
#include <stddef.h>
#include <stdio.h>
int hws_cmd_info(int argc, char **argv);
int hws_cmd_bench(int argc, char **argv);
int hws_cmd_run(int argc, char **argv);
int hws_cmd_report(int argc, char **argv);
int hws_cmd_profile(int argc, char **argv);
int hws_cmd_compare(int argc, char **argv);

/* run.c: give back the CPU mask libgomp's start-up may have narrowed (when
 * OMP_PROC_BIND or OMP_PLACES is set) before running a program. */
void hws_cli_undo_omp_binding(void);
/* run.c: the preload library for `hwsync CMD`: --preload LIB if readable,
 * else the one next to hwsync or in the installed directory; 0, or 2 after
 * one line on stderr. */
int hws_cli_preload_path(const char *cmd, const char *lib, char *path, size_t len);

/* lists.c: NAMES (NULL-terminated) joined by ", " ("none in this build" when
 * empty); is S one of NAMES; and LABEL padded to WIDTH, then NAMES and AFTER
 * (may be NULL) wrapped at 79 columns under the first name. */
void hws_cli_join(const char *const *names, char *buf, size_t len);
int hws_cli_known(const char *const *names, const char *s);
void hws_cli_print_list(FILE *f, const char *label, int width, const char *const *names,
			const char *after);
#endif
