/* Functional test of the hwsync_mwait driver and the kmwait policy.  Runs as
 * root inside the throw-away VM that tests/kmod/qemu_test.sh boots (never on
 * the host: it loads and unloads a kernel module).
 *
 *   kmwait_vmtest unloaded   the module is not loaded: kmwait is unavailable
 *                            and says so
 *   kmwait_vmtest loaded     everything else, ending with the module unloaded
 *   kmwait_vmtest storewake  the module loaded with exit_stats=1: a store to
 *                            the word, not an interrupt, ends the MWAIT (for
 *                            an emulator or CPU whose MONITOR watches the
 *                            line: tests/kmod/bochs_test.sh)
 *
 * Under QEMU's software emulation MWAIT does not watch the monitored line (it
 * behaves like PAUSE, or HLT with one vCPU), so a store does not end it: what
 * these tests rely on is the driver's loop re-checking the word after every
 * MWAIT/HLT exit, the timer tick at the latest.  They check behaviour (wake,
 * timeout, signal, rejection, unload safety), never speed. */
#include "common/test.h"
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <hwsync/wait.h>
#include <hwsync/kmwait_abi.h>

#define MS 1000000ull

static struct hws_mwait_info info;

static int dev_open(void)
{
	int fd = open(HWS_MWAIT_DEVICE, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	return fd;
}

static _Atomic uint32_t *line(void *region, uint32_t i)
{
	return (_Atomic uint32_t *)((char *)region + (size_t)i * info.line_size);
}

/* One wait ioctl; 0 or the errno. */
static int ioc(int fd, unsigned long cmd, struct hws_mwait_wait *a)
{
	return ioctl(fd, cmd, a) == 0 ? 0 : errno;
}

static int wait_line(int fd, uint32_t index, uint32_t expected, uint64_t timeout_ns)
{
	struct hws_mwait_wait a = { .index = index, .expected = expected, .timeout_ns = timeout_ns };
	return ioc(fd, HWS_MWAIT_IOC_WAIT, &a);
}

static int wait_addr(int fd, const _Atomic uint32_t *w, uint32_t expected, uint64_t timeout_ns)
{
	struct hws_mwait_wait a = { .addr = (uintptr_t)w, .expected = expected,
				    .timeout_ns = timeout_ns };
	return ioc(fd, HWS_MWAIT_IOC_WAIT_ADDR, &a);
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void test_info(int fd)
{
	CHECK_EQ(ioctl(fd, HWS_MWAIT_IOC_INFO, &info), 0);
	CHECK_EQ(info.abi_version, HWS_MWAIT_ABI_VERSION);
	CHECK(info.line_size >= 64 && info.line_size <= 4096);
	CHECK_EQ(info.line_size & (info.line_size - 1), 0);
	CHECK(info.line_size >= info.monitor_max);
	CHECK(info.max_lines >= 1);
	CHECK(info.features & HWS_MWAIT_F_HALT);
	/* Exit statistics and the mis-arming hook are off unless asked for. */
	CHECK_EQ(info.features & (HWS_MWAIT_F_EXIT_STATS | HWS_MWAIT_F_MISARM), 0);
	struct hws_mwait_stats ws = { .wait = { .timeout_ns = 0 } };
	CHECK_EQ(ioctl(fd, HWS_MWAIT_IOC_WAIT_STATS, &ws), -1);
	CHECK_EQ(errno, EOPNOTSUPP);
	CHECK_EQ(ioctl(fd, _IO(HWS_MWAIT_IOC_MAGIC, 0x3f)), -1);
	CHECK_EQ(errno, ENOTTY);
	CHECK_EQ(ioctl(fd, HWS_MWAIT_IOC_INFO, NULL), -1);
	CHECK_EQ(errno, EFAULT);
	/* Documented default: root only. */
	struct stat st;
	CHECK_EQ(stat(HWS_MWAIT_DEVICE, &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0600);
	printf("info: line %u bytes (CPUID.5 %u..%u), max_lines %u, hint %#x\n", info.line_size,
	       info.monitor_min, info.monitor_max, info.max_lines, info.mwait_hint);
}

static int mmap_errno(int fd, size_t len, int prot, int flags, off_t off)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);
	if (p != MAP_FAILED) {
		munmap(p, len);
		return 0;
	}
	return errno;
}

/* Bad sizes and mapping kinds are refused; returns a 2-page region. */
static void *test_mmap(int fd, uint32_t *nlines)
{
	const int rw = PROT_READ | PROT_WRITE;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t too_big = ((size_t)info.max_lines * info.line_size + page) & ~(page - 1);

	CHECK_EQ(wait_line(fd, 0, 0, 0), EINVAL);          /* no region yet */
	CHECK_EQ(mmap_errno(fd, page, rw, MAP_PRIVATE, 0), EINVAL);
	CHECK_EQ(mmap_errno(fd, page, rw, MAP_SHARED, (off_t)page), EINVAL);
	CHECK_EQ(mmap_errno(fd, page, rw | PROT_EXEC, MAP_SHARED, 0), EPERM);
	CHECK_EQ(mmap_errno(fd, too_big, rw, MAP_SHARED, 0), EINVAL);

	void *r = mmap(NULL, 2 * page, rw, MAP_SHARED, fd, 0);
	CHECK(r != MAP_FAILED);
	*nlines = (uint32_t)(2 * page / info.line_size);
	for (uint32_t i = 0; i < *nlines; i++)
		CHECK_EQ(atomic_load(line(r, i)), 0);       /* zeroed */
	CHECK(mprotect(r, page, PROT_READ | PROT_EXEC) != 0);
	/* A second mapping shows the same lines; a larger one is refused. */
	void *r2 = mmap(NULL, page, rw, MAP_SHARED, fd, 0);
	CHECK(r2 != MAP_FAILED);
	atomic_store(line(r, 1), 42);
	CHECK_EQ(atomic_load(line(r2, 1)), 42);
	atomic_store(line(r, 1), 0);
	CHECK_EQ(munmap(r2, page), 0);
	CHECK_EQ(mmap_errno(fd, 3 * page, rw, MAP_SHARED, 0), EINVAL);
	/* Another open file has its own region. */
	int fd2 = dev_open();
	void *o = mmap(NULL, page, rw, MAP_SHARED, fd2, 0);
	CHECK(o != MAP_FAILED);
	CHECK(o != r);
	atomic_store(line(o, 1), 7);
	CHECK_EQ(atomic_load(line(r, 1)), 0);
	CHECK_EQ(munmap(o, page), 0);
	CHECK_EQ(close(fd2), 0);
	printf("mmap: %u lines; private, offset, exec, oversize and growing maps refused\n", *nlines);
	return r;
}

static void test_bad_args(int fd, void *r, uint32_t nlines)
{
	struct hws_mwait_wait a = { .index = 0, .expected = 0, .timeout_ns = 0 };
	_Atomic uint32_t word = 0;
	uint32_t idx;

	CHECK_EQ(wait_line(fd, nlines, 0, 0), EINVAL);
	CHECK_EQ(wait_line(fd, UINT32_MAX, 0, 0), EINVAL);
	CHECK_EQ(wait_line(fd, nlines - 1, 0, 0), ETIMEDOUT); /* the last one is fine */
	a.flags = 1;
	CHECK_EQ(ioc(fd, HWS_MWAIT_IOC_WAIT, &a), EINVAL);
	a.flags = 0, a.reserved = 1;
	CHECK_EQ(ioc(fd, HWS_MWAIT_IOC_WAIT, &a), EINVAL);
	CHECK_EQ(ioctl(fd, HWS_MWAIT_IOC_WAIT, (void *)8), -1);
	CHECK_EQ(errno, EFAULT);
	CHECK_EQ(wait_addr(fd, (const _Atomic uint32_t *)((char *)&word + 1), 0, 0), EINVAL);
	CHECK_EQ(wait_addr(fd, NULL, 0, 0), EFAULT);
	CHECK_EQ(wait_addr(fd, (const _Atomic uint32_t *)0xffff880000000000ull, 0, 0), EFAULT);
	void *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ro != MAP_FAILED);
	CHECK_EQ(wait_addr(fd, ro, 0, 0), EFAULT);        /* must be writable memory */
	munmap(ro, 4096);
	CHECK_EQ(wait_addr(fd, &word, 0, 0), ETIMEDOUT);
	idx = nlines;
	CHECK_EQ(ioctl(fd, HWS_MWAIT_IOC_KICK, &idx), -1);
	CHECK_EQ(errno, EINVAL);
	idx = 0;
	CHECK_EQ(ioctl(fd, HWS_MWAIT_IOC_KICK, &idx), 0);  /* nobody halts there */
	/* Already different: returns at once, whatever the timeout. */
	atomic_store(line(r, 3), 5);
	CHECK_EQ(wait_line(fd, 3, 4, HWS_MWAIT_FOREVER), 0);
	atomic_store(line(r, 3), 0);
	atomic_store(&word, 5);
	CHECK_EQ(wait_addr(fd, &word, 4, HWS_MWAIT_FOREVER), 0);
	printf("bad args: indices, flags, addresses, pointers refused\n");
}

