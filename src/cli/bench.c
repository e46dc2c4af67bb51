/* hwsync bench: not available yet (see the open issue). */
#include <stdio.h>
#include "cli/cli.h"

int hws_cmd_bench(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "hwsync bench: not available yet in this version\n");
	return 2;
}
