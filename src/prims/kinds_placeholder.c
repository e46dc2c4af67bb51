/* Lock and barrier kind lists: replaced when the primitives land. */
#include <stddef.h>
#include <hwsync/lock.h>
#include <hwsync/barrier.h>

const char *const *hws_lock_kinds(void)
{
	static const char *const none[] = { NULL };
	return none;
}

const char *const *hws_barrier_kinds(void)
{
	static const char *const none[] = { NULL };
	return none;
}
