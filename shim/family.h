/* The families of objects the shim interposes, as the lock paths, the stats
 * and the profile count them (names: family.c). */
#ifndef HWS_PRELOAD_FAMILY_H
#define HWS_PRELOAD_FAMILY_H

enum hws_family {
	HWS_FAM_MUTEX, HWS_FAM_OMP_LOCK, HWS_FAM_OMP_NEST, HWS_FAM_OMP_CRITICAL, HWS_FAM_NLOCKS,
	/* families below keep their own counters */
	HWS_FAM_SPIN = HWS_FAM_NLOCKS, HWS_FAM_COND, HWS_FAM_SEM, HWS_FAM_BARRIER,
	HWS_FAM_OMP_BARRIER, HWS_FAM_RWLOCK_RD, HWS_FAM_RWLOCK_WR, HWS_FAM_N
};
extern const char *const hws_family_name[HWS_FAM_N];

#endif
