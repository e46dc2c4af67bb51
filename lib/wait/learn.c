/* Learning slots for objects too small to hold their own: a fixed table of
 * 32-bit words indexed by a hash of an address.  No allocation and no lock,
 * and an object that is never destroyed (or is freed without a destroy)
 * leaves nothing behind.  Two objects that share a slot only mix their
 * learning, so each user's encoding must read any 32-bit value as some valid
 * state; the table is zero at start, and zero must mean "nothing learned".
 *
 * The hash uses every bit of the address, so two bytes of one object have
 * different slots (almost always): two users of the same object key by
 * different bytes of it.  4096 slots (16 KiB, touched only where used): of
 * n objects in use, about n / 4096 share a slot with another.  A slot is
 * written at most once per wait or acquisition, and mostly on paths that
 * sleep anyway, so the sixteen slots of a cache line do not make a hot spot.
 */
#include "wait/internal.h"

#define LEARN_BITS 12

static _Atomic uint32_t slots[1u << LEARN_BITS];

_Atomic uint32_t *hws_learn_slot(const void *addr)
{
	uint64_t x = (uintptr_t)addr;

	/* fold the high bits in, then Fibonacci hashing: the top bits of the
	 * product depend on every bit of the address */
	x ^= x >> 32;
	x *= 0x9e3779b97f4a7c15ull;
	return &slots[x >> (64 - LEARN_BITS)];
}
