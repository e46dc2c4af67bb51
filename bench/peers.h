/* Peers and hwsync primitives behind one small interface, so that every
 * experiment runs them the same way.  Barriers: hwsync kinds (per wait
 * policy), glibc pthread_barrier, GNU OpenMP `omp barrier`, Concurrency Kit,
 * C++20 std::barrier.  Wait/notify on a word: C++20 std::atomic::wait. */
#ifndef HWS_BENCH_PEERS_H
#define HWS_BENCH_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- C++20 (peers_cxx.cpp) ---------------------------------------------- */
struct cxx_word;                  /* std::atomic<uint32_t> */
struct cxx_word *cxx_word_new(void);
void cxx_word_free(struct cxx_word *w);
uint32_t cxx_word_load(struct cxx_word *w);
void cxx_word_store_notify_one(struct cxx_word *w, uint32_t v);   /* store, notify_one */
void cxx_word_wait_while(struct cxx_word *w, uint32_t old);      /* until != old */

struct cxx_barrier;               /* std::barrier<> */
struct cxx_barrier *cxx_barrier_new(unsigned n);
void cxx_barrier_wait(struct cxx_barrier *b);                    /* arrive_and_wait */
void cxx_barrier_free(struct cxx_barrier *b);

/* ---- barriers (barrier_impls.c) ----------------------------------------- */
/* Every barrier implementation, peers first; hwsync kinds are hwsync-<kind>
 * (every kind hws_barrier_kinds() names), run once per wait policy.
 * bench_barrier_impls appends the whole list to buf (a string), after a
 * comma when buf is not empty. */
#define BENCH_BARRIER_PEERS "pthread-barrier,omp-barrier,cxx-barrier,ck-centralized," \
	"ck-dissemination,ck-combining,ck-tournament"
/* What each of them is, for an experiment's --help: kept next to the names
 * so that a new peer is described wherever it runs. */
#define BENCH_BARRIER_PEERS_HELP \
"    pthread-barrier   pthread_barrier_wait (glibc)\n" \
"    omp-barrier       #pragma omp barrier in a GNU OpenMP team\n" \
"    cxx-barrier       C++20 std::barrier::arrive_and_wait (libstdc++)\n" \
"    ck-centralized    Concurrency Kit ck_barrier_centralized\n" \
"    ck-dissemination  Concurrency Kit ck_barrier_dissemination\n" \
"    ck-combining      Concurrency Kit ck_barrier_combining (groups of two threads)\n" \
"    ck-tournament     Concurrency Kit ck_barrier_tournament\n"
void bench_barrier_impls(char *buf, size_t len);
/* That list, filled at start-up: the .impls of experiments that run every
 * barrier and nothing else. */
extern char bench_barrier_all[];
static inline bool bench_barrier_is_hwsync(const char *impl)
{
	return impl[0] == 'h' && impl[1] == 'w';
}
struct bench_barrier;
/* 0, or ENOTSUP/EINVAL with the reason in why (the row is then skipped). */
int bench_barrier_new(struct bench_barrier **b, const char *impl, const char *policy,
		      unsigned n, char *why, size_t whylen);
/* bench_barrier_new for n threads of cell c's row (its impl and policy): 0,
 * or the error with the reason in c->skip (the cell is then skipped). */
struct bench_cell;
int bench_barrier_of(struct bench_cell *c, unsigned n, struct bench_barrier **b);
void bench_barrier_wait(struct bench_barrier *b, unsigned tid);
void bench_barrier_free(struct bench_barrier *b);
/* Run fn(arg, i) on n pinned threads the way this barrier needs them (an
 * OpenMP team for omp-barrier, else plain threads). */
int bench_barrier_team(struct bench_barrier *b, unsigned n, const int *cpus,
		       void (*fn)(void *arg, unsigned i), void *arg);

/* ---- locks (lock_impls.c) ----------------------------------------------- */
/* Every lock implementation, peers first; hwsync kinds are hwsync-<kind>
 * (every kind hws_lock_kinds() names), run once per wait policy except
 * hwsync-auto, which picks its own.  bench_lock_impls appends the whole list
 * to buf as bench_barrier_impls does. */
#define BENCH_LOCK_PEERS "pthread-mutex,pthread-spin,omp-lock,omp-critical,ck-fas,ck-ticket," \
	"ck-mcs,ck-clh"
void bench_lock_impls(char *buf, size_t len);
static inline bool bench_lock_is_hwsync(const char *impl)
{
	return impl[0] == 'h' && impl[1] == 'w';
}
struct bench_lock;
struct hws_lock_stats;
/* For n threads (tid 0..n-1); stats: count [RAINA]'s stages (hwsync only).
 * 0, or ENOTSUP/EINVAL with the reason in why (the row is then skipped). */
int bench_lock_new(struct bench_lock **l, const char *impl, const char *policy, unsigned n,
		   bool stats, char *why, size_t whylen);
void bench_lock_acquire(struct bench_lock *l, unsigned tid);
void bench_lock_release(struct bench_lock *l, unsigned tid);
/* hwsync rows: the stage counters so far (true); peers: false. */
bool bench_lock_stats(struct bench_lock *l, struct hws_lock_stats *st);
void bench_lock_free(struct bench_lock *l);
/* One thread (tid 0), alone: PAIRS acquire+release pairs back to back, each
 * kind's calls in a loop of their own; TSC cycles for all of them. */
uint64_t bench_lock_pairs(struct bench_lock *l, uint64_t pairs);
/* Run fn(arg, i) on n pinned threads the way this lock needs them (an OpenMP
 * team for omp-*, else plain threads). */
int bench_lock_team(struct bench_lock *l, unsigned n, const int *cpus,
		    void (*fn)(void *arg, unsigned i), void *arg);

/* ---- hwsync locks through their typed headers (lock_typed.c) ----------- */
/* hwsync-typed-<kind>: hwsync/lock_<kind>.h, whose fast paths inline into the
 * caller, against the generic hws_lock_* API of the hwsync-<kind> rows.
 * bench_typed_impls appends them to buf as bench_lock_impls does. */
void bench_typed_impls(char *buf, size_t len);
struct bench_typed;
/* 0, or EINVAL with the reason in why (unknown kind, bad policy). */
int bench_typed_new(struct bench_typed **t, const char *impl, const char *policy, char *why,
		    size_t whylen);
/* As bench_lock_pairs. */
uint64_t bench_typed_pairs(struct bench_typed *t, uint64_t pairs);
void bench_typed_free(struct bench_typed *t);

#ifdef __cplusplus
}
#endif
#endif
