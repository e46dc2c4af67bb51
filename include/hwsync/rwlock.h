/* hwsync reader-writer locks, generic over the wait policy: the kind is
 * chosen by name at run time.
 *
 *   reader   prefers readers; a thread may read-lock recursively (glibc's
 *            default rwlock) (hwsync/rwlock_reader.h)
 *   writer   prefers writers; no recursive read locks (glibc's
 *            PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)
 *            (hwsync/rwlock_writer.h)
 *   bravo    BRAVO over `reader`: readers publish themselves in a
 *            process-wide slot table and write no shared line while no
 *            writer comes; reader-preferring and recursive like `reader`
 *            (hwsync/rwlock_bravo.h)
 *
 * Every call returns 0 or an errno value, as glibc's pthread_rwlock_*:
 * EDEADLK from rdlock/wrlock by the thread that holds the write lock (EBUSY
 * from the try forms), EAGAIN when the readers would exceed
 * HWS_RW_MAX_READERS, ETIMEDOUT, EINVAL for a malformed deadline (checked
 * before anything else).  Deadlines are absolute CLOCK_MONOTONIC.  unlock
 * releases the write lock if this thread holds it, else one read lock; it
 * returns 0 even when misused, and a misused unlock leaves the lock usable.
 * The typed headers hold the in-place cores (the words alone, all zero when
 * free) that the LD_PRELOAD shim keeps inside a pthread_rwlock_t.
 */
#ifndef HWSYNC_RWLOCK_H
#define HWSYNC_RWLOCK_H

#include <time.h>
#include <hwsync/wait.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hws_rwlock hws_rwlock_t;

/* kind: "reader" (NULL or "" too), "writer" or "bravo"; policy: a wait
 * policy spec (NULL or "": adaptive). */
int hws_rwlock_create(hws_rwlock_t **rw, const char *kind, const char *policy);
/* The same with a policy parsed once (hws_wait_init); the lock keeps a copy. */
int hws_rwlock_create_with(hws_rwlock_t **rw, const char *kind, const hws_wait_t *policy);
int hws_rwlock_rdlock(hws_rwlock_t *rw);
int hws_rwlock_tryrdlock(hws_rwlock_t *rw);
int hws_rwlock_timedrdlock(hws_rwlock_t *rw, const struct timespec *abs_deadline);
int hws_rwlock_wrlock(hws_rwlock_t *rw);
int hws_rwlock_trywrlock(hws_rwlock_t *rw);
int hws_rwlock_timedwrlock(hws_rwlock_t *rw, const struct timespec *abs_deadline);
int hws_rwlock_unlock(hws_rwlock_t *rw);
void hws_rwlock_destroy(hws_rwlock_t *rw);
/* The kind's name ("none" for NULL). */
const char *hws_rwlock_kind(const hws_rwlock_t *rw);
/* NULL-terminated list of the kinds, the default first. */
const char *const *hws_rwlock_kinds(void);

#ifdef __cplusplus
}
#endif
#endif
