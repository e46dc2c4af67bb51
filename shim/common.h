/* The LD_PRELOAD shim (not installed): the rule every file of it follows,
 * the map of its files, and the marks their code shares.
 *
 * Ownership rule: every pthread/sem/omp object is owned entirely by the shim
 * or entirely by the native implementation (glibc, libgomp), decided once per
 * object (at init, or lazily for statically initialised mutexes and condvars)
 * and recorded in the object itself, or, for the objects too small to record
 * it (OpenMP locks and critical sections), decided once per process.  Every
 * shim-owned object keeps its whole state in place: nothing is allocated per
 * object, so objects abandoned without destroy leak nothing.  Native-owned objects
 * are passed to the native function unchanged; glibc's internal calls (for
 * example pthread_cond_wait re-locking its mutex) therefore only ever see
 * native-owned objects.  See docs/preload.md.
 *
 * Files, one job each (a .c that others call has the header of its name);
 * from the bottom up, a file calls only files listed above it:
 *   say.c          one line on stderr
 *   outfile.c      the per-process output files
 *   natives.c      the native functions (gomp.h: libgomp's, on first use)
 *   family.c       the families of interposed objects, by name
 *   time.c         deadlines
 *   spin_wait.c    the spin lock's waiter
 *   config.c       the HWSYNC_* environment, read and checked into hws_cfg
 *   passthrough.c  what went native
 *   trace.c, profile.c, stats.c   what the instrumented paths record
 *   startup.c      READY or OFF, once; starts what hws_cfg turns on; the
 *                  report at exit
 *   shim_lock.c    the lock paths: inline in shim_lock.h over the lock
 *                  words (lock_words.h), the waits and counting out of line
 * and on top the entry points, one file per family of interposed functions:
 * spin.c, barrier.c, rwlock.c, gomp_barrier.c, mutex.c, sem.c, omp_lock.c,
 * yield.c (sched_yield, noted for the lock waiters), and cond.c, which also
 * calls mutex.c (mutex.h).
 */
#ifndef HWS_PRELOAD_COMMON_H
#define HWS_PRELOAD_COMMON_H

#define HWS_EXPORT __attribute__((visibility("default")))
/* The hottest entry points (lock and unlock) start on a 64-byte boundary, so
 * that each fast path is one fetch block wherever other changes move the
 * code: their uncontended cost in `hwsync bench shim` moved by up to 10 %
 * with the placement alone. */
#define HWS_FETCH_ALIGNED __attribute__((aligned(64)))
/* Thread-local data the shim reads on a hot path: the shim is loaded at
 * start-up (LD_PRELOAD), so its thread-local block is static and reachable
 * without a __tls_get_addr call. */
#define HWS_STATIC_TLS __attribute__((tls_model("initial-exec")))
/* A rare path (counting, another lock kind) kept out of the entry points:
 * inlined, its frame would make the plain path save and restore registers
 * too. */
#define HWS_OUTLINE static __attribute__((noinline, unused))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#endif
