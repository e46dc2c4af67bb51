/* Generic reader-writer lock API (hwsync/rwlock.h): one of the in-place
 * cores with its own copy of the policy, on a line of its own.  Three kinds,
 * so a switch rather than an ops table. */
#include <hwsync/rwlock.h>
#include <hwsync/rwlock_bravo.h>
#include <hwsync/rwlock_reader.h>
#include <hwsync/rwlock_writer.h>
#include "prims/prims_internal.h"

enum kind { READER, WRITER, BRAVO, NKINDS };
static const char *const kind_names[NKINDS + 1] = { "reader", "writer", "bravo", NULL };

struct hws_rwlock {
	union {
		hws_rw_reader_core_t reader;
		hws_rw_writer_core_t writer;
		hws_rw_bravo_core_t bravo;
	} u HWS_ALIGNED_LINE;
	enum kind kind;
	hws_wait_t wait;
};

/* ---- thread ids for the writer's EDEADLK check ---- */
_Thread_local uint32_t hws_rw_tid;
static _Atomic uint32_t next_tid;

uint32_t hws_rw_self_slow(void)
{
	uint32_t t;
	/* relaxed: only uniqueness matters.  0 is skipped at a wrap. */
	do
		t = atomic_fetch_add_explicit(&next_tid, 1, memory_order_relaxed) + 1;
	while (!t);
	hws_rw_tid = t;
	return t;
}

const char *const *hws_rwlock_kinds(void)
{
	return kind_names;
}

static int find(const char *name, enum kind *k)
{
	if (!name || !*name)
		name = "reader";
	for (int i = 0; i < NKINDS; i++)
		if (!strcmp(name, kind_names[i])) {
			*k = (enum kind)i;
			return 0;
		}
	return hws_fail(EINVAL, "unknown rwlock kind '%s' (known: reader, writer, bravo)", name);
}

int hws_rwlock_create_with(hws_rwlock_t **out, const char *kind, const hws_wait_t *policy)
{
	hws_rwlock_t *rw;
	enum kind k;
	int rc;

	if (!out)
		return hws_fail(EINVAL, "hws_rwlock_create_with: NULL result pointer");
	*out = NULL;
	if ((rc = find(kind, &k)) || (rc = hws_wait_check(policy, "hws_rwlock_create_with")))
		return rc;
	if (!(rw = hws_alloc_lines(sizeof *rw)))
		return hws_fail(ENOMEM, "rwlock: out of memory");
	rw->kind = k;
	rw->wait = *policy;
	switch (k) {
	case READER: hws_rw_reader_core_init(&rw->u.reader); break;
	case WRITER: hws_rw_writer_core_init(&rw->u.writer); break;
	default: hws_rw_bravo_core_init(&rw->u.bravo); break;
	}
	*out = rw;
	return 0;
}

int hws_rwlock_create(hws_rwlock_t **out, const char *kind, const char *policy)
{
	hws_wait_t w;
	enum kind k;
	int rc;

	if (!out)
		return hws_fail(EINVAL, "hws_rwlock_create: NULL result pointer");
	*out = NULL;
	if ((rc = find(kind, &k)) || (rc = hws_prims_policy(&w, policy, "rwlock")))
		return rc;
	return hws_rwlock_create_with(out, kind, &w);
}

void hws_rwlock_destroy(hws_rwlock_t *rw)
{
	free(rw);
}

const char *hws_rwlock_kind(const hws_rwlock_t *rw)
{
	return rw ? kind_names[rw->kind] : "none";
}

static int rd(hws_rwlock_t *rw, uint64_t dl)
{
	switch (rw->kind) {
	case READER: return hws_rw_reader_core_rdlock(&rw->u.reader, &rw->wait, dl);
	case WRITER: return hws_rw_writer_core_rdlock(&rw->u.writer, &rw->wait, dl);
	default: return hws_rw_bravo_core_rdlock(&rw->u.bravo, &rw->wait, dl);
	}
}

static int wr(hws_rwlock_t *rw, uint64_t dl)
{
	switch (rw->kind) {
	case READER: return hws_rw_reader_core_wrlock(&rw->u.reader, &rw->wait, dl);
	case WRITER: return hws_rw_writer_core_wrlock(&rw->u.writer, &rw->wait, dl);
	default: return hws_rw_bravo_core_wrlock(&rw->u.bravo, &rw->wait, dl);
	}
}

#define NONNULL(rw, fn)                                                   \
	do {                                                              \
		if (!(rw))                                                \
			return hws_fail(EINVAL, fn ": NULL rwlock");      \
	} while (0)

int hws_rwlock_rdlock(hws_rwlock_t *rw)
{
	NONNULL(rw, "hws_rwlock_rdlock");
	return rd(rw, HWS_FOREVER);
}

int hws_rwlock_wrlock(hws_rwlock_t *rw)
{
	NONNULL(rw, "hws_rwlock_wrlock");
	return wr(rw, HWS_FOREVER);
}

/* glibc checks the timespec before the lock: so do we. */
static int deadline(const struct timespec *abs, uint64_t *dl, const char *who)
{
	if (!abs)
		return hws_fail(EINVAL, "%s: NULL deadline", who);
	return hws_deadline_from_ts(abs, dl, who);
}

int hws_rwlock_timedrdlock(hws_rwlock_t *rw, const struct timespec *abs)
{
	uint64_t dl = 0;
	int rc;
	NONNULL(rw, "hws_rwlock_timedrdlock");
	if ((rc = deadline(abs, &dl, "hws_rwlock_timedrdlock")))
		return rc;
	return rd(rw, dl);
}

int hws_rwlock_timedwrlock(hws_rwlock_t *rw, const struct timespec *abs)
{
	uint64_t dl = 0;
	int rc;
	NONNULL(rw, "hws_rwlock_timedwrlock");
	if ((rc = deadline(abs, &dl, "hws_rwlock_timedwrlock")))
		return rc;
	return wr(rw, dl);
}

int hws_rwlock_tryrdlock(hws_rwlock_t *rw)
{
	NONNULL(rw, "hws_rwlock_tryrdlock");
	switch (rw->kind) {
	case READER: return hws_rw_reader_core_tryrdlock(&rw->u.reader);
	case WRITER: return hws_rw_writer_core_tryrdlock(&rw->u.writer);
	default: return hws_rw_bravo_core_tryrdlock(&rw->u.bravo);
	}
}

int hws_rwlock_trywrlock(hws_rwlock_t *rw)
{
	NONNULL(rw, "hws_rwlock_trywrlock");
	switch (rw->kind) {
	case READER: return hws_rw_reader_core_trywrlock(&rw->u.reader);
	case WRITER: return hws_rw_writer_core_trywrlock(&rw->u.writer);
	default: return hws_rw_bravo_core_trywrlock(&rw->u.bravo);
	}
}

int hws_rwlock_unlock(hws_rwlock_t *rw)
{
	NONNULL(rw, "hws_rwlock_unlock");
	switch (rw->kind) {
	case READER: return hws_rw_reader_core_unlock(&rw->u.reader);
	case WRITER: return hws_rw_writer_core_unlock(&rw->u.writer);
	default: return hws_rw_bravo_core_unlock(&rw->u.bravo);
	}
}
