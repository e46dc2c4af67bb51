/* Learning slots for objects too small to hold their own: a fixed table of
 * 32-bit words indexed by a hash of the object's address.  No allocation and
 * no lock; two objects that share a slot only mix their learning. */
#include "wait/internal.h"

#define LEARN_SLOTS 4096

static _Atomic uint32_t slots[LEARN_SLOTS];

_Atomic uint32_t *hws_learn_slot(const void *addr)
{
	uint64_t x = (uintptr_t)addr >> 2;
	x ^= x >> 21;
	x *= 0x9e3779b97f4a7c15ull;
	return &slots[(x >> 40) % LEARN_SLOTS];
}
