/* Barrier kind list: replaced when the barriers land. */
#include <stddef.h>
#include <hwsync/barrier.h>

const char *const *hws_barrier_kinds(void)
{
	static const char *const none[] = { NULL };
	return none;
}