static void test_timeouts(int fd)
{
	_Atomic uint32_t word = 9;
	uint64_t t0 = test_now_ns();

	CHECK_EQ(wait_line(fd, 2, 0, 30 * MS), ETIMEDOUT);
	CHECK(test_now_ns() - t0 >= 30 * MS);
	t0 = test_now_ns();
	CHECK_EQ(wait_addr(fd, &word, 9, 30 * MS), ETIMEDOUT);
	CHECK(test_now_ns() - t0 >= 30 * MS);
	CHECK_EQ(wait_line(fd, 2, 0, 0), ETIMEDOUT);
	/* A timeout too large to add to the clock means no deadline. */
	CHECK_EQ(wait_line(fd, 2, 1, UINT64_MAX - 1), 0);
	printf("timeouts: line and address waits end after their timeout\n");
}

/* Two threads ping-pong a counter: each waits (no timeout) for its turn. */
struct pp {
	int fd;
	_Atomic uint32_t *w;
	int by_addr;       /* 0: line index 4; 1: WAIT_ADDR on w */
	uint32_t parity, rounds;
};

static void *pp_thread(void *p)
{
	struct pp *a = p;
	for (uint32_t i = 0; i < a->rounds; i++) {
		uint32_t v;
		while (((v = atomic_load(a->w)) & 1) != a->parity) {
			int rc = a->by_addr ? wait_addr(a->fd, a->w, v, HWS_MWAIT_FOREVER)
					    : wait_line(a->fd, 4, v, HWS_MWAIT_FOREVER);
			CHECK(rc == 0);
		}
		atomic_store(a->w, v + 1);
	}
	return NULL;
}

