/* HWSYNC_PROFILE: the per-object contention profile (profile.c; how to read
 * it: docs/preload.md, "Contention profile").
 *
 * Entries.  One entry per object life: an address from its first use (or its
 * init) to its destroy or next init.  Entries sit in one table of
 * HWSYNC_PROFILE_SLOTS slots made at start-up, keyed by address with open
 * addressing over a bounded window; nothing is allocated per object, and an
 * object that finds no free slot in its window is counted as not recorded.
 * A slot whose object ended without ever being contended is reused when its
 * window is full, so a program that creates and destroys objects without end
 * keeps being profiled in flat memory.
 *
 * Counting.  Each thread counts into a small direct-mapped cache of its own
 * (struct hws_prof_thread): an uncontended acquisition that hits it is a
 * hash, a look at the entry and at the process's count of ended objects, and
 * an increment, with no clock read and no write to a line another thread
 * reads.  An entry is current while no object has ended since it was last
 * checked against its slot's tag; after any init or destroy, each entry is
 * checked once more on its next use (out of line).  The cache is flushed into the
 * table when an entry is evicted, when the thread exits, when the object
 * ends on this thread, and at exit; the counts are exact for every thread
 * that ended before the exit report (a live thread's are a snapshot).
 * Hold times are sampled: every 64th acquisition of an object reads the
 * clock, and the release that follows it on the same thread reads it again.
 *
 * A family of the shim reports with these calls, each made only when
 * hws_cfg.profile is set (a new family: a name in enum hws_family and
 * hws_family_name, then the calls as rwlock.c makes them: acquired for a
 * read or write acquisition that did not wait, wait_begin/_end around a
 * wait, released before an unlock, end at init and destroy):
 *   hws_prof_acquired(obj, fam)        an acquisition that did not wait
 *   t0 = hws_prof_wait_begin(obj, fam) the first attempt failed and the
 *                                      thread is about to wait; the object's
 *                                      first contended acquisition records
 *                                      its call site here
 *   hws_prof_wait_end(obj, fam, t0, rc) the wait ended: rc 0 is a contended
 *                                      acquisition; otherwise a timeout or an
 *                                      interruption (condvars count every
 *                                      wait, whatever its result)
 *   hws_prof_released(obj)             before the release: ends a sampled hold
 *   hws_prof_end(obj)                  init or destroy: the entry ends, the
 *                                      next use starts a new one
 */
#ifndef HWS_PRELOAD_PROFILE_H
#define HWS_PRELOAD_PROFILE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define HWS_PROF_TC 256u          /* objects a thread's cache holds */
#define HWS_PROF_SAMPLE 256u      /* one sampled hold per this many acquisitions */
#define HWS_PROF_FOLD 256u        /* in-place counts reach the table this often */
#define HWS_PROF_HIDDEN __attribute__((visibility("hidden")))
#define HWS_PROF_TLS __attribute__((tls_model("initial-exec")))

struct hws_prof_hot {             /* one object in a thread's cache */
	_Atomic uintptr_t key;    /* the object's address; 0 = empty */
	_Atomic uint64_t tag;     /* the entry's tag when cached */
	_Atomic uint64_t acq;     /* acquisitions not flushed yet */
	uint32_t slot;
	uint32_t ends;            /* hws_prof_ends when last checked against the tag */
};
struct hws_prof_cold {            /* the same object's rarer counts */
	_Atomic uint64_t cont, wait_ns, max_wait_ns, timeouts, hold_n, hold_ns, max_hold_ns;
};
struct hws_prof_thread {
	struct hws_prof_hot hot[HWS_PROF_TC];
	struct hws_prof_cold cold[HWS_PROF_TC];
	uint64_t held_since;      /* when the sampled hold (hws_prof_held) began */
	struct hws_prof_thread *next;   /* registry of every block ever made */
	_Atomic int in_use;
};

/* This thread's block, NULL before its first profiled call. */
extern _Thread_local struct hws_prof_thread *hws_prof_me HWS_PROF_TLS HWS_PROF_HIDDEN;
/* The object whose hold this thread samples, or NULL: a variable of its own,
 * so that every release checks it with one load. */
extern _Thread_local const void *hws_prof_held HWS_PROF_TLS HWS_PROF_HIDDEN;
/* Per slot: (entry id << 1) | live; a cached entry is current while its
 * slot's tag is the one it cached. */
extern _Atomic uint64_t *hws_prof_tags HWS_PROF_HIDDEN;
/* Objects ended so far (inits and destroys of profiled objects). */
extern _Atomic uint32_t hws_prof_ends HWS_PROF_HIDDEN;

