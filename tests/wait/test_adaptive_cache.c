/* The adaptive policy's per-machine cache: where it lives (HWSYNC_CACHE_DIR,
 * XDG_CACHE_HOME, HOME), write and read back, and every way a cache can be
 * bad (missing, another machine's, malformed, unreadable, unwritable): the
 * reader refuses it and says why, and never fails or prints.
 *   test_adaptive_cache          unit checks, then the policy reads a good cache
 *   test_adaptive_cache corrupt  a process whose cache is corrupt: the policy
 *                                uses the default, works, and prints nothing */
#include "common/test.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <hwsync/wait.h>
#include "wait/internal.h"

static char dir[] = "/tmp/hws-cache-XXXXXX";
static char path[4096];

static void put(const char *file, const char *text)
{
	FILE *f = fopen(file, "w");
	CHECK(f);
	CHECK(fwrite(text, 1, strlen(text), f) == strlen(text));
	CHECK(fclose(f) == 0);
}

/* The good file's text with `from` replaced by `to`. */
static void put_edited(const char *good, const char *from, const char *to)
{
	char buf[8192];
	const char *at = strstr(good, from);
	CHECK(at);
	snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
	put(path, buf);
}

static void expect_bad(const char *what, int err, const char *state_has)
{
	struct hws_adaptive_calibration c;
	char state[HWS_CACHE_STATE_MAX];
	int rc = hws_adaptive_cache_read(&c, state, sizeof state);
	if (rc != err || !strstr(state, state_has)) {
		fprintf(stderr, "%s: rc %d (want %d), state '%s' (want '%s')\n", what, rc, err,
			state, state_has);
		exit(1);
	}
	CHECK_EQ(c.handoff_ns, 0);
}

static void ping_pong_works(void);

