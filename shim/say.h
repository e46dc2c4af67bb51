#ifndef HWS_PRELOAD_SAY_H
#define HWS_PRELOAD_SAY_H

/* One line on stderr, "hwsync: ..." (write(2), safe before main). */
void hws_shim_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
