/* What the shim says: its one-line messages on stderr. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include "shim/say.h"

void hws_shim_say(const char *fmt, ...)
{
	char buf[512];
	int n = snprintf(buf, sizeof buf, "hwsync: ");
	va_list ap;
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n++] = '\n';
	ssize_t w = write(2, buf, (size_t)n);
	(void)w;
}