static void test_wake_threads(int fd, void *r)
{
	static _Atomic uint32_t user_word __attribute__((aligned(64)));
	const uint32_t rounds = 1000;

	for (int by_addr = 0; by_addr < 2; by_addr++) {
		_Atomic uint32_t *w = by_addr ? &user_word : line(r, 4);
		struct pp a[2] = { { fd, w, by_addr, 0, rounds }, { fd, w, by_addr, 1, rounds } };
		atomic_store(w, 0);
		test_run_threads(2, pp_thread, a, sizeof a[0]);
		CHECK_EQ(atomic_load(w), 2 * rounds);
	}
	atomic_store(line(r, 4), 0);
	printf("wake: %u ping-pong rounds between two threads, by line and by address\n", rounds);
}

static _Atomic int signals;

static void on_signal(int sig)
{
	(void)sig;
	atomic_fetch_add(&signals, 1);
}

struct sigw {
	int fd;
	struct hws_mwait_wait a;
	_Atomic int rc;      /* -1 while waiting */
};

static void *sig_waiter(void *p)
{
	struct sigw *s = p;
	atomic_store(&s->rc, ioc(s->fd, HWS_MWAIT_IOC_WAIT, &s->a));
	return NULL;
}

/* Signal the waiter (repeatedly: the first may land before it is in the
 * kernel) until its wait returns; returns the result. */
static int signal_until_done(struct sigw *s, pthread_t t, _Atomic uint32_t *wake_word)
{
	for (int i = 0; atomic_load(&s->rc) == -1; i++) {
		CHECK(i < 500);
		sleep_ms(20);
		if (wake_word && i == 5)
			atomic_store(wake_word, 1);
		pthread_kill(t, SIGUSR1);
	}
	CHECK_EQ(pthread_join(t, NULL), 0);
	return atomic_load(&s->rc);
}

static void set_handler(int flags)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = flags };
	sigemptyset(&sa.sa_mask);
	CHECK_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
}

