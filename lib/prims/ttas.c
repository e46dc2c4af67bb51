/* Test-and-test-and-set lock: generic table (algorithm in lock_ttas.h). */
#include "prims/lock_ops.h"
#include <hwsync/lock_ttas.h>

HWS_LOCK_OPS_INLINE(ttas)
