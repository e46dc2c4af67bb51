/* hwsync report: not available yet (see the open issue). */
#include <stdio.h>
#include "cli/cli.h"

int hws_cmd_report(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "hwsync report: not available yet in this version\n");
	return 2;
}
