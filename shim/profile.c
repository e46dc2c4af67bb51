/* HWSYNC_PROFILE: the per-object contention profile; the design is in
 * profile.h, the JSON schema and how to read the report in docs/preload.md.
 *
 * The table.  slots[] holds one entry per object life, tags[] the entry's
 * tag ((id << 1) | live) that the threads' caches compare against, with one
 * more slot at the end for objects that found no room (its tag never
 * changes).  A slot's key is the object's address | LIVE while the object
 * lives, the bare address once it ended (so the probe chains through it stay
 * whole), CLAIMED while a thread sets the slot up, and 0 before first use.
 * Entries are found by linear probing over at most WINDOW slots.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <unwind.h>
#include "shim/config.h"
#include "shim/family.h"
#include "shim/profile.h"
#include "shim/say.h"

#define LIVE ((uintptr_t)1)
#define CLAIMED ((uintptr_t)2)
#define WINDOW 64u
#define NSITE 4
#define OVERFLOW_TAG 3u           /* id 1, live: the overflow slot's tag */

enum { SITE_NONE, SITE_WALKING, SITE_READY };

struct slot {
	_Atomic uintptr_t key;
	_Atomic uint32_t site_state;
	uint32_t fam;
	uint64_t id;
	_Atomic uint64_t acq, cont, wait_ns, max_wait_ns, timeouts, hold_n, hold_ns, max_hold_ns;
	uintptr_t site[NSITE];
	uint32_t nsite;
};

_Thread_local struct hws_prof_thread *hws_prof_me;
_Thread_local const void *hws_prof_held;
_Atomic uint64_t *hws_prof_tags;
_Atomic uint32_t hws_prof_ends;
static _Thread_local int busy HWS_PROF_TLS;   /* in a slow path of this file */

static struct slot *slots;
static size_t nslots, mask;
static _Atomic uint64_t next_id = 2;
static _Atomic uint64_t not_recorded, overflow_acq, recycled, lost_acq;
static _Atomic(struct hws_prof_thread *) registry;
static pthread_key_t exit_key;
static uintptr_t shim_lo, shim_hi;   /* the shim's code, skipped in call sites */

/* ---- start-up ---- */

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)arg;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + p->p_vaddr;
		if (p->p_type == PT_LOAD && (p->p_flags & PF_X) && me >= lo && me < lo + p->p_memsz) {
			shim_lo = lo;
			shim_hi = lo + p->p_memsz;
			return 1;
		}
	}
	return 0;
}

static _Unwind_Reason_Code warm_step(struct _Unwind_Context *ctx, void *arg)
{
	(void)ctx;
	(void)arg;
	return _URC_END_OF_STACK;
}

static void retire(void *block);

int hws_prof_init(unsigned n)
{
	nslots = n;
	mask = n - 1;
	/* One mapping for the table and its tags, touched only as objects
	 * arrive: the program's memory grows with the objects it uses, up to
	 * this bound. */
	size_t bytes = (n + 1) * sizeof(struct slot) + (n + 1) * sizeof(uint64_t);
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		hws_shim_say("HWSYNC_PROFILE: cannot map a table of %u objects (%zu bytes); "
			     "running on the native implementation", n, bytes);
		return ENOMEM;
	}
	slots = m;
	hws_prof_tags = (_Atomic uint64_t *)(void *)(slots + n + 1);
	atomic_init(&hws_prof_tags[n], OVERFLOW_TAG);
	if (pthread_key_create(&exit_key, retire)) {
		hws_shim_say("HWSYNC_PROFILE: no thread key left; running on the native "
			     "implementation");
		return EAGAIN;
	}
	dl_iterate_phdr(find_self, (void *)(uintptr_t)hws_prof_init);
	/* The unwinder's first call sets up what it keeps; do it here rather
	 * than on the first contended lock. */
	_Unwind_Backtrace(warm_step, NULL);
	return 0;
}

/* ---- threads ---- */

