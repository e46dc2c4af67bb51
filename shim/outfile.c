/* Output files of the shim (HWSYNC_TRACE, and any other file it writes), one
 * per process.
 *
 * Every process that starts the shim writes its own files: MPI ranks started
 * by one launcher, and every program a traced program execs, see the same
 * HWSYNC_* values.  A name is taken in three steps:
 *
 *   1. The spec is expanded: %p is the process id, %h the host name, %% a
 *      percent sign; any other % sequence is an error.
 *   2. Candidates are tried in order: the expanded name, then NAME.<pid>,
 *      then NAME.<host>.<pid> (the same pid on two hosts sharing a file
 *      system).
 *   3. A candidate is opened (created if missing, not truncated) and belongs
 *      to this process when it takes an exclusive flock(2) lock on it without
 *      waiting; only then is it truncated.  The lock is held until the
 *      process ends, so a file that a live process writes is never taken,
 *      while a file left by a finished run is (it is overwritten, as before).
 *
 * The lock, not the creation, decides: two processes that open a new name at
 * the same instant cannot both win, which O_CREAT|O_EXCL alone would not
 * settle for a file left by an earlier run.  The descriptor is close-on-exec,
 * so a program the process execs does not hold the lock in its place.  A file
 * system without flock (ENOLCK, EINVAL, ENOTSUP) gets the per-process name at
 * once, so nothing can be overwritten by a sibling.  A name that is not a
 * regular file (/dev/stderr, a named pipe) is opened as it is. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "arch/internal.h"
#include "shim/outfile.h"

/* Expand %p, %h and %% of spec into out: 0, EINVAL (unknown sequence, or the
 * name is empty) or ENAMETOOLONG. */
static int expand(const char *spec, const char *host, char *out, size_t len)
{
	size_t n = 0;
	int pid = (int)getpid();
	for (const char *s = spec; *s; s++) {
		char num[24];
		const char *add = num;
		if (*s != '%') {
			num[0] = *s;
			num[1] = 0;
		} else if (s[1] == 'p') {
			snprintf(num, sizeof num, "%d", pid);
			s++;
		} else if (s[1] == 'h') {
			add = host;
			s++;
		} else if (s[1] == '%') {
			add = "%";
			s++;
		} else {
			return hws_fail(EINVAL, "unknown '%%%c' in the file name (known: %%p, %%h, %%%%)",
					s[1] ? s[1] : ' ');
		}
		size_t k = strlen(add);
		if (n + k >= len)
			return hws_fail(ENAMETOOLONG, "file name too long");
		memcpy(out + n, add, k);
		n += k;
	}
	out[n] = 0;
	return n ? 0 : hws_fail(EINVAL, "empty file name");
}

/* Take name for this process: the descriptor, -EWOULDBLOCK when a live
 * process holds it, -ENOLCK when the file system cannot lock, else -errno. */
static int take(const char *name)
{
	struct stat st;
	int fd = open(name, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode))
		return fd;   /* a terminal, pipe or device: shared by nature */
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = errno;
		close(fd);
		if (err == EWOULDBLOCK)
			return -EWOULDBLOCK;
		return -ENOLCK;   /* ENOLCK, EINVAL, ENOTSUP: no locks here */
	}
	if (ftruncate(fd, 0)) {
		int err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

FILE *hws_open_output(const char *spec, char *used, size_t used_len)
{
	char host[64] = "localhost", base[1024], name[1200];
	int pid = (int)getpid(), fd = -EWOULDBLOCK, err;

	if (gethostname(host, sizeof host))
		snprintf(host, sizeof host, "localhost");
	host[sizeof host - 1] = 0;
	if ((err = expand(spec, host, base, sizeof base))) {
		errno = err;
		return NULL;
	}
	for (int step = 0; step < 3 && fd == -EWOULDBLOCK; step++) {
		if (step == 0)
			snprintf(name, sizeof name, "%s", base);
		else if (step == 1)
			snprintf(name, sizeof name, "%s.%d", base, pid);
		else
			snprintf(name, sizeof name, "%s.%s.%d", base, host, pid);
		fd = take(name);
		if (fd == -ENOLCK && step == 0) {
			/* Cannot tell whether a sibling writes it: a name of our own. */
			snprintf(name, sizeof name, "%s.%d", base, pid);
			fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
			if (fd < 0)
				fd = -errno;
		}
	}
	if (fd < 0) {
		errno = fd == -EWOULDBLOCK ? EBUSY : -fd;
		hws_fail(errno, "%s", fd == -EWOULDBLOCK ? "every candidate name is in use" :
			 strerror(-fd));
		return NULL;
	}
	FILE *f = fdopen(fd, "w");
	if (!f) {
		err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	if (used && used_len)
		snprintf(used, used_len, "%s", name);
	return f;
}
