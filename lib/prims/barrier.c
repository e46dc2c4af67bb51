/* Barriers: creation by kind name, dispatch, episode count, and the
 * per-thread slots that dissemination, tree and hier use as thread index. */
#include <string.h>
#include "prims/barrier_internal.h"

#define KIND_(k) &hws_barrier_##k,
static const struct hws_barrier_kind *const kinds[] = { HWS_BARRIER_KINDS(KIND_) };
#undef KIND_
#define NAME_(k) #k,
static const char *const names[] = { HWS_BARRIER_KINDS(NAME_) NULL };
#undef NAME_
#define LIST_(k) #k ", "
static const char known[] = HWS_BARRIER_KINDS(LIST_);   /* "central, ..., tree, " */
#undef LIST_
#define NKINDS (sizeof kinds / sizeof kinds[0])

const char *const *hws_barrier_kinds(void)
{
	return names;
}

static _Atomic uint64_t next_id = 1;

int hws_barrier_init_common(hws_barrier_t *b, const struct hws_barrier_kind *k, unsigned n,
			    const hws_wait_t *w, _Atomic uint64_t *episodes, int with_slots)
{
	b->kind = k;
	b->n = n;
	b->wait = *w;
	/* relaxed: only uniqueness matters. */
	b->id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
	atomic_init(&b->nslots, 0);
	b->episodes = episodes;
	atomic_init(episodes, 0);
	b->owners = NULL;
	if (with_slots && !(b->owners = calloc(n, sizeof *b->owners)))
		return hws_fail(ENOMEM, "barrier: out of memory");
	return 0;
}

_Thread_local struct hws_slot_cache_entry hws_slot_cache[HWS_SLOT_CACHE];

/* The thread's key is the address of its slot cache: unique among live
 * threads.  A thread that reuses the storage of one that exited inherits its
 * slots, which is what a pool that replaces a worker wants. */
int hws_barrier_slot_slow(hws_barrier_t *b, unsigned *slot, int *fresh)
{
	uintptr_t key = (uintptr_t)&hws_slot_cache[0];
	/* acquire: pairs with the claim below, bounding the scan. */
	unsigned s, claimed = atomic_load_explicit(&b->nslots, memory_order_acquire);

	*fresh = 0;
	for (s = 0; s < claimed && s < b->n; s++)
		/* relaxed: our own key was stored by this thread. */
		if (atomic_load_explicit(&b->owners[s], memory_order_relaxed) == key)
			goto found;
	do {
		if (claimed >= b->n)
			return hws_fail(EINVAL, "%s barrier for %u threads: called by one thread "
					"too many", b->kind->name, b->n);
		/* acq_rel: orders claims among threads; no data rides on it. */
	} while (!atomic_compare_exchange_weak_explicit(&b->nslots, &claimed, claimed + 1,
						       memory_order_acq_rel,
						       memory_order_acquire));
	s = claimed;
	/* relaxed: read back only by this thread (scan above). */
	atomic_store_explicit(&b->owners[s], key, memory_order_relaxed);
	*fresh = 1;
found:
	hws_slot_cache[b->id % HWS_SLOT_CACHE] = (struct hws_slot_cache_entry){ b->id, s };
	*slot = s;
	return 0;
}

int hws_barrier_create_with(hws_barrier_t **out, const char *kind, unsigned nthreads,
			    const hws_wait_t *w)
{
	const struct hws_barrier_kind *k = NULL;

	int rc;

	if (!out)
		return hws_fail(EINVAL, "hws_barrier_create_with: NULL result pointer");
	if ((rc = hws_wait_check(w, "hws_barrier_create_with")))
		return rc;
	if (!kind || !*kind)
		kind = "central";
	for (size_t i = 0; i < NKINDS; i++)
		if (!strcmp(names[i], kind))
			k = kinds[i];
	if (!k)
		return hws_fail(EINVAL, "unknown barrier kind '%s' (known: %.*s)", kind,
				(int)sizeof known - 3, known);
	if (nthreads < k->min_threads || nthreads > k->max_threads) {
		if (k->min_threads == k->max_threads)
			return hws_fail(EINVAL, "%s barrier is for exactly %u threads, not %u",
					k->name, k->min_threads, nthreads);
		return hws_fail(EINVAL, "%s barrier: nthreads must be in [%u, %u], not %u",
				k->name, k->min_threads, k->max_threads, nthreads);
	}
	return k->create(out, nthreads, w);
}

int hws_barrier_create(hws_barrier_t **out, const char *kind, unsigned nthreads,
		       const char *wait_policy)
{
	hws_wait_t w;
	int rc;

	if (!out)
		return hws_fail(EINVAL, "hws_barrier_create: NULL result pointer");
	if ((rc = hws_prims_policy(&w, wait_policy, "barrier")))
		return rc;
	return hws_barrier_create_with(out, kind, nthreads, &w);
}

int hws_barrier_wait(hws_barrier_t *b)
{
	if (!b)
		return hws_fail(EINVAL, "hws_barrier_wait: NULL barrier");
	return b->kind->wait(b);
}

void hws_barrier_destroy(hws_barrier_t *b)
{
	if (!b)
		return;
	free(b->owners);
	free(b);
}

const char *hws_barrier_kind(const hws_barrier_t *b)
{
	return b ? b->kind->name : NULL;
}

uint64_t hws_barrier_episodes(const hws_barrier_t *b)
{
	/* relaxed: a statistic. */
	return b ? atomic_load_explicit(b->episodes, memory_order_relaxed) : 0;
}
