// Object churn the C++ way: a million objects holding std::mutex,
// std::timed_mutex and std::condition_variable, owned by std::shared_ptr and
// dropped.  libstdc++'s std::mutex and std::timed_mutex never call
// pthread_mutex_destroy (their destructors are trivial), so a shim that keeps
// state outside the mutex leaks it for each one.  Run natively and under the
// shim, the peak RSS must stay flat.
//
// usage: churn_cxx TYPE [COUNT]   TYPE: mutex timed-mutex condvar all list
// Prints one line per type with the number of unexpected results; exit
// status 1 if there were any.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

namespace {

constexpr long batch = 4096;
long errors;

void check(bool ok)
{
	if (!ok)
		errors++;
}

struct guarded {
	std::mutex m;
	long value = 0;
};

struct timed {
	std::timed_mutex m;
	long value = 0;
};

struct signalled {
	std::mutex m;
	std::condition_variable cv;
	bool ready = false;
};

void use(guarded &g, long i)
{
	{
		std::lock_guard<std::mutex> lk(g.m);
		g.value = i;
	}
	check(g.m.try_lock());
	g.m.unlock();
}

void use(timed &t, long i)
{
	check(t.m.try_lock_for(std::chrono::milliseconds(10)));
	t.value = i;
	t.m.unlock();
	std::lock_guard<std::timed_mutex> lk(t.m);
}

void use(signalled &s, long i)
{
	std::unique_lock<std::mutex> lk(s.m);
	s.ready = true;
	s.cv.notify_one();
	s.cv.notify_all();
	if (i % 256 == 0)   // a wait whose predicate already holds
		check(s.cv.wait_for(lk, std::chrono::seconds(0), [&] { return s.ready; }));
}

template <class T> void churn(const char *name, long count)
{
	long before = errors;
	std::vector<std::shared_ptr<T>> live;
	live.reserve(batch);
	for (long done = 0; done < count;) {
		for (long i = 0; i < batch && done < count; i++, done++) {
			auto p = std::make_shared<T>();
			use(*p, done);
			live.push_back(std::move(p));
		}
		live.clear();   // the last owner goes: the objects are freed
	}
	std::printf("%s: %ld objects, %ld unexpected results\n", name, count, errors - before);
}

} // namespace

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "all";
	long count = argc > 2 ? std::atol(argv[2]) : 1000000;
	bool all = !std::strcmp(which, "all"), found = false;
	if (!std::strcmp(which, "list")) {
		std::puts("mutex\ntimed-mutex\ncondvar");
		return 0;
	}
	if (all || !std::strcmp(which, "mutex"))
		churn<guarded>("mutex", count), found = true;
	if (all || !std::strcmp(which, "timed-mutex"))
		churn<timed>("timed-mutex", count), found = true;
	if (all || !std::strcmp(which, "condvar"))
		churn<signalled>("condvar", count), found = true;
	if (!found) {
		std::fprintf(stderr, "churn_cxx: unknown type '%s' (churn_cxx list)\n", which);
		return 2;
	}
	return errors ? 1 : 0;
}
