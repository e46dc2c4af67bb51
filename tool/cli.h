/* hwsync command-line tool: one file per subcommand. */
#ifndef HWS_CLI_H
#define HWS_CLI_H
int hws_cmd_info(int argc, char **argv);
int hws_cmd_bench(int argc, char **argv);
int hws_cmd_run(int argc, char **argv);
int hws_cmd_report(int argc, char **argv);
#endif