static void test_signals(int fd, void *r)
{
	struct sigw s = { .fd = fd, .a = { .index = 5, .expected = 0 } };
	pthread_t t;

	/* Without SA_RESTART: EINTR. */
	set_handler(0);
	s.a.timeout_ns = HWS_MWAIT_FOREVER;
	atomic_store(&s.rc, -1);
	CHECK_EQ(pthread_create(&t, NULL, sig_waiter, &s), 0);
	CHECK_EQ(signal_until_done(&s, t, NULL), EINTR);
	CHECK(atomic_load(&signals) >= 1);

	/* A timed wait interrupted reports the time it had left. */
	s.a.timeout_ns = 60000 * MS;
	atomic_store(&s.rc, -1);
	CHECK_EQ(pthread_create(&t, NULL, sig_waiter, &s), 0);
	CHECK_EQ(signal_until_done(&s, t, NULL), EINTR);
	CHECK(s.a.timeout_ns > 0 && s.a.timeout_ns < 60000 * MS);

	/* With SA_RESTART the wait resumes after the handler and ends on the store. */
	set_handler(SA_RESTART);
	atomic_store(&signals, 0);
	s.a.timeout_ns = HWS_MWAIT_FOREVER;
	atomic_store(&s.rc, -1);
	CHECK_EQ(pthread_create(&t, NULL, sig_waiter, &s), 0);
	CHECK_EQ(signal_until_done(&s, t, line(r, 5)), 0);
	CHECK(atomic_load(&signals) >= 5);
	atomic_store(line(r, 5), 0);
	signal(SIGUSR1, SIG_DFL);
	printf("signals: EINTR, time left reported, SA_RESTART resumes\n");
}

struct halter {
	int fd;
	_Atomic int rc;
};

static void *halt_waiter(void *p)
{
	struct halter *h = p;
	struct hws_mwait_wait a = { .index = 6, .expected = 0, .timeout_ns = HWS_MWAIT_FOREVER };
	atomic_store(&h->rc, ioc(h->fd, HWS_MWAIT_IOC_HALT, &a));
	return NULL;
}

static void test_halt(int fd, void *r)
{
	struct halter h = { fd, -1 };
	struct hws_mwait_wait probe = { .index = 6, .expected = 0, .timeout_ns = 0 };
	uint32_t idx = 6;
	pthread_t t;
	int rc, kicks = 0;

	CHECK_EQ(ioc(fd, HWS_MWAIT_IOC_HALT, &probe), ETIMEDOUT);
	CHECK_EQ(pthread_create(&t, NULL, halt_waiter, &h), 0);
	/* One halted waiter a line: a second one is refused while it halts. */
	for (int i = 0; (rc = ioc(fd, HWS_MWAIT_IOC_HALT, &probe)) != EBUSY; i++) {
		CHECK(rc == ETIMEDOUT && i < 5000);
		sleep_ms(1);
	}
	atomic_store(line(r, 6), 1);
	while (atomic_load(&h.rc) == -1) {
		rc = ioctl(fd, HWS_MWAIT_IOC_KICK, &idx);
		CHECK(rc == 0 || rc == 1);
		kicks += rc;
		sleep_ms(1);
	}
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(atomic_load(&h.rc), 0);
	atomic_store(line(r, 6), 0);
	printf("halt: HLT waiter woken (%d IPIs sent), second halter refused\n", kicks);
}

/* A waiter and a worker share one CPU: the worker must still run, since the
 * driver gives the CPU back whenever the scheduler asks (need_resched). */
struct share {
	int fd;
	_Atomic uint32_t *w;
	_Atomic int done;
};

static void pin_self(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof set, &set), 0);
}

static void *share_waiter(void *p)
{
	struct share *s = p;
	pin_self(1);
	atomic_store(&s->done, wait_line(s->fd, 7, 0, HWS_MWAIT_FOREVER) == 0 ? 1 : 2);
	return NULL;
}

static void *share_worker(void *p)
{
	struct share *s = p;
	struct timespec ts;
	pin_self(1);
	sleep_ms(50);                         /* let the waiter get into the driver */
	do                                    /* 100 ms of CPU time on the waiter's CPU */
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	while (ts.tv_sec == 0 && ts.tv_nsec < 100000000);
	atomic_store(s->w, 1);
	return NULL;
}