static struct hws_prof_thread *make_thread(void)
{
	struct hws_prof_thread *t;
	/* acquire: pairs with the release CAS that pushed each block. */
	for (t = atomic_load_explicit(&registry, memory_order_acquire); t; t = t->next) {
		int free_ = 0;
		/* acquire: pairs with the release in retire (flushed, zeroed). */
		if (atomic_compare_exchange_strong_explicit(&t->in_use, &free_, 1,
							    memory_order_acquire,
							    memory_order_relaxed))
			break;
	}
	if (!t) {
		/* mmap, not malloc: an allocator may lock mutexes. */
		void *m = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		t = m;
		atomic_init(&t->in_use, 1);
		t->next = atomic_load_explicit(&registry, memory_order_relaxed);
		/* release: publishes the block's fields with it. */
		while (!atomic_compare_exchange_weak_explicit(&registry, &t->next, t,
							      memory_order_release,
							      memory_order_relaxed))
			;
	}
	hws_prof_held = NULL;
	pthread_setspecific(exit_key, t);
	hws_prof_me = t;
	return t;
}

/* ---- the table ---- */

static inline size_t slot_hash(uintptr_t a)
{
	return (size_t)(((uint64_t)a * 0x9E3779B97F4A7C15ull) >> 20) & mask;
}

static void max_into(_Atomic uint64_t *m, uint64_t v)
{
	/* relaxed: a statistic; the exit report reads it after every flush. */
	uint64_t cur = atomic_load_explicit(m, memory_order_relaxed);
	while (v > cur && !atomic_compare_exchange_weak_explicit(m, &cur, v, memory_order_relaxed,
								 memory_order_relaxed))
		;
}

/* The slot of obj's live entry, set up if insert is true; nslots (the
 * overflow slot) when the window has no room, or -1 when not found and not
 * inserting. */
static long find(uintptr_t a, unsigned fam, int insert)
{
	uintptr_t want = a | LIVE;
	for (;;) {
		long empty = -1, reuse = -1;
		for (size_t i = 0; i < WINDOW && i < nslots; i++) {
			size_t ix = (slot_hash(a) + i) & mask;
			struct slot *s = &slots[ix];
			/* acquire: pairs with the release store of the key in
			 * find (the slot's fields are set up). */
			uintptr_t k = atomic_load_explicit(&s->key, memory_order_acquire);
			while (k == CLAIMED) {   /* someone sets it up: a few stores */
				hws_yield();
				/* acquire: as above. */
				k = atomic_load_explicit(&s->key, memory_order_acquire);
			}
			if (k == want)
				return (long)ix;
			if (k == 0) {
				empty = (long)ix;
				break;   /* nothing beyond was ever chained through here */
			}
			/* relaxed: an ended entry's site state no longer changes. */
			if (reuse < 0 && !(k & LIVE) &&
			    atomic_load_explicit(&s->site_state, memory_order_relaxed) == SITE_NONE)
				reuse = (long)ix;
		}
		if (!insert)
			return -1;
		long ix = empty >= 0 ? empty : reuse;
		if (ix < 0) {
			atomic_fetch_add_explicit(&not_recorded, 1, memory_order_relaxed);
			return (long)nslots;
		}
		struct slot *s = &slots[ix];
		/* relaxed: a guess for the CAS. */
		uintptr_t k = atomic_load_explicit(&s->key, memory_order_relaxed);
		if ((ix == empty && k != 0) || (ix != empty && (k & LIVE || k == 0 || k == CLAIMED)))
			continue;   /* changed under us: look again */
		/* relaxed: CLAIMED publishes nothing; the key's release store below
		 * does. */
		if (!atomic_compare_exchange_strong_explicit(&s->key, &k, CLAIMED,
							     memory_order_relaxed,
							     memory_order_relaxed))
			continue;
		if (ix != empty) {
			/* relaxed: counters of an ended entry, read at exit only. */
			atomic_fetch_add_explicit(&recycled, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&lost_acq, HWS_PROF_LD(s->acq),
						  memory_order_relaxed);
		}
		/* relaxed: ids need only be unique. */
		s->id = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
		s->fam = fam;
		s->nsite = 0;
		atomic_store_explicit(&s->site_state, SITE_NONE, memory_order_relaxed);
		_Atomic uint64_t *c = &s->acq;
		for (int f = 0; f < 8; f++)
			atomic_store_explicit(&c[f], 0, memory_order_relaxed);
		/* relaxed: a cache that reads the new tag then reads counters it
		 * adds to with atomics; the zeroing above is ordered by the key's
		 * release for find's readers. */
		atomic_store_explicit(&hws_prof_tags[ix], s->id << 1 | 1, memory_order_relaxed);
		/* release: pairs with the acquire loads of the key in find. */
		atomic_store_explicit(&s->key, want, memory_order_release);
		return ix;
	}
}

