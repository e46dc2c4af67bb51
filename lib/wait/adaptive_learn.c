/* Learning the futex hand-off from this process's own wake-ups.
 *
 * A waker whose FUTEX_WAKE woke someone leaves the time it started that wake
 * in a slot of the sleeper hash table (futex.c); the first thread that wakes
 * there takes it and reports how long after it ran again.  That is the same
 * quantity the helper-thread measurement takes (wake until the sleeper runs),
 * measured on the program's real wake-ups instead of a thread of our own.
 * Samples are gathered in windows of 16 (the measurement's count); when a
 * window is full its median becomes the process's learned hand-off, so the
 * estimate follows the machine as it is loaded now and one preempted sleeper
 * (a sample of milliseconds) cannot move it.  The first estimate comes
 * sooner, from the median of the process's first FIRST samples (two
 * preempted sleepers among them cannot move it either): until then every
 * wait spins the default 100 us, against which no wait of a few hundred
 * microseconds counts as long, so a condition variable signalled every
 * 200 us spun through its first 20 waits (docs/wait-policies.md).
 *
 * The window belongs to whoever holds `busy`; a sample that arrives while
 * another thread holds it is dropped, so nobody ever waits here.
 */
#include <stdbool.h>
#include "wait/internal.h"

#define WINDOW 16
#define FIRST 5

static struct {
	_Atomic bool busy;
	unsigned n;
	uint64_t s[WINDOW];
	uint64_t total;
} win;

void hws_adaptive_learn(uint64_t handoff_ns)
{
	uint64_t sorted[WINDOW], median, total;

	/* acquire: pairs with the release below; the window is ours until then. */
	if (atomic_exchange_explicit(&win.busy, true, memory_order_acquire))
		return;
	win.s[win.n++] = handoff_ns;
	total = ++win.total;
	if (win.n == WINDOW || total == FIRST) {
		/* insertion sort: at most 16 values */
		for (unsigned i = 0; i < win.n; i++) {
			unsigned j = i;
			for (; j > 0 && sorted[j - 1] > win.s[i]; j--)
				sorted[j] = sorted[j - 1];
			sorted[j] = win.s[i];
		}
		median = sorted[win.n / 2];
		if (win.n == WINDOW)
			win.n = 0;
		hws_adaptive_set_learned(median, total);
	}
	/* release: pairs with the acquire exchange above. */
	atomic_store_explicit(&win.busy, false, memory_order_release);
}