static inline unsigned hws_prof_hash(uintptr_t k)
{
	/* Two shifts, no multiply (this is on every acquisition): objects 8
	 * bytes or more apart land apart as long as they fit the cache, and
	 * objects whose addresses differ only above bit 11 still differ. */
	return (unsigned)((k >> 3) ^ (k >> 11)) % HWS_PROF_TC;
}

/* relaxed: each block is written by its thread only; the exit report reads
 * a snapshot of a live thread's counts. */
#define HWS_PROF_LD(x) atomic_load_explicit(&(x), memory_order_relaxed)
#define HWS_PROF_ADD(x, v) \
	atomic_store_explicit(&(x), HWS_PROF_LD(x) + (v), memory_order_relaxed)

void hws_prof_acquired_slow(const void *obj, unsigned fam);
void hws_prof_sample(struct hws_prof_thread *t, const void *obj);
void hws_prof_hold_end(const void *obj);
uint64_t hws_prof_wait_begin(const void *obj, unsigned fam);
enum { HWS_PROF_COUNTED = 1 };   /* wait_end: the acquisition is counted in place */
void hws_prof_wait_end(const void *obj, unsigned fam, uint64_t t0, int rc, unsigned flags);
void hws_prof_end(const void *obj);

/* Counting in place, for objects with two spare words (pthread_mutex_t):
 * the holder counts into the object itself, under the lock, so an
 * acquisition costs an increment on the lock's own cache line and nothing
 * else.  count is 0 in a fresh object; from the first acquisition on, the
 * acquisitions not yet in the table are count - 1, added to the table
 * every HWS_PROF_FOLD acquisitions (each of which also samples a hold,
 * marked by hold_since), when the object ends (hws_prof_end_place) and at
 * exit (read back from the object if its memory still holds it). */
struct hws_prof_place {
	_Atomic uint64_t count;
	_Atomic uint64_t hold_since;
};
void hws_prof_place_slow(const void *obj, unsigned fam, struct hws_prof_place *p, uint64_t n);
void hws_prof_place_hold_end(const void *obj, struct hws_prof_place *p);
/* The object ends: its in-place count goes to its entry first. */
void hws_prof_end_place(const void *obj, struct hws_prof_place *p);
/* At exit the profile reads back the in-place count of each live object of
 * a family that counts in place, through the reader that family registered
 * (from a constructor: mutex.c, omp_lock.c).  The reader returns the count
 * of a live object at obj, -1 when its memory no longer holds one, -2 when
 * it has no place. */
typedef long long (*hws_prof_place_reader)(uintptr_t obj);
void hws_prof_read_places_with(unsigned fam, hws_prof_place_reader read);

static inline void hws_prof_place_count(const void *obj, unsigned fam, struct hws_prof_place *p)
{
	/* relaxed: written by the holder only; the next holder is ordered
	 * after it by the lock. */
	uint64_t n = atomic_load_explicit(&p->count, memory_order_relaxed) + 1;
	atomic_store_explicit(&p->count, n, memory_order_relaxed);
	if (__builtin_expect(n == 1 || n > HWS_PROF_FOLD, 0))
		hws_prof_place_slow(obj, fam, p, n);
}

static inline void hws_prof_place_release(const void *obj, struct hws_prof_place *p)
{
	/* relaxed: as in hws_prof_place_count. */
	if (__builtin_expect(atomic_load_explicit(&p->hold_since, memory_order_relaxed) != 0, 0))
		hws_prof_place_hold_end(obj, p);
}

static inline void hws_prof_acquired(const void *obj, unsigned fam)
{
	struct hws_prof_thread *t = hws_prof_me;
	uintptr_t k = (uintptr_t)obj;
	if (__builtin_expect(t != NULL, 1)) {
		struct hws_prof_hot *e = &t->hot[hws_prof_hash(k)];
		/* relaxed: an object's init or destroy is ordered before its
		 * next use by the program itself (using an object while another
		 * thread destroys it is undefined), and it raised the count
		 * before returning. */
		if (__builtin_expect(HWS_PROF_LD(e->key) == k &&
				     e->ends == atomic_load_explicit(&hws_prof_ends,
								     memory_order_relaxed), 1)) {
			uint64_t n = HWS_PROF_LD(e->acq) + 1;
			atomic_store_explicit(&e->acq, n, memory_order_relaxed);
			if (__builtin_expect(n % HWS_PROF_SAMPLE == 0, 0))
				hws_prof_sample(t, obj);
			return;
		}
	}
	hws_prof_acquired_slow(obj, fam);
}

static inline void hws_prof_released(const void *obj)
{
	if (__builtin_expect(hws_prof_held == obj, 0))
		hws_prof_hold_end(obj);
}

/* Start-up (startup.c): 0, or an errno value after one line on stderr. */
int hws_prof_init(unsigned slots);
/* Exit (startup.c): the table on stderr and the JSON file. */
void hws_prof_report(void);

#endif