static void test_yields(int fd, void *r)
{
	struct share s = { fd, line(r, 7), 0 };
	pthread_t t[2];

	CHECK_EQ(pthread_create(&t[0], NULL, share_waiter, &s), 0);
	CHECK_EQ(pthread_create(&t[1], NULL, share_worker, &s), 0);
	for (int i = 0; atomic_load(&s.done) == 0; i++) {
		CHECK(i < 2000);              /* 20 s: the worker starved */
		sleep_ms(10);
	}
	CHECK_EQ(atomic_load(&s.done), 1);
	CHECK_EQ(pthread_join(t[0], NULL), 0);
	CHECK_EQ(pthread_join(t[1], NULL), 0);
	atomic_store(line(r, 7), 0);
	printf("yields: a worker on the waiter's CPU got 100 ms of CPU time\n");
}

/* A user without permission on the node: kmwait unavailable, saying why. */
static void test_permission(void)
{
	pid_t pid = fork();
	int st;

	CHECK(pid >= 0);
	if (pid == 0) {
		hws_wait_t w;
		CHECK_EQ(setgid(65534), 0);
		CHECK_EQ(setuid(65534), 0);
		CHECK_EQ(open(HWS_MWAIT_DEVICE, O_RDWR), -1);
		CHECK_EQ(errno, EACCES);
		CHECK_EQ(hws_wait_init(&w, "kmwait"), ENOTSUP);
		CHECK(strstr(hws_last_error(), "no permission"));
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	printf("permission: unprivileged user refused, kmwait says 'no permission'\n");
}

/* The library policy, in a child so its cached descriptor goes with it. */
struct lib_pp {
	_Atomic uint32_t *w;
	hws_wait_t *pol;
	uint32_t parity, rounds;
};

static void *lib_thread(void *p)
{
	struct lib_pp *a = p;
	for (uint32_t i = 0; i < a->rounds; i++) {
		uint32_t v;
		while (((v = atomic_load(a->w)) & 1) != a->parity)
			CHECK_EQ(hws_wait_while_eq32(a->w, v, a->pol, HWS_FOREVER), 0);
		atomic_store(a->w, v + 1);
		hws_wake32(a->w, HWS_WAKE_ALL);
	}
	return NULL;
}

static void test_library(void)
{
	pid_t pid = fork();
	int st;

	CHECK(pid >= 0);
	if (pid == 0) {
		static _Atomic uint32_t word __attribute__((aligned(64)));
		hws_wait_t w;
		char spec[64];
		const char *why = NULL;

		CHECK_EQ(hws_wait_available(HWS_WAIT_KMWAIT, &why), 0);
		CHECK_EQ(hws_wait_init(&w, "kmwait:max=2ms"), 0);
		CHECK_EQ(hws_wait_format(&w, spec, sizeof spec), 0);
		CHECK(!strcmp(spec, "kmwait:max=2000000ns"));
		uint64_t t0 = hws_now_ns();
		CHECK_EQ(hws_wait_while_eq32(&word, 0, &w, hws_deadline_after_ns(20 * MS)), ETIMEDOUT);
		CHECK(hws_now_ns() - t0 >= 20 * MS);
		struct lib_pp a[2] = { { &word, &w, 0, 1000 }, { &word, &w, 1, 1000 } };
		test_run_threads(2, lib_thread, a, sizeof a[0]);
		CHECK_EQ(atomic_load(&word), 2000);
		_exit(0);
	}
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	printf("library: kmwait policy available, deadline and 1000 ping-pong rounds\n");
}

static int unload(void)
{
	return syscall(SYS_delete_module, HWS_MWAIT_MODULE, O_NONBLOCK) == 0 ? 0 : errno;
}

struct sleeper {
	int fd;
	_Atomic int rc;
};

static void *unload_waiter(void *p)
{
	struct sleeper *s = p;
	atomic_store(&s->rc, wait_line(s->fd, 0, 0, HWS_MWAIT_FOREVER));
	return NULL;
}

/* rmmod while a waiter sleeps in the driver: refused, the waiter unharmed;
 * refused while a region is still mapped; done once nothing uses it. */
static void test_unload(void)
{
	struct sleeper s = { dev_open(), -1 };
	void *r = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd, 0);
	pthread_t t;
	int rc;

	CHECK(r != MAP_FAILED);
	CHECK_EQ(pthread_create(&t, NULL, unload_waiter, &s), 0);
	sleep_ms(100);
	rc = unload();
	CHECK(rc == EAGAIN || rc == EBUSY);
	sleep_ms(50);
	CHECK_EQ(atomic_load(&s.rc), -1);     /* still asleep, unharmed */
	atomic_store(line(r, 0), 1);
	CHECK_EQ(pthread_join(t, NULL), 0);
	CHECK_EQ(atomic_load(&s.rc), 0);
	CHECK_EQ(close(s.fd), 0);
	rc = unload();                        /* the mapping still holds the file */
	CHECK(rc == EAGAIN || rc == EBUSY);
	CHECK_EQ(atomic_load(line(r, 0)), 1);
	CHECK_EQ(munmap(r, 4096), 0);
	CHECK_EQ(unload(), 0);
	CHECK_EQ(open(HWS_MWAIT_DEVICE, O_RDWR), -1);
	CHECK_EQ(errno, ENOENT);
	printf("unload: refused with a waiter asleep and with a mapping left, then done\n");
}