/* Add a cached entry into the table and empty it. */
static void flush(struct hws_prof_thread *t, unsigned i)
{
	struct hws_prof_hot *e = &t->hot[i];
	struct hws_prof_cold *c = &t->cold[i];
	uint64_t acq = HWS_PROF_LD(e->acq);
	if (!HWS_PROF_LD(e->key))
		return;
	if (e->slot == nslots) {
		atomic_fetch_add_explicit(&overflow_acq, acq, memory_order_relaxed);
	} else if ((atomic_load_explicit(&hws_prof_tags[e->slot], memory_order_relaxed) | 1) !=
		   (HWS_PROF_LD(e->tag) | 1)) {
		/* relaxed (here and below): statistics, read at exit after every
		 * flush. */
		atomic_fetch_add_explicit(&lost_acq, acq, memory_order_relaxed);
	} else {
		struct slot *s = &slots[e->slot];
		atomic_fetch_add_explicit(&s->acq, acq, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->cont, HWS_PROF_LD(c->cont), memory_order_relaxed);
		atomic_fetch_add_explicit(&s->wait_ns, HWS_PROF_LD(c->wait_ns), memory_order_relaxed);
		atomic_fetch_add_explicit(&s->timeouts, HWS_PROF_LD(c->timeouts),
					  memory_order_relaxed);
		atomic_fetch_add_explicit(&s->hold_n, HWS_PROF_LD(c->hold_n), memory_order_relaxed);
		atomic_fetch_add_explicit(&s->hold_ns, HWS_PROF_LD(c->hold_ns), memory_order_relaxed);
		max_into(&s->max_wait_ns, HWS_PROF_LD(c->max_wait_ns));
		max_into(&s->max_hold_ns, HWS_PROF_LD(c->max_hold_ns));
	}
	atomic_store_explicit(&e->key, 0, memory_order_relaxed);
	atomic_store_explicit(&e->acq, 0, memory_order_relaxed);
	memset(c, 0, sizeof *c);
}

static void flush_all(struct hws_prof_thread *t)
{
	for (unsigned i = 0; i < HWS_PROF_TC; i++)
		flush(t, i);
}

static void retire(void *block)
{
	struct hws_prof_thread *t = block;
	busy = 1;
	flush_all(t);
	busy = 0;
	if (hws_prof_me == t) {
		hws_prof_me = NULL;
		hws_prof_held = NULL;
	}
	/* release: the flushed, emptied block reaches its next owner. */
	atomic_store_explicit(&t->in_use, 0, memory_order_release);
}

/* This thread's cache entry for obj, made current (the old occupant of its
 * place flushed); NULL when nothing can be counted here. */
