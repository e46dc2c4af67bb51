/* How many CPUs this process can really run on: the CPUs of the calling
 * thread's and the main thread's affinity masks together (a program that pins
 * each thread to its own CPU is not a one-CPU process because the first
 * caller was pinned), capped by the CPU bandwidth of its cgroup and of
 * every cgroup above it (cgroup v2 cpu.max "QUOTA PERIOD": ceil(QUOTA /
 * PERIOD) CPUs' worth of time; "max" = no cap).  A container given two CPUs
 * of a 64-CPU machine then counts 2, as does `taskset -c 0,1`.  Locks use it
 * to decide how many waiters may spin at once.
 *
 * Read once per process (hws_usable_cpus) because a lock asks on its slow
 * path; hws_usable_cpus_refresh re-reads, for a program that changes its
 * affinity and for tests.  cgroup v1 (cpu.cfs_quota_us) is read too.
 *
 * The walk includes the root of the mount: in a container without its own
 * cgroup namespace, /proc/self/cgroup names the host's path while the
 * container's own cgroup (and its limit) is mounted as the root. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <hwsync/arch.h>

static unsigned affinity_cpus(void)
{
	cpu_set_t set, main_set;
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
		/* the main thread's id is the process id */
		if (sched_getaffinity(getpid(), sizeof main_set, &main_set) == 0)
			CPU_OR(&set, &set, &main_set);
		return (unsigned)CPU_COUNT(&set);
	}
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

/* The files are read with raw system calls into buffers of a few hundred
 * bytes, walking the cgroup path one directory at a time (openat from the
 * mount), never with stdio or malloc: the first call may come from a
 * waiter's slow path on a thread with a PTHREAD_STACK_MIN stack (16 KiB),
 * or inside a lock that a replacement allocator holds. */

static int open_at(int dir, const char *name, int flags)
{
	int fd;
	do
		fd = openat(dir, name, flags | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	return fd;
}

/* The start of a small file (a cgroup limit: one line), NUL-terminated;
 * false when it is missing or empty. */
static bool read_small(int dir, const char *name, char *buf, size_t len)
{
	int fd = open_at(dir, name, O_RDONLY);
	size_t have = 0;
	if (fd < 0)
		return false;
	while (have + 1 < len) {
		ssize_t n = read(fd, buf + have, len - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
	}
	close(fd);
	buf[have] = '\0';
	return have > 0;
}

/* A decimal number at *p (optionally negative), moving *p past it. */
static bool parse_num(const char **p, long long *out)
{
	const char *s = *p;
	bool neg = *s == '-';
	unsigned long long v = 0;
	s += neg;
	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (unsigned long long)LLONG_MAX / 10)
			return false;
		v = v * 10 + (unsigned)(*s - '0');
	}
	if (v > (unsigned long long)LLONG_MAX)
		return false;
	*out = neg ? -(long long)v : (long long)v;
	*p = s;
	return true;
}

static unsigned ceil_cpus(long long quota, long long period)
{
	if (quota <= 0 || period <= 0)
		return 0;
	unsigned long long n = ((unsigned long long)quota + (unsigned long long)period - 1) /
			       (unsigned long long)period;
	return n > UINT_MAX ? UINT_MAX : (unsigned)n ?: 1;
}

/* ceil(quota / period) from a cgroup v2 cpu.max ("QUOTA PERIOD") or the two
 * v1 files of the directory DIR; 0 when a file is missing or says "max" /
 * -1. */
static unsigned quota_cpus_v2(int dir)
{
	char buf[64];
	const char *p = buf;
	long long quota, period;
	if (!read_small(dir, "cpu.max", buf, sizeof buf) || !parse_num(&p, &quota))
		return 0;   /* also "max" */
	while (*p == ' ' || *p == '\t')
		p++;
	if (!parse_num(&p, &period))
		return 0;
	return ceil_cpus(quota, period);
}

static unsigned quota_cpus_v1(int dir)
{
	char buf[32];
	const char *p = buf;
	long long quota, period;
	if (!read_small(dir, "cpu.cfs_quota_us", buf, sizeof buf) || !parse_num(&p, &quota))
		return 0;
	p = buf;
	if (!read_small(dir, "cpu.cfs_period_us", buf, sizeof buf) || !parse_num(&p, &period))
		return 0;
	return ceil_cpus(quota, period);
}

/* /proc/PID/cgroup, a character at a time through a small buffer. */
struct reader {
	int fd;
	unsigned pos, len;
	char buf[128];
};

static int next_char(struct reader *r)
{
	if (r->pos == r->len) {
		ssize_t n;
		do
			n = read(r->fd, r->buf, sizeof r->buf);
		while (n < 0 && errno == EINTR);
		if (n <= 0)
			return EOF;
		r->len = (unsigned)n;
		r->pos = 0;
	}
	return (unsigned char)r->buf[r->pos++];
}

