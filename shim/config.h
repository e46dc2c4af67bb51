/* The shim's configuration (config.c): the HWSYNC_* environment, read and
 * checked once at start-up, then only read. */
#ifndef HWS_PRELOAD_CONFIG_H
#define HWS_PRELOAD_CONFIG_H

#include <stdio.h>
#include <hwsync/wait.h>

struct hws_shim_config {
	char lock_kind[32];      /* HWSYNC_LOCK, default "auto" */
	char lock_used[32];      /* the kind's name as the library spells it */
	char wait_spec[128];     /* HWSYNC_WAIT, default "adaptive" */
	char barrier_kind[32];   /* HWSYNC_BARRIER, default "auto" (gomp_barrier.c) */
	char rwlock_kind[32];    /* HWSYNC_RWLOCK, default "reader" */
	int rwlock_bravo;        /* default rwlocks run BRAVO, not the reader-preferring
				  * core (rwlock.c); `writer` is only for rwlocks that
				  * ask for it */
	hws_wait_t wait;         /* HWSYNC_WAIT, parsed once: every object waits with it */
	hws_wait_t spin_wait;    /* pthread_spin_*: HWSYNC_WAIT if it never sleeps, else
				  * pause (pause, spin: the spin lock's own backoff) */
	int stats, verbose, trace;
	char trace_file[1200];   /* the name HWSYNC_TRACE became (hws_open_output) */
	int profile;             /* HWSYNC_PROFILE: the per-object profile (profile.c) */
	int omp_ends;            /* HWSYNC_OMP_ENDS: loop and sections ends on the team's
				  * hwsync barrier (gomp_barrier.c) */
	int instrument;          /* HWS_INSTR_*: what the lock paths count or record */
	int slice;               /* lock holders ask for the kernel's time-slice
				  * extension (arch.h, hws_slice_hold): set at
				  * start-up where the kernel offers it */
	FILE *trace_out;         /* HWSYNC_TRACE's file (hws_open_output), or NULL */
	unsigned profile_slots;  /* HWSYNC_PROFILE_SLOTS: objects the profile can hold */
	unsigned profile_top;    /* HWSYNC_PROFILE_TOP: rows of the table at exit */
	FILE *profile_file;      /* the profile's JSON file (hws_open_output), or NULL */
	char profile_path[1200]; /* its name; "" for none */
	int pid;                 /* process that read the configuration */
	int err_fd;              /* stderr as it was at start-up (programs such as
				  * xz close stderr before exit) */
};
extern struct hws_shim_config hws_cfg;
/* What default rwlocks run, in the words of the messages. */
static inline const char *hws_cfg_default_rwlock(void)
{
	return hws_cfg.rwlock_bravo ? "bravo" : "reader";
}
/* hws_cfg.instrument: 0 on the plain paths; COUNT: stats or trace, which
 * read the clock on every acquisition; PROFILE: the profile, which reads it
 * only when a thread waits (and for sampled holds). */
enum { HWS_INSTR_COUNT = 1, HWS_INSTR_PROFILE = 2 };
/* Read and check the environment into hws_cfg, opening the output files it
 * names (config.c): 0 when the shim can run, else an errno value after one
 * line on stderr.  Starting what it asks for is startup.c's. */
int hws_shim_configure(void);

#endif