static int corrupt_process(void)
{
	struct hws_adaptive_calibration c;
	char err_file[sizeof dir + 16];
	int fd, saved;

	/* Whatever the library writes to stderr lands in a file we check. */
	snprintf(err_file, sizeof err_file, "%s/stderr", dir);
	fd = open(err_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	saved = dup(2);
	CHECK(dup2(fd, 2) == 2);
	CHECK_EQ(hws_adaptive_cache_path(path, sizeof path), 0);
	put(path, "hwsync-adaptive-calibration 1\nkey garbage\x01\x02\nhandoff_ns -5\n");
	hws_adaptive_current(&c);
	CHECK_EQ(c.source, HWS_ADAPTIVE_DEFAULT);
	CHECK_EQ(c.spin_ns, 100000);
	ping_pong_works();
	fflush(stderr);
	dup2(saved, 2);
	struct stat st;
	CHECK_EQ(stat(err_file, &st), 0);
	CHECK_EQ(st.st_size, 0);
	CHECK(!strncmp(hws_adaptive_cache_state(), "ignored ", 8));
	unlink(err_file);
	unlink(path);
	rmdir(dir);
	return 0;
}

static _Atomic uint32_t word;
static hws_wait_t pol;

static void *waiter(void *arg)
{
	(void)arg;
	/* acquire: pairs with the release store in ping_pong_works. */
	while (atomic_load_explicit(&word, memory_order_acquire) == 0)
		hws_wait_while_eq32(&word, 0, &pol, HWS_FOREVER);
	return NULL;
}

/* One wait that outlasts the spin budget (so it sleeps) and is woken. */
static void ping_pong_works(void)
{
	pthread_t th;
	struct timespec ts = { 0, 5000000 };

	CHECK_EQ(hws_wait_init(&pol, "adaptive"), 0);
	atomic_store(&word, 0);
	CHECK_EQ(pthread_create(&th, NULL, waiter, NULL), 0);
	nanosleep(&ts, NULL);
	/* release: pairs with the waiter's acquire load. */
	atomic_store_explicit(&word, 1, memory_order_release);
	hws_wake32(&word, HWS_WAKE_ALL);
	CHECK_EQ(pthread_join(th, NULL), 0);
}

int main(int argc, char **argv)
{
	struct hws_adaptive_calibration c, m = { .handoff_ns = 7000, .futex_wake_ns = 200,
						  .futex_wait_ns = 300, .yield_ns = 900 };
	char state[HWS_CACHE_STATE_MAX], other[4096], good[4096], written[4096], sub[4200];
	FILE *f;

	CHECK(mkdtemp(dir));
	setenv("HWSYNC_CACHE_DIR", dir, 1);
	if (argc > 1 && !strcmp(argv[1], "corrupt"))
		return corrupt_process();

	/* Where: the override, then XDG_CACHE_HOME (absolute only), then HOME. */
	setenv("XDG_CACHE_HOME", "/xdg", 1);
	setenv("HOME", "/home/someone", 1);
	CHECK_EQ(hws_adaptive_cache_path(path, sizeof path), 0);
	CHECK(!strncmp(path, dir, strlen(dir)) && !strncmp(path + strlen(dir), "/adaptive-", 10));
	unsetenv("HWSYNC_CACHE_DIR");
	CHECK_EQ(hws_adaptive_cache_path(other, sizeof other), 0);
	CHECK(!strncmp(other, "/xdg/hwsync/adaptive-", 21));
	setenv("XDG_CACHE_HOME", "relative/dir", 1);
	CHECK_EQ(hws_adaptive_cache_path(other, sizeof other), 0);
	CHECK(!strncmp(other, "/home/someone/.cache/hwsync/adaptive-", 37));
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	CHECK_EQ(hws_adaptive_cache_path(other, sizeof other), ENOENT);
	CHECK(strstr(hws_last_error(), "HWSYNC_CACHE_DIR"));
	expect_bad("no directory at all", ENOENT, "HOME");
	setenv("HWSYNC_CACHE_DIR", dir, 1);

	/* Missing. */
	expect_bad("missing", ENOENT, "none at ");

	/* Written and read back; nothing but measurements is stored. */
	m.handoff_ns = 0;
	CHECK_EQ(hws_adaptive_cache_write(&m, NULL, 0), EINVAL);
	m.handoff_ns = 7000;
	CHECK_EQ(hws_adaptive_cache_write(&m, written, sizeof written), 0);
	CHECK(!strcmp(written, path));
	CHECK_EQ(hws_adaptive_cache_read(&c, state, sizeof state), 0);
	CHECK(!strncmp(state, "read ", 5));
	CHECK_EQ(c.handoff_ns, 7000);
	CHECK_EQ(c.futex_wake_ns, 200);
	CHECK_EQ(c.futex_wait_ns, 300);
	CHECK_EQ(c.yield_ns, 900);
	f = fopen(path, "r");
	CHECK(f);
	size_t n = fread(good, 1, sizeof good - 1, f);
	good[n] = 0;
	fclose(f);
	CHECK(!strncmp(good, "hwsync-adaptive-calibration 1\nkey ", 34));

	/* Another machine's file at this name (say, a copied home directory). */
	put_edited(good, "key ", "key other-cpu|");
	expect_bad("another machine", ESTALE, "written for another machine");

	/* Malformed in every way a file can be. */
	put(path, "");
	expect_bad("empty", EINVAL, "not a calibration cache");
	put(path, "hwsync-adaptive-calibration 2\n");
	expect_bad("other version", EINVAL, "not a calibration cache");
	put_edited(good, "handoff_ns 7000\n", "");
	expect_bad("field missing", EINVAL, "malformed value");
	put_edited(good, "handoff_ns 7000", "handoff_ns 2000000000");
	expect_bad("out of range", EINVAL, "malformed value");
	put_edited(good, "handoff_ns 7000", "handoff_ns 7e3");
	expect_bad("not a number", EINVAL, "malformed value");
	put_edited(good, "handoff_ns 7000", "handoff_ns 0");
	expect_bad("zero hand-off", EINVAL, "handoff_ns is 0");
	put_edited(good, "yield_ns 900\n", "yield_ns 900");
	expect_bad("truncated", EINVAL, "malformed value");
	put_edited(good, "yield_ns 900\n", "yield_ns 900\nspin_ns 1\n");
	expect_bad("trailing text", EINVAL, "unexpected text");
	put_edited(good, "key ", "key \x01\x02\n");
	expect_bad("key garbage", ESTALE, "another machine");
	{
		char big[6000];
		memset(big, 'x', sizeof big - 1);
		big[sizeof big - 1] = 0;
		put(path, big);
		expect_bad("too long", EINVAL, "too long");
	}
	{
		int fd = open(path, O_WRONLY | O_TRUNC);
		CHECK(fd >= 0);
		CHECK(write(fd, "hwsync\0x\n", 9) == 9);
		close(fd);
		expect_bad("binary", EINVAL, "not text");
	}

	/* Unreadable: a directory where the file should be. */
	unlink(path);
	CHECK_EQ(mkdir(path, 0700), 0);
	expect_bad("a directory", EISDIR, "cannot read it");
	/* ... and so unwritable too (rename over a directory fails). */
	CHECK(hws_adaptive_cache_write(&m, NULL, 0) != 0);
	CHECK(strstr(hws_last_error(), path));
	rmdir(path);

	/* Unwritable: the directory lies below a regular file. */
	snprintf(sub, sizeof sub, "%s/file", dir);
	put(sub, "x");
	strcat(sub, "/cache");
	setenv("HWSYNC_CACHE_DIR", sub, 1);
	CHECK_EQ(hws_adaptive_cache_write(&m, NULL, 0), ENOTDIR);
	CHECK(strstr(hws_last_error(), "cannot create the cache directory"));
	expect_bad("below a file", ENOTDIR, "cannot open it");

	/* Directories are created on write, private to the user. */
	snprintf(sub, sizeof sub, "%s/a/b", dir);
	setenv("HWSYNC_CACHE_DIR", sub, 1);
	CHECK_EQ(hws_adaptive_cache_write(&m, written, sizeof written), 0);
	struct stat st;
	CHECK_EQ(stat(sub, &st), 0);
	CHECK_EQ(st.st_mode & 0777, 0700);
	unlink(written);
	rmdir(sub);
	snprintf(sub, sizeof sub, "%s/a", dir);
	rmdir(sub);

	/* Finally the policy itself, first use in this process: the good cache
	 * is its budget (spin = 2 * 7000 ns, pause = 2 * 900 ns). */
	setenv("HWSYNC_CACHE_DIR", dir, 1);
	CHECK_EQ(hws_adaptive_cache_write(&m, NULL, 0), 0);
	hws_adaptive_current(&c);
	CHECK_EQ(c.source, HWS_ADAPTIVE_CACHE);
	CHECK_EQ(c.handoff_ns, 7000);
	CHECK_EQ(c.spin_ns, 14000);
	CHECK_EQ(c.pause_ns, 1800);
	CHECK(strstr(c.rule, "calibration cache"));
	CHECK(!strncmp(hws_adaptive_cache_state(), "read ", 5));
	ping_pong_works();

	snprintf(sub, sizeof sub, "%s/file", dir);
	unlink(sub);
	unlink(path);
	CHECK_EQ(rmdir(dir), 0);
	return 0;
}