static int skip_line(struct reader *r, int ch)
{
	while (ch != '\n' && ch != EOF)
		ch = next_char(r);
	return ch;
}

/* The cgroup directory at the mount's root, then each one below it on the
 * way to this line's cgroup: the smallest limit seen, or BEST.  The path is
 * read a component at a time (a cgroup path may be as long as PATH_MAX); a
 * directory that is not there (a host path seen from inside a container)
 * ends the walk.  Returns the character that ended the line. */
static int walk(struct reader *r, int base, bool v2, unsigned *best)
{
	char name[256];   /* NAME_MAX + 1 */
	size_t n = 0;
	int dir = base, ch = 0;
	for (;;) {
		unsigned q = v2 ? quota_cpus_v2(dir) : quota_cpus_v1(dir);
		if (q && (!*best || q < *best))
			*best = q;
		if (ch == '\n' || ch == EOF) {   /* that was the line's cgroup */
			if (dir != base)
				close(dir);
			return ch;
		}
		/* the next non-empty component */
		n = 0;
		while ((ch = next_char(r)) != '\n' && ch != EOF) {
			if (ch == '/') {
				if (n)
					break;
				continue;
			}
			if (n + 1 >= sizeof name)
				break;   /* longer than NAME_MAX: no such directory */
			name[n++] = (char)ch;
		}
		int sub = -1;
		if (n && n + 1 < sizeof name) {
			name[n] = '\0';
			sub = open_at(dir, name, O_PATH | O_DIRECTORY);
		}
		if (dir != base)
			close(dir);
		if (sub < 0)
			return skip_line(r, ch);
		dir = sub;
	}
}

unsigned hws_cgroup_cpu_limit(const char *mount, const char *self_cgroup)
{
	struct reader r = { .fd = open_at(AT_FDCWD, self_cgroup, O_RDONLY) };
	char ctrls[128], tok[8];
	unsigned best = 0;
	int mnt, ch = 0;
	if (r.fd < 0)
		return 0;
	mnt = open_at(AT_FDCWD, mount, O_PATH | O_DIRECTORY);
	/* Lines "ID:CONTROLLERS:PATH"; v2 is "0::PATH", v1's cpu line names cpu
	 * among its comma-separated controllers. */
	while (mnt >= 0 && ch != EOF) {
		size_t nc = 0, nt = 0;
		bool v1 = false, too_long = false;
		while ((ch = next_char(&r)) != ':' && ch != '\n' && ch != EOF)
			;   /* the hierarchy ID */
		if (ch != ':') {
			ch = skip_line(&r, ch);
			continue;
		}
		while ((ch = next_char(&r)) != ':' && ch != '\n' && ch != EOF) {
			if (nc + 1 < sizeof ctrls)
				ctrls[nc++] = (char)ch;
			else
				too_long = true;
			if (ch != ',') {
				tok[nt < sizeof tok - 1 ? nt : sizeof tok - 1] = (char)ch;
				nt++;
				continue;
			}
			v1 |= nt == 3 && !memcmp(tok, "cpu", 3);
			nt = 0;
		}
		v1 |= nt == 3 && !memcmp(tok, "cpu", 3);
		if (ch != ':' || (nc && !v1)) {
			ch = skip_line(&r, ch);
			continue;
		}
		int base;
		if (!nc) {
			base = mnt;
		} else {
			/* The v1 hierarchy holding cpu: a directory named after
			 * the controllers it was mounted with ("cpu,cpuacct"),
			 * which most distributions also link as "cpu"; either
			 * name may be the only one. */
			ctrls[nc] = '\0';
			base = too_long ? -1 : open_at(mnt, ctrls, O_PATH | O_DIRECTORY);
			if (base < 0)
				base = open_at(mnt, "cpu", O_PATH | O_DIRECTORY);
			if (base < 0) {
				ch = skip_line(&r, ch);
				continue;
			}
		}
		ch = walk(&r, base, !nc, &best);
		if (base != mnt)
			close(base);
	}
	if (mnt >= 0)
		close(mnt);
	close(r.fd);
	return best;
}

static _Atomic unsigned usable;

unsigned hws_usable_cpus_refresh(void)
{
	/* A lock's first contended wait reads this, inside the program's call:
	 * the files it tries that do not exist must not show in errno. */
	int saved = errno;
	unsigned n = affinity_cpus();
	unsigned q = hws_cgroup_cpu_limit("/sys/fs/cgroup", "/proc/self/cgroup");
	errno = saved;
	if (q && q < n)
		n = q;
	/* relaxed: a self-contained value; racing refreshes store the same. */
	atomic_store_explicit(&usable, n, memory_order_relaxed);
	return n;
}

unsigned hws_usable_cpus(void)
{
	/* relaxed: see hws_usable_cpus_refresh. */
	unsigned n = atomic_load_explicit(&usable, memory_order_relaxed);
	return n ? n : hws_usable_cpus_refresh();
}