static void test_unloaded(void)
{
	hws_wait_t w;
	CHECK_EQ(hws_wait_init(&w, "kmwait"), ENOTSUP);
	CHECK(strstr(hws_last_error(), "not loaded"));
	printf("unloaded: %s\n", hws_last_error());
}

/* ---- storewake: which event ended each MWAIT ----------------------------
 *
 * The waiter (this process, CPU 0) sleeps in WAIT_STATS; a storer process on
 * CPU 1 writes the word.  The storer is a separate process that maps the
 * page afresh for every store: Bochs only sees a store to a monitored line
 * when the storing CPU's TLB entry was filled after MONITOR was armed (it
 * denies direct access to a monitored page at TLB fill, and MONITOR does not
 * flush the other CPU's entries for the page).  A fresh mapping gives a fresh
 * entry; unmapping it flushes only CPU 1, since no thread of the storer runs
 * on CPU 0, so no TLB shoot-down interrupt reaches the waiter.  Real CPUs
 * watch the physical line whatever the TLBs hold. */

struct sw_ctl {
	_Atomic int phase;       /* 1: store after delay_ns; 2: the waiter returned;
				    0: the storer is done with the round; 3: quit */
	int by_addr;             /* 0: device region (the fd); 1: the memfd */
	uint64_t off;            /* byte offset of the word in its page */
	uint64_t delay_ns;
	_Atomic uint64_t stored_ns;  /* when the store was made */
};

static pid_t sw_storer_pid;

static void sw_storer(struct sw_ctl *c, int devfd, int memfd, size_t pagesz)
{
	int ph;

	prctl(PR_SET_PDEATHSIG, SIGKILL);    /* a failing waiter takes us along */
	pin_self(1);
	while ((ph = atomic_load(&c->phase)) != 3) {
		if (ph != 1)
			continue;
		test_spin_ns(c->delay_ns);   /* the waiter arms and sleeps meanwhile */
		void *p = mmap(NULL, pagesz, PROT_READ | PROT_WRITE, MAP_SHARED,
			       c->by_addr ? memfd : devfd, 0);
		if (p == MAP_FAILED)
			_exit(3);
		atomic_store(&c->stored_ns, test_now_ns());
		atomic_store((_Atomic uint32_t *)((char *)p + c->off), 1);
		/* Unmap only once the waiter is back: should the flush reach its
		 * CPU, it must not be what ends the MWAIT. */
		while (atomic_load(&c->phase) == 1)
			;
		munmap(p, pagesz);
		atomic_store(&c->phase, 0);
	}
	_exit(0);
}

static const char *exit_name(uint32_t e)
{
	return e == HWS_MWAIT_EXIT_QUIET ? "no interrupt (monitor)" :
	       e == HWS_MWAIT_EXIT_IRQ ? "an interrupt" : "no MWAIT after the store";
}

/* One wait on *word (line `index`, or its address), stored to `delay_ns`
 * after the start; returns the statistics. */
