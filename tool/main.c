/* hwsync: the command-line front end.  Dispatches to one subcommand. */
#include <stdio.h>
#include <string.h>
#include "tool/cli.h"

static const char usage[] =
"usage: hwsync <command> [options]\n"
"\n"
"Thread synchronization that knows the hardware it waits on.\n"
"\n"
"commands:\n"
"  info     describe this machine: CPU features, timer, topology, wait policies\n"
"  bench    run the experiments of the papers, side by side with the peers\n"
"  report   turn bench JSON into plots and a readable report\n"
"  run      run a program with hwsync under its pthread and OpenMP calls\n"
"  compare  run a program natively and under hwsync settings: which is fastest\n"
"  profile  print a contention profile (hwsync run --profile=FILE)\n"
"\n"
"`hwsync <command> --help` describes each command.\n";

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("hwsync %s\n", HWS_VERSION);
		return 0;
	}
	static const struct { const char *name; int (*fn)(int, char **); } cmds[] = {
		{ "info", hws_cmd_info },
		{ "bench", hws_cmd_bench },
		{ "report", hws_cmd_report },
		{ "run", hws_cmd_run },
		{ "compare", hws_cmd_compare },
		{ "profile", hws_cmd_profile },
	};
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "hwsync: unknown command '%s' (try: hwsync --help)\n", argv[1]);
	return 2;
}
