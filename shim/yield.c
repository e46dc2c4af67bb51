/* sched_yield: the system call, with the call noted (hws_yield_noted), so
 * that a waiting lock knows the program's threads give their CPU away by
 * their own choice, perhaps while they hold the lock, and does not poll
 * against them (docs/locks.md, "A few yields before the park"). */
#include <sched.h>
#include <hwsync/arch.h>
#include "shim/common.h"

HWS_EXPORT int sched_yield(void)
{
	return hws_yield_noted();
}
