/* "auto": the lock kind for this machine (rule and measurements: docs/locks.md). */
#include "prims/lock_ops.h"

const struct hws_lock_ops *hws_lock_auto_choice(const char **default_policy)
{
	*default_policy = "adaptive";
	return &hws_lock_ops_mutex;
}