static struct hws_mwait_stats sw_round(int fd, struct sw_ctl *c, _Atomic uint32_t *word,
				       int by_addr, uint32_t index, uint64_t off, uint64_t delay_ns,
				       uint64_t *woke_after_ns)
{
	struct hws_mwait_stats st = { .by_addr = (uint32_t)by_addr };
	int rc;

	st.wait.index = index;
	st.wait.addr = (uintptr_t)word;
	st.wait.expected = 0;
	st.wait.timeout_ns = 60000 * MS;      /* a lost wake-up fails, it does not hang */
	atomic_store(word, 0);
	c->by_addr = by_addr;
	c->off = off;
	c->delay_ns = delay_ns;
	atomic_store(&c->stored_ns, 0);
	atomic_store(&c->phase, 1);
	rc = ioctl(fd, HWS_MWAIT_IOC_WAIT_STATS, &st) == 0 ? 0 : errno;
	*woke_after_ns = test_now_ns() - atomic_load(&c->stored_ns);
	CHECK_EQ(rc, 0);
	atomic_store(&c->phase, 2);
	while (atomic_load(&c->phase) != 0)
		;
	return st;
}

struct sw_tally {
	unsigned targets, quiet, irq_retries, early_retries, mwaits, irq_exits;
};

/* The exit after the store must be one no interrupt ended.  An interrupt may
 * land in the few instructions between the store and the waiter's count
 * (then the round is repeated, at most twice); a store that came before the
 * monitor was armed proves nothing (repeated with a longer delay).  A monitor
 * that does not watch the word's line fails every repetition. */
static void sw_target(int fd, struct sw_ctl *c, _Atomic uint32_t *word, int by_addr,
		      uint32_t index, uint64_t off, const char *what, struct sw_tally *t)
{
	uint64_t delay = 1 * MS;
	unsigned irq_rounds = 0;

	for (int attempt = 0;; attempt++) {
		uint64_t woke_after;
		struct hws_mwait_stats st = sw_round(fd, c, word, by_addr, index, off, delay,
						     &woke_after);
		t->mwaits += st.mwaits;
		t->irq_exits += st.irq_exits;
		CHECK_EQ(st.mwaits, st.quiet_exits + st.irq_exits);
		if (st.last_exit == HWS_MWAIT_EXIT_QUIET) {
			t->quiet++;
			break;
		}
		if (st.last_exit == HWS_MWAIT_EXIT_IRQ) {
			t->irq_retries++;
			if (++irq_rounds < 3)
				continue;
		} else {
			t->early_retries++;
			delay *= 2;
			if (attempt < 8)
				continue;
		}
		printf("FAIL storewake: %s: the MWAIT after the store ended with %s in %u of %d"
		       " rounds (last: %u MWAITs, interrupt mask %#llx, back %llu us after the"
		       " store): the monitor did not see the store\n", what,
		       exit_name(st.last_exit), irq_rounds, attempt + 1, st.mwaits,
		       (unsigned long long)st.irq_mask, (unsigned long long)(woke_after / 1000));
		/* Reap the storer: its descriptor must not keep the module busy. */
		kill(sw_storer_pid, SIGKILL);
		waitpid(sw_storer_pid, NULL, 0);
		exit(1);
	}
	t->targets++;
}

