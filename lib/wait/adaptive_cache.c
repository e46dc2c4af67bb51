/* The per-machine cache of the adaptive policy's measurement.
 *
 * hwsync info --calibrate measures with a helper thread and stores the result
 * here; a program that uses the adaptive policy reads it when the policy is
 * initialised (one small file: tens of microseconds) instead of measuring.
 * The file is only good for the machine that wrote it, so it carries a key:
 * architecture, CPU vendor, model and signature, hypervisor, kernel release.
 * Its name holds a hash of the key, so that a home directory shared by
 * different machines keeps one file for each.  Anything wrong with the file
 * (missing, unreadable, another machine's, malformed, out of range) leaves
 * the policy on its learned or default budget: the reader never prints and
 * never fails the caller; it only says what it found for hwsync info.
 *
 * Where: $HWSYNC_CACHE_DIR if set, else $XDG_CACHE_HOME/hwsync (an absolute
 * XDG_CACHE_HOME only, as the XDG base directory specification [XDG] says), else
 * $HOME/.cache/hwsync.
 *
 * Format (text, one field a line, in this order):
 *     hwsync-adaptive-calibration 1
 *     key x86_64|AuthenticAMD|AMD EPYC 7B13|25.1.0|KVMKVMKVM|6.1.0-18-amd64
 *     handoff_ns 23100
 *     futex_wake_ns 220
 *     futex_wait_ns 321
 *     yield_ns 762
 * Only measurements are stored; the budget is derived by the current rule.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "wait/internal.h"

#define MAGIC "hwsync-adaptive-calibration 1"
#define FILE_MAX 4096                  /* a valid file is far smaller */
#define VALUE_MAX 1000000000ull        /* 1 s: anything longer is not a measurement */

static void machine_key(char *buf, size_t len)
{
	const struct hws_cpu_info *c = hws_cpu_features();
	struct utsname u;

	if (uname(&u))
		strcpy(u.release, "unknown");
	snprintf(buf, len, "%s|%s|%s|%u.%u.%u|%s|%s", c->arch, c->vendor, c->model, c->family,
		 c->model_id, c->stepping,
		 !c->hypervisor ? "none" : c->hypervisor_vendor[0] ? c->hypervisor_vendor : "unknown",
		 u.release);
	for (char *p = buf; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

/* 64-bit FNV-1a: a short, stable name for the key. */
static uint64_t key_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static int cache_dir(char *buf, size_t len)
{
	const char *d = getenv("HWSYNC_CACHE_DIR"), *x, *h;
	int n;

	if (d && *d)
		n = snprintf(buf, len, "%s", d);
	else if ((x = getenv("XDG_CACHE_HOME")) && x[0] == '/')
		n = snprintf(buf, len, "%s/hwsync", x);
	else if ((h = getenv("HOME")) && *h)
		n = snprintf(buf, len, "%s/.cache/hwsync", h);
	else
		return hws_fail(ENOENT, "no calibration cache: none of HWSYNC_CACHE_DIR, "
				"XDG_CACHE_HOME and HOME is set");
	if (n < 0 || (size_t)n >= len)
		return hws_fail(ENAMETOOLONG, "no calibration cache: the directory name is too long");
	return 0;
}

int hws_adaptive_cache_path(char *buf, size_t len)
{
	char key[512];
	size_t n;
	int rc = cache_dir(buf, len);

	if (rc)
		return rc;
	machine_key(key, sizeof key);
	n = strlen(buf);
	if ((size_t)snprintf(buf + n, len - n, "/adaptive-%016" PRIx64, key_hash(key)) >= len - n)
		return hws_fail(ENAMETOOLONG, "no calibration cache: the file name is too long");
	return 0;
}

/* "name 123\n" at *p: the value, advancing *p; -1 if the line is not that. */
static int field(const char **p, const char *name, uint64_t *out)
{
	size_t n = strlen(name);
	const char *s = *p;
	uint64_t v = 0;

	if (strncmp(s, name, n) || s[n] != ' ')
		return -1;
	s += n + 1;
	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > VALUE_MAX)
			return -1;
	}
	if (*s != '\n')
		return -1;
	*p = s + 1;
	*out = v;
	return 0;
}

/* Check the file's text against this machine's key and take its values.
 * NULL when good, else what is wrong; *stale when only the key differs. */
static const char *parse(const char *buf, size_t have, const char *key,
			 struct hws_adaptive_calibration *out, bool *stale)
{
	const char *p = buf;
	size_t klen = strlen(key);