static struct hws_prof_hot *entry(const void *obj, unsigned fam, struct hws_prof_thread **tp)
{
	struct hws_prof_thread *t = hws_prof_me;
	uintptr_t k = (uintptr_t)obj;
	if (!t && !(t = make_thread()))
		return NULL;
	*tp = t;
	unsigned i = hws_prof_hash(k);
	struct hws_prof_hot *e = &t->hot[i];
	/* acquire: pairs with the release increment in hws_prof_end, so the tag
	 * read below is at least as new as the count. */
	uint32_t ends = atomic_load_explicit(&hws_prof_ends, memory_order_acquire);
	if (HWS_PROF_LD(e->key) == k &&
	    atomic_load_explicit(&hws_prof_tags[e->slot], memory_order_relaxed) ==
		    HWS_PROF_LD(e->tag)) {
		e->ends = ends;   /* still its entry: current until the next end */
		return e;
	}
	flush(t, i);
	long ix = find(k, fam, 1);
	e->slot = (uint32_t)ix;
	e->ends = ends;
	atomic_store_explicit(&e->tag, atomic_load_explicit(&hws_prof_tags[ix],
							    memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&e->key, k, memory_order_relaxed);
	return e;
}

/* entry(), from a counting path: NULL when this thread is already in a slow
 * path of this file (a lock taken on the way is not counted) or when
 * nothing can be counted here. */
static struct hws_prof_hot *entry_from_count(const void *obj, unsigned fam,
					     struct hws_prof_thread **tp)
{
	if (busy)
		return NULL;
	busy = 1;
	struct hws_prof_hot *e = entry(obj, fam, tp);
	busy = 0;
	return e;
}

/* ---- the calls of the lock paths ---- */

void hws_prof_sample(struct hws_prof_thread *t, const void *obj)
{
	hws_prof_held = obj;
	t->held_since = hws_now_ns();
}

void hws_prof_hold_end(const void *obj)
{
	struct hws_prof_thread *t = hws_prof_me;
	uint64_t d = hws_now_ns() - t->held_since;
	struct hws_prof_hot *e = &t->hot[hws_prof_hash((uintptr_t)obj)];
	hws_prof_held = NULL;
	if (HWS_PROF_LD(e->key) != (uintptr_t)obj)
		return;   /* evicted while held: the sample is dropped */
	struct hws_prof_cold *c = &t->cold[e - t->hot];
	HWS_PROF_ADD(c->hold_n, 1);
	HWS_PROF_ADD(c->hold_ns, d);
	if (d > HWS_PROF_LD(c->max_hold_ns))
		atomic_store_explicit(&c->max_hold_ns, d, memory_order_relaxed);
}

void hws_prof_acquired_slow(const void *obj, unsigned fam)
{
	struct hws_prof_thread *t;
	struct hws_prof_hot *e = entry_from_count(obj, fam, &t);
	if (!e)
		return;
	HWS_PROF_ADD(e->acq, 1);
	if (HWS_PROF_LD(e->acq) % HWS_PROF_SAMPLE == 0)
		hws_prof_sample(t, obj);
}

struct walk {
	uintptr_t pc[NSITE];
	unsigned n, frames;
};

static _Unwind_Reason_Code step(struct _Unwind_Context *ctx, void *arg)
{
	struct walk *w = arg;
	uintptr_t ip = _Unwind_GetIP(ctx);
	if (!ip || ++w->frames > 64)
		return _URC_END_OF_STACK;
	if (ip >= shim_lo && ip < shim_hi)
		return _URC_NO_REASON;   /* the shim's own frames */
	w->pc[w->n++] = ip;
	return w->n == NSITE ? _URC_END_OF_STACK : _URC_NO_REASON;
}

/* The first contended acquisition of an entry records where it came from:
 * the return addresses of the first frames outside the shim, taken with the
 * DWARF unwinder (libgcc's, which the shim links anyway), so code built
 * without frame pointers unwinds correctly.  It allocates nothing; locks it
 * takes on the way are not profiled (busy). */
static void record_site(struct slot *s)
{
	uint32_t none = SITE_NONE;
	/* relaxed: the claim orders nothing; the release store below publishes. */
	if (atomic_load_explicit(&s->site_state, memory_order_relaxed) != SITE_NONE ||
	    !atomic_compare_exchange_strong_explicit(&s->site_state, &none, SITE_WALKING,
						     memory_order_relaxed, memory_order_relaxed))
		return;
	struct walk w = { .n = 0 };
	_Unwind_Backtrace(step, &w);
	memcpy(s->site, w.pc, sizeof w.pc);
	s->nsite = w.n;
	/* release: pairs with the acquire load in the exit report. */
	atomic_store_explicit(&s->site_state, SITE_READY, memory_order_release);
}

uint64_t hws_prof_wait_begin(const void *obj, unsigned fam)
{
	struct hws_prof_thread *t;
	if (!busy) {
		busy = 1;
		struct hws_prof_hot *e = entry(obj, fam, &t);
		if (e && e->slot != nslots)
			record_site(&slots[e->slot]);
		busy = 0;
	}
	return hws_now_ns();
}

void hws_prof_wait_end(const void *obj, unsigned fam, uint64_t t0, int rc, unsigned flags)
{
	uint64_t now = hws_now_ns(), d = now - t0;
	struct hws_prof_thread *t;
	struct hws_prof_hot *e = entry_from_count(obj, fam, &t);
	if (!e)
		return;
	struct hws_prof_cold *c = &t->cold[e - t->hot];
	if (rc != 0)
		HWS_PROF_ADD(c->timeouts, 1);
	if (rc != 0 && fam != HWS_FAM_COND)
		return;
	if (!(flags & HWS_PROF_COUNTED))
		HWS_PROF_ADD(e->acq, 1);
	HWS_PROF_ADD(c->cont, 1);
	HWS_PROF_ADD(c->wait_ns, d);
	if (d > HWS_PROF_LD(c->max_wait_ns))
		atomic_store_explicit(&c->max_wait_ns, d, memory_order_relaxed);
	if (fam != HWS_FAM_COND && !(flags & HWS_PROF_COUNTED) &&
	    HWS_PROF_LD(e->acq) % HWS_PROF_SAMPLE == 0) {
		hws_prof_held = obj;
		t->held_since = now;
	}
}

void hws_prof_end(const void *obj)
{
	uintptr_t a = (uintptr_t)obj;
	struct hws_prof_thread *t = hws_prof_me;
	if (busy)
		return;
	busy = 1;
	/* This thread's counts go in before the entry ends; other threads'
	 * reach it by its id when they flush. */
	if (t && HWS_PROF_LD(t->hot[hws_prof_hash(a)].key) == a)
		flush(t, hws_prof_hash(a));
	long ix = find(a, 0, 0);
	if (ix >= 0) {
		struct slot *s = &slots[ix];
		/* relaxed: caches compare the tag, find the key (an ended key
		 * matches no live lookup). */
		atomic_store_explicit(&hws_prof_tags[ix], s->id << 1, memory_order_relaxed);
		atomic_store_explicit(&s->key, a, memory_order_release);
		/* release: pairs with the acquire load in entry (the new tag
		 * is seen by whoever sees the new count). */
		atomic_fetch_add_explicit(&hws_prof_ends, 1, memory_order_release);
	}
	busy = 0;
}

/* ---- counting in place ---- */

static _Atomic uint64_t place_unread;   /* live objects whose count could not be read */
/* Per family, how to read back the count of a live object at exit; set by
 * constructors, before any thread the program starts. */
static hws_prof_place_reader place_reader[HWS_FAM_N];

void hws_prof_read_places_with(unsigned fam, hws_prof_place_reader read)
{
	place_reader[fam] = read;
}

void hws_prof_place_slow(const void *obj, unsigned fam, struct hws_prof_place *p, uint64_t n)
{
	struct hws_prof_thread *t;
	/* relaxed (here and below): the holder's own words (profile.h). */
	atomic_store_explicit(&p->count, 1, memory_order_relaxed);
	struct hws_prof_hot *e = entry_from_count(obj, fam, &t);
	if (!e)
		return;   /* lost (also a lock taken inside the profile's own slow path) */
	/* n == 1: the object's first acquisition; else HWS_PROF_FOLD of them,
	 * the last of which has its hold sampled */
	HWS_PROF_ADD(e->acq, n == 1 ? 1 : n - 1);
	if (n > 1)
		atomic_store_explicit(&p->hold_since, hws_now_ns() | 1, memory_order_relaxed);
}

void hws_prof_place_hold_end(const void *obj, struct hws_prof_place *p)
{
	uint64_t d = hws_now_ns() - atomic_load_explicit(&p->hold_since, memory_order_relaxed);
	struct hws_prof_thread *t = hws_prof_me;
	atomic_store_explicit(&p->hold_since, 0, memory_order_relaxed);
	if (!t)
		return;
	struct hws_prof_hot *e = &t->hot[hws_prof_hash((uintptr_t)obj)];
	if (HWS_PROF_LD(e->key) != (uintptr_t)obj)
		return;   /* released by a thread that has no entry for it: dropped */
	struct hws_prof_cold *c = &t->cold[e - t->hot];
	HWS_PROF_ADD(c->hold_n, 1);
	HWS_PROF_ADD(c->hold_ns, d);
	if (d > HWS_PROF_LD(c->max_hold_ns))
		atomic_store_explicit(&c->max_hold_ns, d, memory_order_relaxed);
}

void hws_prof_end_place(const void *obj, struct hws_prof_place *p)
{
	uint64_t n = atomic_load_explicit(&p->count, memory_order_relaxed);
	long ix;
	if (n > 1 && n <= HWS_PROF_FOLD + 1 && !busy && (ix = find((uintptr_t)obj, 0, 0)) >= 0)
		/* relaxed: a statistic, read at exit. */
		atomic_fetch_add_explicit(&slots[ix].acq, n - 1, memory_order_relaxed);
	atomic_store_explicit(&p->count, 0, memory_order_relaxed);
	atomic_store_explicit(&p->hold_since, 0, memory_order_relaxed);
	hws_prof_end(obj);
}

/* ---- the report at exit ---- */

static uint64_t ld(_Atomic uint64_t *x)
{
	return atomic_load_explicit(x, memory_order_relaxed);
}

static int by_wait(const void *pa, const void *pb)
{
	struct slot *a = *(struct slot *const *)pa, *b = *(struct slot *const *)pb;
	uint64_t wa = ld(&a->wait_ns), wb = ld(&b->wait_ns);
	if (wa != wb)
		return wa > wb ? -1 : 1;
	uint64_t ca = ld(&a->cont), cb = ld(&b->cont);
	if (ca != cb)
		return ca > cb ? -1 : 1;
	return ld(&a->acq) > ld(&b->acq) ? -1 : ld(&a->acq) < ld(&b->acq);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Where a return address is: the module's path (the program's own from
 * /proc/self/exe), the address in the module's own numbering (minus the
 * load bias: what addr2line takes, for a PIE or library and for a fixed
 * executable alike) and the nearest exported function, as dladdr sees it
 * (the dynamic symbol table only; `hwsync profile` reads the debug info). */
