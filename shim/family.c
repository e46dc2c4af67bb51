/* The families' names, as the stats summary and the profile print them. */
#include "shim/family.h"

const char *const hws_family_name[HWS_FAM_N] = {
	[HWS_FAM_MUTEX] = "pthread_mutex", [HWS_FAM_OMP_LOCK] = "omp_lock",
	[HWS_FAM_OMP_NEST] = "omp_nest_lock", [HWS_FAM_OMP_CRITICAL] = "omp critical",
	[HWS_FAM_SPIN] = "pthread_spin", [HWS_FAM_COND] = "pthread_cond",
	[HWS_FAM_SEM] = "sem", [HWS_FAM_BARRIER] = "pthread_barrier",
	[HWS_FAM_OMP_BARRIER] = "omp barrier", [HWS_FAM_RWLOCK_RD] = "pthread_rwlock",
	[HWS_FAM_RWLOCK_WR] = "pthread_rwlock",
};
