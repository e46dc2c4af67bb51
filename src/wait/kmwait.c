/* kmwait policy: privileged MONITOR/MWAIT through the hwsync-mwait driver
 * (kmod/).  Available only when /dev/hwsync-mwait opens and answers. */
#include <fcntl.h>
#include <unistd.h>
#include "wait/internal.h"

#define KMWAIT_DEVICE "/dev/hwsync-mwait"

int hws_kmwait_available(const char **why)
{
	int fd = open(KMWAIT_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			*why = "no " KMWAIT_DEVICE ": the hwsync-mwait module is not loaded"
			       " (see kmod/README.md)";
		else if (errno == EACCES || errno == EPERM)
			*why = "no permission to open " KMWAIT_DEVICE;
		else
			*why = "cannot open " KMWAIT_DEVICE;
		return ENOTSUP;
	}
	close(fd);
	*why = "the kmwait user-space side is not available yet in this version";
	return ENOTSUP;
}

int hws_wait_kmwait(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl)
{
	(void)a, (void)old, (void)w, (void)dl;
	return ENOTSUP;
}
