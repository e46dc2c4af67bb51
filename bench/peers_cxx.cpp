// C++20 peers: std::atomic<uint32_t>::wait/notify_one and std::barrier, as
// libstdc++ implements them (a spin, then a futex on Linux).
#include <atomic>
#include <barrier>
#include <new>
#include "bench/peers.h"

struct cxx_word {
	alignas(64) std::atomic<uint32_t> v{0};
};

struct cxx_barrier {
	std::barrier<> b;
	explicit cxx_barrier(unsigned n) : b(static_cast<std::ptrdiff_t>(n)) {}
};

extern "C" {

struct cxx_word *cxx_word_new(void)
{
	return new (std::nothrow) cxx_word;
}

void cxx_word_free(struct cxx_word *w)
{
	delete w;
}

uint32_t cxx_word_load(struct cxx_word *w)
{
	// acquire: pairs with the release store in cxx_word_store_notify_one
	return w->v.load(std::memory_order_acquire);
}

void cxx_word_store_notify_one(struct cxx_word *w, uint32_t v)
{
	// release: publishes what the notifier wrote before; pairs with the
	// acquire load of the waiter
	w->v.store(v, std::memory_order_release);
	w->v.notify_one();
}

void cxx_word_wait_while(struct cxx_word *w, uint32_t old)
{
	// acquire: pairs with the release store of the notifier
	while (w->v.load(std::memory_order_acquire) == old)
		w->v.wait(old, std::memory_order_acquire);
}

struct cxx_barrier *cxx_barrier_new(unsigned n)
{
	return new (std::nothrow) cxx_barrier(n);
}

void cxx_barrier_wait(struct cxx_barrier *b)
{
	b->b.arrive_and_wait();
}

void cxx_barrier_free(struct cxx_barrier *b)
{
	delete b;
}

}  // extern "C"
