/* kmwait policy: privileged MONITOR/MWAIT through the hwsync-mwait driver
 * (kmod/, docs/kmwait.md).  Available when /dev/hwsync-mwait opens and the
 * module answers its INFO ioctl with our ABI version.
 *
 * The word of hws_wait_while_eq32() lives in ordinary user memory, so the
 * waiter uses HWS_MWAIT_IOC_WAIT_ADDR: the driver pins the word's page, arms
 * MONITOR on the same physical line through the kernel's mapping and MWAITs;
 * a plain store by the waker ends the MWAIT, so hws_wake32() needs nothing
 * extra.  Each call is bounded by the policy's max (default 100 us): the
 * re-check here between calls bounds the cost of anything the hardware
 * misses (a wake-up lost to an interrupt window, a page the process
 * replaced under the pin). */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "wait/internal.h"
#include <hwsync/kmwait_abi.h>

/* The device, opened once by the first successful availability check and
 * kept for the life of the process; -1 until then. */
static _Atomic int kmwait_fd = -1;

static _Thread_local char why_buf[200];

static int unavailable(const char **why, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int unavailable(const char **why, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why_buf, sizeof why_buf, fmt, ap);
	va_end(ap);
	*why = why_buf;
	return ENOTSUP;
}

int hws_kmwait_available(const char **why)
{
#if defined(__x86_64__)
	struct hws_mwait_info info;
	int expected = -1, fd, err;

	/* acquire: pairs with the release CAS below (the fd is ready). */
	if (atomic_load_explicit(&kmwait_fd, memory_order_acquire) >= 0)
		return 0;
	fd = open(HWS_MWAIT_DEVICE, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		if (err == EACCES || err == EPERM)
			return unavailable(why, "no permission to open " HWS_MWAIT_DEVICE
					   " (root only unless a udev rule grants a group;"
					   " see docs/kmwait.md)");
		if (err != ENOENT && err != ENODEV && err != ENXIO)
			return unavailable(why, "cannot open " HWS_MWAIT_DEVICE ": %s",
					   strerror(err));
		if (access("/sys/module/" HWS_MWAIT_MODULE, F_OK) == 0)
			return unavailable(why, "module " HWS_MWAIT_MODULE " is loaded but there is"
					   " no " HWS_MWAIT_DEVICE " (%s; devtmpfs or udev missing?)",
					   strerror(err));
		return unavailable(why, "no " HWS_MWAIT_DEVICE ": module " HWS_MWAIT_MODULE
				   " is not loaded (insmod kmod/hwsync_mwait.ko;"
				   " see docs/kmwait.md)");
	}
	if (ioctl(fd, HWS_MWAIT_IOC_INFO, &info) != 0) {
		err = errno;
		close(fd);
		return unavailable(why, HWS_MWAIT_DEVICE " does not answer the INFO ioctl (%s):"
				   " not the " HWS_MWAIT_MODULE " module?", strerror(err));
	}
	if (info.abi_version != HWS_MWAIT_ABI_VERSION) {
		close(fd);
		return unavailable(why, "module " HWS_MWAIT_MODULE " speaks ABI %u, this library"
				   " ABI %u: load the module built with this hwsync",
				   info.abi_version, HWS_MWAIT_ABI_VERSION);
	}
	/* release: publishes the open fd; a thread that lost the race closes its own. */
	if (!atomic_compare_exchange_strong_explicit(&kmwait_fd, &expected, fd,
						     memory_order_release, memory_order_acquire))
		close(fd);
	return 0;
#else
	return unavailable(why, "kmwait drives x86 MONITOR/MWAIT through the hwsync-mwait module;"
			   " this is not x86-64");
#endif
}

/* What the driver cannot wait on (a read-only page, say): poll with PAUSE
 * until the slice ends, so the contract (0 or ETIMEDOUT) still holds. */
static void poll_slice(const _Atomic uint32_t *a, uint32_t old, uint64_t end_ns)
{
	uint64_t polls = 0;

	/* acquire: pairs with the store that changed the word. */
	while (atomic_load_explicit(a, memory_order_acquire) == old) {
		if (++polls % HWS_POLLS_PER_CLOCK == 0 && hws_now_ns() >= end_ns)
			break;
		hws_cpu_relax();
	}
	hws_wait_tls.polls += polls;
}

int hws_wait_kmwait(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl)
{
	/* acquire: pairs with the release CAS in hws_kmwait_available(). */
	int fd = atomic_load_explicit(&kmwait_fd, memory_order_acquire);

	for (;;) {
		struct hws_mwait_wait arg = { .addr = (uintptr_t)a, .expected = old };
		uint64_t now;

		/* acquire: pairs with the store that changed the word. */
		if (atomic_load_explicit(a, memory_order_acquire) != old)
			return 0;
		now = hws_now_ns();
		if (dl != HWS_FOREVER && now >= dl)
			return ETIMEDOUT;
		arg.timeout_ns = w->max_ns;
		if (dl != HWS_FOREVER && dl - now < arg.timeout_ns)
			arg.timeout_ns = dl - now;
		hws_wait_tls.polls++;
		if (fd < 0) {
			poll_slice(a, old, now + arg.timeout_ns);
			continue;
		}
		hws_wait_tls.syscalls++;
		if (ioctl(fd, HWS_MWAIT_IOC_WAIT_ADDR, &arg) != 0 &&
		    errno != ETIMEDOUT && errno != EINTR)
			poll_slice(a, old, now + arg.timeout_ns);
	}
}
