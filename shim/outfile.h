#ifndef HWS_PRELOAD_OUTFILE_H
#define HWS_PRELOAD_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

/* Open an output file of this process for writing (outfile.c): spec with %p
 * (pid), %h (host name) and %% expanded; when a live process holds that name,
 * NAME.<pid>, then NAME.<host>.<pid>.  The file stays locked (flock) until
 * the process ends.  The stream, with the name taken in used, or NULL with
 * errno set (and hws_last_error()). */
FILE *hws_open_output(const char *spec, char *used, size_t used_len);

#endif
