/* Lock kind list: replaced when the locks land. */
#include <stddef.h>
#include <hwsync/lock.h>

const char *const *hws_lock_kinds(void)
{
	static const char *const none[] = { NULL };
	return none;
}