	*stale = false;
	if (have >= FILE_MAX)
		return "too long";
	if (strlen(buf) != have)
		return "not text";
	if (strncmp(p, MAGIC "\n", sizeof MAGIC))
		return "not a calibration cache of this format";
	p += sizeof MAGIC;
	if (strncmp(p, "key ", 4))
		return "no key line";
	p += 4;
	if (strncmp(p, key, klen) || p[klen] != '\n') {
		*stale = true;
		return "written for another machine";
	}
	p += klen + 1;
	if (field(&p, "handoff_ns", &out->handoff_ns) ||
	    field(&p, "futex_wake_ns", &out->futex_wake_ns) ||
	    field(&p, "futex_wait_ns", &out->futex_wait_ns) ||
	    field(&p, "yield_ns", &out->yield_ns))
		return "a missing or malformed value (expected handoff_ns, futex_wake_ns, "
		       "futex_wait_ns, yield_ns: each a number of ns up to 1 s)";
	if (*p)
		return "unexpected text after the values";
	if (!out->handoff_ns)
		return "handoff_ns is 0";
	return NULL;
}

int hws_adaptive_cache_read(struct hws_adaptive_calibration *out, char *state, size_t len)
{
	char path[PATH_MAX], key[512], buf[FILE_MAX + 1];
	const char *bad;
	ssize_t got = 0;
	size_t have = 0;
	bool stale;
	int fd, err;

	memset(out, 0, sizeof *out);
	if (hws_adaptive_cache_path(path, sizeof path)) {
		snprintf(state, len, "%s", hws_last_error());
		return ENOENT;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		err = errno;
		if (err == ENOENT)
			snprintf(state, len, "none at %s (hwsync info --calibrate writes it)", path);
		else
			snprintf(state, len, "ignored %s: cannot open it: %s", path, strerror(err));
		return err;
	}
	/* Up to FILE_MAX + 1 bytes: a longer file is refused, never truncated. */
	while (have < sizeof buf - 1 &&
	       ((got = read(fd, buf + have, sizeof buf - 1 - have)) > 0 || (got < 0 && errno == EINTR)))
		if (got > 0)
			have += (size_t)got;
	err = got < 0 ? errno : 0;
	close(fd);
	if (err) {
		snprintf(state, len, "ignored %s: cannot read it: %s", path, strerror(err));
		return err;
	}
	buf[have] = 0;
	machine_key(key, sizeof key);
	if ((bad = parse(buf, have, key, out, &stale))) {
		memset(out, 0, sizeof *out);
		if (stale)
			snprintf(state, len, "ignored %s: %s (this one is %s)", path, bad, key);
		else
			snprintf(state, len, "ignored %s: %s", path, bad);
		return stale ? ESTALE : EINVAL;
	}
	snprintf(state, len, "read %s (written for this machine)", path);
	return 0;
}

/* mkdir -p, each new directory private to the user (as XDG asks). */
static int make_dirs(char *dir)
{
	for (char *s = dir + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;
		*s = 0;
		int rc = mkdir(dir, 0700) && errno != EEXIST ? errno : 0;
		*s = c;
		if (rc)
			return rc;
		if (!c)
			return 0;
	}
}

int hws_adaptive_cache_write(const struct hws_adaptive_calibration *c, char *path_out, size_t len)
{
	char path[PATH_MAX], dir[PATH_MAX], tmp[PATH_MAX + 32], key[512], text[FILE_MAX];
	int fd, n, err = 0;

	if (!c || !c->handoff_ns)
		return hws_fail(EINVAL, "no futex hand-off was measured (no helper thread?): "
				"nothing to store");
	if (hws_adaptive_cache_path(path, sizeof path))
		return ENOENT;
	if (path_out)
		snprintf(path_out, len, "%s", path);
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = 0;
	if (dir[0] && (err = make_dirs(dir)))
		return hws_fail(err, "cannot create the cache directory %s: %s", dir, strerror(err));
	machine_key(key, sizeof key);
	n = snprintf(text, sizeof text, MAGIC "\nkey %s\nhandoff_ns %" PRIu64 "\nfutex_wake_ns %"
		     PRIu64 "\nfutex_wait_ns %" PRIu64 "\nyield_ns %" PRIu64 "\n", key,
		     c->handoff_ns, c->futex_wake_ns, c->futex_wait_ns, c->yield_ns);
	/* Write a private temporary file and rename it: a reader sees the old
	 * file or the new one, never half of one. */
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0) {
		err = errno;
		return hws_fail(err, "cannot write the calibration cache %s: %s", tmp, strerror(err));
	}
	for (int done = 0; done < n && !err;) {
		ssize_t w = write(fd, text + done, (size_t)(n - done));
		if (w > 0)
			done += (int)w;
		else if (w == 0 || errno != EINTR)
			err = w ? errno : EIO;
	}
	if (close(fd) && !err)
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err) {
		unlink(tmp);
		return hws_fail(err, "cannot write the calibration cache %s: %s", path, strerror(err));
	}
	return 0;
}
