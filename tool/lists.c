/* Lists of names for messages and help texts, made at run time from the
 * library's registries (hws_lock_kinds, hws_barrier_kinds, hws_wait_kinds). */
#include <stdio.h>
#include <string.h>
#include "tool/cli.h"

void hws_cli_join(const char *const *names, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	for (; names && *names && n + 1 < len; names++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "", *names);
	if (!buf[0])
		snprintf(buf, len, "none in this build");
}

int hws_cli_known(const char *const *names, const char *s)
{
	for (; names && *names; names++)
		if (!strcmp(*names, s))
			return 1;
	return 0;
}

void hws_cli_print_list(FILE *f, const char *label, int width, const char *const *names,
			const char *after)
{
	char text[1024];
	int col = fprintf(f, "%-*s", width, label);

	hws_cli_join(names, text, sizeof text);
	if (after)
		snprintf(text + strlen(text), sizeof text - strlen(text), " %s", after);
	for (char *save = NULL, *w = strtok_r(text, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		int n = (int)strlen(w);
		if (col > width && col + 1 + n > 79)
			col = fprintf(f, "\n%*s", width, "") - 1;
		col += fprintf(f, "%s%s", col > width ? " " : "", w);
	}
	fputc('\n', f);
}
