/* sched_yield: the system call, counted while it runs (hws_yield_counted),
 * so that a waiting lock knows a thread of the program has given its CPU
 * away by its own choice, perhaps while it holds the lock, and does not
 * poll against it (docs/locks.md, "A busy machine: no spinning"). */
#include <sched.h>
#include <hwsync/arch.h>

int sched_yield(void)
{
	return hws_yield_counted();
}