struct place {
	const char *module, *function;
	uintptr_t offset, function_offset;
};

static char exe_path[4096];

static int describe(uintptr_t pc, struct place *p)
{
	Dl_info di;
	struct link_map *lm = NULL;
	memset(p, 0, sizeof *p);
	/* pc - 1: the call instruction, not the one after it (a call that ends
	 * a function would otherwise name the next one). */
	if (!dladdr1((void *)(pc - 1), &di, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return 0;
	p->module = lm->l_name && lm->l_name[0] ? lm->l_name : exe_path;
	p->offset = pc - (uintptr_t)lm->l_addr;
	if (di.dli_sname) {
		p->function = di.dli_sname;
		p->function_offset = pc - (uintptr_t)di.dli_saddr;
	}
	return 1;
}

static void put_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void write_json(FILE *f, struct slot **v, size_t n, uint64_t total)
{
	fprintf(f, "{\"schema\":\"hwsync-profile\",\"version\":1,\"pid\":%d,\"program\":",
		hws_cfg.pid);
	put_json_string(f, exe_path);
	fprintf(f, ",\"lock_kind\":");
	put_json_string(f, hws_cfg.lock_used);
	fprintf(f, ",\"wait_policy\":");
	put_json_string(f, hws_cfg.wait_spec);
	fprintf(f, ",\"hold_sample_mean\":%u,\n\"table\":{\"slots\":%zu,\"objects\":%" PRIu64
		",\"recorded\":%zu,\"not_recorded\":%" PRIu64 ",\"reused\":%" PRIu64
		",\"acquisitions_not_recorded\":%" PRIu64 ",\"acquisitions_of_reused\":%" PRIu64
		",\"counts_not_read\":%" PRIu64 "},\n\"objects\":[", HWS_PROF_SAMPLE, nslots, total,
		n, ld(&not_recorded), ld(&recycled), ld(&overflow_acq), ld(&lost_acq),
		ld(&place_unread));
	for (size_t i = 0; i < n; i++) {
		struct slot *s = v[i];
		uintptr_t k = atomic_load_explicit(&s->key, memory_order_relaxed);
		fprintf(f, "%s\n{\"family\":\"%s\",\"address\":\"0x%" PRIxPTR "\",\"id\":%" PRIu64
			",\"ended\":%s,\"acquisitions\":%" PRIu64 ",\"contended\":%" PRIu64
			",\"wait_ns\":%" PRIu64 ",\"max_wait_ns\":%" PRIu64 ",\"timeouts\":%" PRIu64
			",\"hold_samples\":%" PRIu64 ",\"hold_ns\":%" PRIu64 ",\"max_hold_ns\":%"
			PRIu64 ",\"site\":[", i ? "," : "", hws_family_name[s->fam], k & ~LIVE,
			s->id - 1, k & LIVE ? "false" : "true", ld(&s->acq), ld(&s->cont),
			ld(&s->wait_ns), ld(&s->max_wait_ns), ld(&s->timeouts), ld(&s->hold_n),
			ld(&s->hold_ns), ld(&s->max_hold_ns));
		/* acquire: pairs with the release in record_site. */
		unsigned ns = atomic_load_explicit(&s->site_state, memory_order_acquire) ==
			SITE_READY ? s->nsite : 0;
		for (unsigned j = 0; j < ns; j++) {
			struct place p;
			fprintf(f, "%s{\"pc\":\"0x%" PRIxPTR "\"", j ? "," : "", s->site[j]);
			if (describe(s->site[j], &p)) {
				fprintf(f, ",\"module\":");
				put_json_string(f, p.module);
				fprintf(f, ",\"offset\":\"0x%" PRIxPTR "\"", p.offset);
				if (p.function) {
					fprintf(f, ",\"function\":");
					put_json_string(f, p.function);
					fprintf(f, ",\"function_offset\":\"0x%" PRIxPTR "\"",
						p.function_offset);
				}
			}
			fputc('}', f);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "\n]}\n");
}

static void print_top(struct slot **v, size_t n, uint64_t total)
{
	int fd = hws_cfg.err_fd, pid = hws_cfg.pid;
	size_t shown = 0;
	dprintf(fd, "hwsync[%d]: profile: %" PRIu64 " objects (%" PRIu64 " not recorded, table of "
		"%zu)%s%s; top %u by total wait:\n", pid, total, ld(&not_recorded), nslots,
		hws_cfg.profile_path[0] ? ", all in " : "", hws_cfg.profile_path, hws_cfg.profile_top);
	dprintf(fd, "hwsync[%d]:  # %-14s %-18s %12s %10s %11s %10s %10s\n", pid, "family",
		"object", "acquisitions", "contended", "wait ms", "max ms", "hold ns");
	for (size_t i = 0; i < n && shown < hws_cfg.profile_top; i++) {
		struct slot *s = v[i];
		if (!ld(&s->wait_ns))
			break;
		uint64_t hn = ld(&s->hold_n);
		char hold[24] = "-";
		if (hn)
			snprintf(hold, sizeof hold, "%" PRIu64, ld(&s->hold_ns) / hn);
		dprintf(fd, "hwsync[%d]: %2zu %-14s 0x%-16" PRIxPTR " %12" PRIu64 " %10" PRIu64
			" %11.3f %10.3f %10s%s\n", pid, ++shown, hws_family_name[s->fam],
			atomic_load_explicit(&s->key, memory_order_relaxed) & ~LIVE, ld(&s->acq),
			ld(&s->cont), (double)ld(&s->wait_ns) / 1e6,
			(double)ld(&s->max_wait_ns) / 1e6, hold,
			s->fam == HWS_FAM_COND ? " (waits)" : "");
		/* acquire: pairs with the release in record_site. */
		unsigned ns = atomic_load_explicit(&s->site_state, memory_order_acquire) ==
			SITE_READY ? s->nsite : 0;
		for (unsigned j = 0; j < ns; j++) {
			struct place p;
			if (!describe(s->site[j], &p))
				dprintf(fd, "hwsync[%d]:      at 0x%" PRIxPTR "\n", pid, s->site[j]);
			else
				dprintf(fd, "hwsync[%d]:      at %s+0x%" PRIxPTR " %s\n", pid,
					base_name(p.module), p.offset,
					p.function ? p.function : "?");
		}
	}
	if (!shown)
		dprintf(fd, "hwsync[%d]:    (no object waited)\n", pid);
}

void hws_prof_report(void)
{
	busy = 1;
	ssize_t len = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
	exe_path[len > 0 ? len : 0] = 0;
	/* acquire: pairs with the release CAS that pushed each block. */
	for (struct hws_prof_thread *t = atomic_load_explicit(&registry, memory_order_acquire); t;
	     t = t->next)
		/* acquire: a block in use belongs to a live thread (a snapshot). */
		if (atomic_load_explicit(&t->in_use, memory_order_acquire))
			flush_all(t);
	size_t n = 0;
	uint64_t total = 0;
	for (size_t i = 0; i < nslots; i++) {
		uintptr_t k = atomic_load_explicit(&slots[i].key, memory_order_acquire);
		n += k != 0 && k != CLAIMED;
		if (k & LIVE && k != CLAIMED && place_reader[slots[i].fam]) {
			/* what the object counted since its last fold */
			long long c = place_reader[slots[i].fam](k & ~LIVE);
			if (c > 1 && c <= HWS_PROF_FOLD + 1)
				atomic_fetch_add_explicit(&slots[i].acq, (uint64_t)c - 1,
							  memory_order_relaxed);
			else if (c == -1 || c > HWS_PROF_FOLD + 1)
				atomic_fetch_add_explicit(&place_unread, 1, memory_order_relaxed);
		}
	}
	struct slot **v = malloc((n ? n : 1) * sizeof *v);
	if (!v) {
		hws_shim_say("HWSYNC_PROFILE: out of memory at exit; no profile");
		return;
	}
	n = 0;
	for (size_t i = 0; i < nslots; i++) {
		/* acquire: pairs with the release store of the key in find. */
		uintptr_t k = atomic_load_explicit(&slots[i].key, memory_order_acquire);
		if (k != 0 && k != CLAIMED)
			v[n++] = &slots[i];
	}
	/* ids count every entry ever made: those reused included */
	total = ld(&next_id) - 2 + ld(&not_recorded);
	qsort(v, n, sizeof *v, by_wait);
	if (hws_cfg.profile_top)
		print_top(v, n, total);
	if (hws_cfg.profile_file) {
		write_json(hws_cfg.profile_file, v, n, total);
		if (fclose(hws_cfg.profile_file))
			hws_shim_say("HWSYNC_PROFILE: writing '%s' failed", hws_cfg.profile_path);
		hws_cfg.profile_file = NULL;
	}
	free(v);
}
