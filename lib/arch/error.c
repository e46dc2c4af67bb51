/* Per-thread detail of the last failure: the library never prints, so a
 * caller that wants to tell the user why asks hws_last_error(). */
#include <stdarg.h>
#include <stdio.h>
#include "arch/internal.h"

static _Thread_local char last_error[256];

int hws_fail(int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof last_error, fmt, ap);
	va_end(ap);
	return err;
}

const char *hws_last_error(void)
{
	return last_error[0] ? last_error : "no error";
}
