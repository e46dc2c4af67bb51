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
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <stdbool.h>
#include <unistd.h>
#include <sys/stat.h>
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

/* ceil(quota / period) from a cgroup v2 cpu.max or the two v1 files; 0 when
 * the file is missing or says "max" / -1. */
static unsigned quota_cpus_v2(const char *dir)
{
	char path[8480], q[32];
	unsigned long long quota, period;
	snprintf(path, sizeof path, "%s/cpu.max", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int n = fscanf(f, "%31s %llu", q, &period);
	fclose(f);
	if (n != 2 || !strcmp(q, "max") || sscanf(q, "%llu", &quota) != 1 || !period)
		return 0;
	return (unsigned)((quota + period - 1) / period) ?: 1;
}

static unsigned quota_cpus_v1(const char *dir)
{
	char path[8480];
	long long quota = -1, period = 0;
	snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%lld", &quota) != 1)
		quota = -1;
	fclose(f);
	snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
	if ((f = fopen(path, "re"))) {
		if (fscanf(f, "%lld", &period) != 1)
			period = 0;
		fclose(f);
	}
	if (quota <= 0 || period <= 0)
		return 0;
	return (unsigned)((quota + period - 1) / period) ?: 1;
}

/* Where the v1 hierarchy holding the cpu controller is: a directory named
 * after the controllers it was mounted with ("cpu,cpuacct"), which most
 * distributions also link as "cpu"; either name may be the only one. */
static void v1_base(char *base, size_t len, const char *mount, const char *ctrls)
{
	struct stat st;
	snprintf(base, len, "%s/%s", mount, ctrls);
	if (stat(base, &st) || !S_ISDIR(st.st_mode))
		snprintf(base, len, "%s/cpu", mount);
}

unsigned hws_cgroup_cpu_limit(const char *mount, const char *self_cgroup)
{
	char line[4096], base[4352], dir[8448];
	unsigned best = 0;
	FILE *f = fopen(self_cgroup, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		/* "ID:CONTROLLERS:PATH"; v2 is "0::PATH", v1's cpu line names cpu. */
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		char *ctrl = c1 + 1, *path = c2 + 1, ctrls[256];
		path[strcspn(path, "\n")] = '\0';
		snprintf(ctrls, sizeof ctrls, "%s", ctrl);   /* strtok_r cuts ctrl */
		bool v2 = !*ctrl, v1 = false;
		for (char *save, *t = strtok_r(ctrl, ",", &save); t; t = strtok_r(NULL, ",", &save))
			v1 |= !strcmp(t, "cpu");
		if (!v2 && !v1)
			continue;
		if (v2)
			snprintf(base, sizeof base, "%s", mount);
		else
			v1_base(base, sizeof base, mount, ctrls);
		/* This cgroup and each one above it, the mount's root last. */
		size_t len = strlen(path);
		while (len && path[len - 1] == '/')
			path[--len] = '\0';
		for (;;) {
			snprintf(dir, sizeof dir, "%s%s", base, path);
			unsigned n = v2 ? quota_cpus_v2(dir) : quota_cpus_v1(dir);
			if (n && (!best || n < best))
				best = n;
			char *slash = strrchr(path, '/');
			if (!slash)
				break;
			*slash = '\0';
		}
	}
	fclose(f);
	return best;
}

static _Atomic unsigned usable;

unsigned hws_usable_cpus_refresh(void)
{
	unsigned n = affinity_cpus();
	unsigned q = hws_cgroup_cpu_limit("/sys/fs/cgroup", "/proc/self/cgroup");
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