static void test_storewake(void)
{
	int fd = dev_open();
	size_t pagesz = (size_t)sysconf(_SC_PAGESIZE);
	char what[64];

	CHECK_EQ(ioctl(fd, HWS_MWAIT_IOC_INFO, &info), 0);
	CHECK_EQ(info.abi_version, HWS_MWAIT_ABI_VERSION);
	if (!(info.features & HWS_MWAIT_F_EXIT_STATS)) {
		printf("FAIL storewake: no exit statistics (load the module with exit_stats=1 on a"
		       " CPU with MWAIT interrupt break events)\n");
		exit(1);
	}
	if (info.features & HWS_MWAIT_F_MISARM)
		printf("storewake: the module arms the line next door (test_misarm=1): this must fail\n");
	void *r = mmap(NULL, pagesz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(r != MAP_FAILED);
	uint32_t nlines = (uint32_t)(pagesz / info.line_size);
	/* The user words: a page of shared memory the storer can map too. */
	int memfd = (int)syscall(SYS_memfd_create, "storewake", 0);
	CHECK(memfd >= 0);
	CHECK_EQ(ftruncate(memfd, (off_t)pagesz), 0);
	char *user = mmap(NULL, pagesz, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	CHECK(user != MAP_FAILED);

	/* Bad requests. */
	struct hws_mwait_stats bad = { .by_addr = 2 };
	CHECK_EQ(ioctl(fd, HWS_MWAIT_IOC_WAIT_STATS, &bad), -1);
	CHECK_EQ(errno, EINVAL);
	bad.by_addr = 0, bad.reserved = 1;
	CHECK_EQ(ioctl(fd, HWS_MWAIT_IOC_WAIT_STATS, &bad), -1);
	CHECK_EQ(errno, EINVAL);

	struct sw_ctl *c = mmap(NULL, pagesz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				-1, 0);
	CHECK(c != MAP_FAILED);
	pid_t storer = fork();
	CHECK(storer >= 0);
	if (storer == 0)
		sw_storer(c, fd, memfd, pagesz);
	sw_storer_pid = storer;
	pin_self(0);

	/* Without a store only interrupts (ticks, the deadline) end the MWAITs:
	 * the classification can say "interrupt". */
	struct hws_mwait_stats st = { .wait = { .index = 0, .expected = 0, .timeout_ns = 20 * MS } };
	CHECK_EQ(ioctl(fd, HWS_MWAIT_IOC_WAIT_STATS, &st), -1);
	CHECK_EQ(errno, ETIMEDOUT);
	CHECK(st.mwaits >= 1);
	CHECK_EQ(st.irq_exits, st.mwaits);
	CHECK_EQ(st.last_exit, HWS_MWAIT_EXIT_IRQ);
	printf("storewake: a 20 ms wait with no store: %u MWAITs, every one ended by an interrupt\n",
	       st.mwaits);

	for (int by_addr = 0; by_addr < 2; by_addr++) {
		struct sw_tally tl = { 0 };
		for (uint32_t i = 0; i < nlines; i++) {
			uint64_t off = (uint64_t)i * info.line_size;
			_Atomic uint32_t *w;
			if (by_addr) {
				/* A different word of each line: the line, not the word, is watched. */
				off += ((uint64_t)i * sizeof(uint32_t)) % info.line_size;
				w = (_Atomic uint32_t *)(user + off);
				snprintf(what, sizeof what, "user word at page offset %llu",
					 (unsigned long long)off);
			} else {
				w = line(r, i);
				snprintf(what, sizeof what, "line %u", i);
			}
			sw_target(fd, c, w, by_addr, i, off, what, &tl);
			atomic_store(w, 0);
		}
		printf("storewake: %s: %u of %u stores ended the MWAIT without an interrupt"
		       " (%u MWAITs, %u ended by interrupts; repeated %u rounds hit by an"
		       " interrupt, %u stored before the MWAIT)\n",
		       by_addr ? "pinned user words" : "monitored lines", tl.quiet, tl.targets,
		       tl.mwaits, tl.irq_exits, tl.irq_retries, tl.early_retries);
	}
	int wst;
	atomic_store(&c->phase, 3);
	CHECK_EQ(waitpid(storer, &wst, 0), storer);
	CHECK(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
	CHECK_EQ(munmap(c, pagesz), 0);
	CHECK_EQ(munmap(user, pagesz), 0);
	CHECK_EQ(close(memfd), 0);
	CHECK_EQ(munmap(r, pagesz), 0);
	CHECK_EQ(close(fd), 0);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc != 2) {
		fprintf(stderr, "usage: kmwait_vmtest loaded|unloaded|storewake (inside the test VM only)\n");
		return 2;
	}
	if (!strcmp(argv[1], "storewake")) {
		test_storewake();
		return 0;
	}
	if (!strcmp(argv[1], "unloaded")) {
		test_unloaded();
		return 0;
	}
	int fd = dev_open();
	uint32_t nlines;
	test_info(fd);
	void *r = test_mmap(fd, &nlines);
	test_bad_args(fd, r, nlines);
	test_timeouts(fd);
	test_wake_threads(fd, r);
	test_signals(fd, r);
	test_halt(fd, r);
	test_yields(fd, r);
	test_permission();
	test_library();
	CHECK_EQ(munmap(r, 2 * (size_t)sysconf(_SC_PAGESIZE)), 0);
	CHECK_EQ(close(fd), 0);
	test_unload();
	test_unloaded();
	return 0;
}
