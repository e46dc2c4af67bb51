/* Whether the machine's CPUs are all taken: more runnable threads than
 * online CPUs.  A waiter that spins then keeps a runnable thread (perhaps the
 * holder it waits for) off a CPU, as the Linux kernel's own mutexes avoid by
 * spinning only while the owner runs.  User space cannot see whether one
 * thread runs, but the kernel publishes how many threads are runnable: the
 * fourth field of /proc/loadavg, "RUNNABLE/TOTAL", counted at the moment of
 * reading (the caller, which runs, included).
 *
 * The count is sampled at most once per SAMPLE_NS, by whichever caller finds
 * the sample stale (one open, read and close: about 4 us, so at most a few
 * tenths of a percent of one CPU while some lock is contended), and read
 * with one relaxed load otherwise.  The file is read with raw system calls
 * into a small stack buffer: callers are lock slow paths, on stacks as small
 * as PTHREAD_STACK_MIN.  Where /proc cannot be read the CPUs count as not
 * busy, which keeps the locks' behaviour without this signal. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>
#include <hwsync/arch.h>

/* Long against the 4 us a sample costs, short against the phases of a
 * program (a burst of contention lasts many milliseconds). */
#define SAMPLE_NS 1000000ull

static _Atomic uint64_t sampled_at;   /* hws_now_ns() of the last sample */
static _Atomic int busy;              /* its verdict */
static _Atomic int forced = -1;       /* tests: -1 = measure, else the verdict */

unsigned hws_loadavg_runnable(const char *s)
{
	/* "0.12 0.34 0.56 RUNNABLE/TOTAL LASTPID" */
	for (int field = 0; field < 3; field++) {
		while (*s && *s != ' ')
			s++;
		while (*s == ' ')
			s++;
	}
	unsigned n = 0;
	bool digits = false;
	for (; *s >= '0' && *s <= '9' && n < 100000000u; s++, digits = true)
		n = n * 10 + (unsigned)(*s - '0');
	return digits && *s == '/' ? n : 0;
}

/* Runnable threads now, 0 if unknown.  errno is left as it was: the
 * caller is a lock's wait, inside the program's call. */
static unsigned runnable_now(void)
{
	char buf[96];
	int fd, saved = errno;
	do
		fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		errno = saved;
		return 0;
	}
	ssize_t n;
	do
		n = read(fd, buf, sizeof buf - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	errno = saved;
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return hws_loadavg_runnable(buf);
}

static unsigned online_cpus(void)
{
	static _Atomic unsigned online;
	/* relaxed: a constant of the machine; racing first callers store the
	 * same value. */
	unsigned n = atomic_load_explicit(&online, memory_order_relaxed);
	if (!n) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		n = c > 0 ? (unsigned)c : 1;
		atomic_store_explicit(&online, n, memory_order_relaxed);
	}
	return n;
}

static bool verdict(void)
{
	/* relaxed: every value is a complete verdict; nothing else is read
	 * through it. */
	int f = atomic_load_explicit(&forced, memory_order_relaxed);
	return f >= 0 ? f : atomic_load_explicit(&busy, memory_order_relaxed);
}

bool hws_cpus_busy(uint64_t now_ns)
{
	/* relaxed: as in verdict(); the time stamp only elects the
	 * caller that samples. */
	uint64_t at = atomic_load_explicit(&sampled_at, memory_order_relaxed);
	if (now_ns - at >= SAMPLE_NS &&
	    atomic_compare_exchange_strong_explicit(&sampled_at, &at, now_ns,
						    memory_order_relaxed, memory_order_relaxed)) {
		unsigned r = runnable_now();
		/* relaxed: as above. */
		atomic_store_explicit(&busy, r > online_cpus(), memory_order_relaxed);
	}
	return verdict();
}

void hws_cpus_busy_force(int verdict)
{
	/* relaxed: a test switch, set before the threads it concerns start. */
	atomic_store_explicit(&forced, verdict < 0 ? -1 : verdict != 0, memory_order_relaxed);
}
