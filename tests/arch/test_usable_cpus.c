/* hws_cgroup_cpu_limit over fake cgroup trees in a scratch directory (v2
 * cpu.max, v1 cfs quota and period, nesting, "max", missing files), and
 * hws_usable_cpus against this process's affinity mask.
 *
 *   test_usable_cpus        the cgroup cases and the affinity bounds
 *   test_usable_cpus one    also: this process may use exactly one CPU (run
 *                           it under `taskset -c 0`) */
#include "common/test.h"
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <hwsync/arch.h>

static char root[64];

/* Write TEXT to root/REL, creating the directories on the way. */
static void put(const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		CHECK(mkdir(path, 0700) == 0 || errno == EEXIST);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	CHECK(f);
	CHECK(fputs(text, f) >= 0);
	CHECK(fclose(f) == 0);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove root/REL and everything below it (no shell: this also runs under
 * qemu-user). */
static void rm_tree(const char *rel)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	if (access(path, F_OK) == 0)
		CHECK(nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0);
}

/* Also when a CHECK fails. */
static void remove_root(void)
{
	nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A fresh tree: root/self is the /proc/PID/cgroup file, root/fs the mount. */
static void fresh(const char *self)
{
	char fs[128];
	rm_tree("fs");
	rm_tree("self");
	snprintf(fs, sizeof fs, "%s/fs", root);
	CHECK(mkdir(fs, 0700) == 0);
	if (self)
		put("self", self);
}

static void expect(unsigned want, const char *what)
{
	char mount[128], self[128];
	snprintf(mount, sizeof mount, "%s/fs", root);
	snprintf(self, sizeof self, "%s/self", root);
	unsigned got = hws_cgroup_cpu_limit(mount, self);
	if (got != want) {
		fprintf(stderr, "%s: hws_cgroup_cpu_limit = %u, expected %u\n", what, got, want);
		exit(1);
	}
}

/* A cgroup path longer than the 4 KiB a line buffer would hold: 24 levels of
 * 200-character names, the limit at the deepest. */
static void deep_path(void)
{
	static char self[24 * 201 + 8];
	char name[201], dir[128];
	size_t n = (size_t)snprintf(self, sizeof self, "0::");
	memset(name, 'd', 200);
	name[200] = '\0';
	fresh(NULL);
	snprintf(dir, sizeof dir, "%s/fs", root);
	int fd[25];
	fd[0] = open(dir, O_DIRECTORY | O_RDONLY);
	CHECK(fd[0] >= 0);
	for (int i = 0; i < 24; i++) {
		CHECK(mkdirat(fd[i], name, 0700) == 0);
		fd[i + 1] = openat(fd[i], name, O_DIRECTORY | O_RDONLY);
		CHECK(fd[i + 1] >= 0);
		n += (size_t)snprintf(self + n, sizeof self - n, "/%s", name);
	}
	int f = openat(fd[24], "cpu.max", O_WRONLY | O_CREAT, 0600);
	CHECK(f >= 0);
	CHECK(write(f, "100000 100000\n", 14) == 14);
	close(f);
	snprintf(self + n, sizeof self - n, "\n");
	put("self", self);
	expect(1, "v2: a path of 4824 characters");
	/* nftw cannot remove a tree deeper than PATH_MAX */
	CHECK(unlinkat(fd[24], "cpu.max", 0) == 0);
	for (int i = 24; i-- > 0;) {
		close(fd[i + 1]);
		CHECK(unlinkat(fd[i], name, AT_REMOVEDIR) == 0);
	}
	close(fd[0]);
}

static void cgroup_cases(void)
{
	fresh("0::/a/b\n");
	put("fs/a/b/cpu.max", "max 100000\n");
	put("fs/a/cpu.max", "150000 100000\n");
	expect(2, "v2: 1.5 CPUs at the parent, none at the cgroup");

	put("fs/a/b/cpu.max", "50000 100000\n");
	expect(1, "v2: half a CPU below 1.5: the smallest");
	put("fs/a/b/cpu.max", "400000 100000\n");
	expect(2, "v2: 4 below 1.5: the smallest");
	put("fs/cpu.max", "100000 100000\n");
	expect(1, "v2: the mount's root counts (a container's own cgroup)");

	fresh("0::/a/b\n");
	put("fs/a/b/cpu.max", "max 100000\n");
	put("fs/a/cpu.max", "max 100000\n");
	expect(0, "v2: max everywhere");
	fresh("0::/a/b\n");
	expect(0, "v2: no cpu.max files");
	fresh("0::/\n");
	put("fs/cpu.max", "300000 100000\n");
	expect(3, "v2: the root cgroup itself");
	fresh("0::/a/\n");
	put("fs/a/cpu.max", "200000 50000\n");
	expect(4, "v2: trailing slash, other period");

	/* v1: the hierarchy is named after its controllers, "cpu" a link */
	fresh("12:memory:/x\n4:cpu,cpuacct:/x\n1:name=systemd:/x\n");
	put("fs/cpu,cpuacct/x/cpu.cfs_quota_us", "250000\n");
	put("fs/cpu,cpuacct/x/cpu.cfs_period_us", "100000\n");
	put("fs/memory/x/cpu.cfs_quota_us", "100000\n");   /* not the cpu line's */
	put("fs/memory/x/cpu.cfs_period_us", "100000\n");
	expect(3, "v1: cpu,cpuacct/x");
	fresh("4:cpu,cpuacct:/x/y\n");
	put("fs/cpu/x/cpu.cfs_quota_us", "100000\n");
	put("fs/cpu/x/cpu.cfs_period_us", "100000\n");
	put("fs/cpu/x/y/cpu.cfs_quota_us", "-1\n");
	put("fs/cpu/x/y/cpu.cfs_period_us", "100000\n");
	expect(1, "v1: only the cpu name, limit at the parent");
	fresh("3:cpuacct,cpu:/x\n");
	put("fs/cpuacct,cpu/x/cpu.cfs_quota_us", "-1\n");
	put("fs/cpuacct,cpu/x/cpu.cfs_period_us", "100000\n");
	expect(0, "v1: quota -1");
	fresh("3:cpu,cpuacct:/x\n");
	put("fs/cpu,cpuacct/x/cpu.cfs_quota_us", "200000\n");
	expect(0, "v1: no period file");
	fresh("2:cpuset:/x\n");
	put("fs/cpuset/x/cpu.cfs_quota_us", "100000\n");
	put("fs/cpuset/x/cpu.cfs_period_us", "100000\n");
	expect(0, "v1: cpuset is not cpu");

	/* hybrid: both lines count, the smaller wins */
	fresh("4:cpu:/s\n0::/s\n");
	put("fs/cpu/s/cpu.cfs_quota_us", "300000\n");
	put("fs/cpu/s/cpu.cfs_period_us", "100000\n");
	put("fs/s/cpu.max", "200000 100000\n");
	expect(2, "hybrid v1 + v2");

	fresh("0::/host/a/b");   /* no newline at the end */
	put("fs/cpu.max", "200000 100000\n");
	put("fs/host/cpu.max", "100000 100000");
	expect(1, "v2: last line without a newline");
	fresh("0::/gone/a\n");
	put("fs/cpu.max", "200000 100000\n");
	expect(2, "v2: a path not under the mount (a host path seen in a container)");
	fresh("0::/a//b/\n");
	put("fs/a/b/cpu.max", "100000 100000\n");
	expect(1, "v2: empty components");
	fresh("1:cpu:/x\n0::/y\n1:cpu:/z\n");
	put("fs/cpu/x/cpu.cfs_quota_us", "300000\n");
	put("fs/cpu/x/cpu.cfs_period_us", "100000\n");
	put("fs/y/cpu.max", "500000 100000\n");
	put("fs/cpu/z/cpu.cfs_quota_us", "400000\n");
	put("fs/cpu/z/cpu.cfs_period_us", "100000\n");
	expect(3, "each line's own path, three lines");
	deep_path();

	fresh(NULL);
	expect(0, "no cgroup file");
	fresh("garbage\n\n0:\n");
	expect(0, "unreadable lines");
}

static void affinity_cases(bool one)
{
	cpu_set_t set;
	CHECK(sched_getaffinity(0, sizeof set, &set) == 0);
	unsigned aff = (unsigned)CPU_COUNT(&set), n = hws_usable_cpus();
	if (n < 1 || n > aff) {
		fprintf(stderr, "hws_usable_cpus = %u, affinity has %u CPUs\n", n, aff);
		exit(1);
	}
	CHECK_EQ(hws_usable_cpus_refresh(), n);
	if (one) {
		CHECK_EQ(aff, 1);   /* the test must really run on one CPU */
		CHECK_EQ(n, 1);
	}
	/* one CPU of the mask for this thread: refresh sees it */
	int first = 0;
	while (!CPU_ISSET(first, &set))
		first++;
	cpu_set_t only;
	CPU_ZERO(&only);
	CPU_SET(first, &only);
	CHECK(sched_setaffinity(0, sizeof only, &only) == 0);
	CHECK_EQ(hws_usable_cpus_refresh(), 1);
	CHECK_EQ(hws_usable_cpus(), 1);
	CHECK(sched_setaffinity(0, sizeof set, &set) == 0);
	CHECK_EQ(hws_usable_cpus_refresh(), n);
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(root, sizeof root, "%.40s/hws-cgroup-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	CHECK(mkdtemp(root));
	atexit(remove_root);
	cgroup_cases();
	affinity_cases(argc > 1 && !strcmp(argv[1], "one"));
	printf("usable_cpus ok (%u usable CPUs)\n", hws_usable_cpus());
	return 0;
}
