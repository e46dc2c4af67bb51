/* Three-state mutex: generic table (algorithm in lock_mutex.h). */
#include "prims/lock_ops.h"
#include <hwsync/lock_mutex.h>

HWS_LOCK_OPS_INLINE(mutex)
