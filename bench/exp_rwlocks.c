/* rwlocks: threads take one reader-writer lock, each operation a read with
 * probability --read (percent) and otherwise a write, around a critical
 * section of --cs units; throughput of all threads together.  hwsync's
 * kinds (reader, writer, bravo: the typed cores of hwsync/rwlock_*.h) per
 * wait policy, and glibc's pthread_rwlock and Concurrency Kit's ck_rwlock,
 * ck_brlock and ck_bytelock as peers, interleaved round-robin.
 *
 * A unit of a write section is one volatile increment of a shared array
 * word; of a read section one volatile load of it, so readers share the
 * array's lines and never write them: what a read section costs is the
 * lock's own traffic. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwsync/hwsync.h>
#include <hwsync/rwlock_bravo.h>
#include <hwsync/rwlock_reader.h>
#include <hwsync/rwlock_writer.h>
#include "bench/harness.h"
#if HWS_HAVE_CK
#include <ck_brlock.h>
#include <ck_bytelock.h>
#include <ck_rwlock.h>
#endif

#define RW_PEERS "pthread-rwlock,ck-rwlock,ck-brlock,ck-bytelock"
#define RW_HWSYNC "hwsync-reader,hwsync-writer,hwsync-bravo"
#define RW_MAX_REPS 256
#define DATA_WORDS 128

enum impl { I_PTHREAD, I_CK_RW, I_CK_BR, I_CK_BYTE, I_READER, I_WRITER, I_BRAVO };
static const char *const impl_names[] = { "pthread-rwlock", "ck-rwlock", "ck-brlock",
					  "ck-bytelock", "hwsync-reader", "hwsync-writer",
					  "hwsync-bravo" };

struct rw_lock {
	enum impl kind;
	hws_wait_t wait;
	pthread_rwlock_t prw;
	HWS_ALIGNED_LINE union {
		hws_rw_reader_core_t reader;
		hws_rw_writer_core_t writer;
		hws_rw_bravo_core_t bravo;
	} h;
#if HWS_HAVE_CK
	HWS_ALIGNED_LINE ck_rwlock_t ckrw;
	HWS_ALIGNED_LINE ck_brlock_t ckbr;
	HWS_ALIGNED_LINE ck_bytelock_t ckbyte;
#endif
};

struct rw_thread {
	HWS_ALIGNED_LINE uint64_t ops;
#if HWS_HAVE_CK
	ck_brlock_reader_t reader;
#endif
};

struct rw_cell {
	enum impl kind;
	unsigned read_pm;          /* reads per mille */
	unsigned cs;
	uint64_t duration_ns;
	struct rw_lock *l;
	struct rw_thread *th;
	volatile uint64_t *data;
	_Atomic int stop;
	double rep[RW_MAX_REPS];   /* throughput per repetition, for the summary */
	unsigned nrep;
};

#if HWS_HAVE_CK
/* Thread i's slot in ck_bytelock: a byte each, numbered from 1; the threads
 * past them go unslotted. */
static unsigned byte_slot(const struct rw_lock *l, unsigned i)
{
	return i + 1 <= sizeof l->ckbyte.readers ? i + 1 : CK_BYTELOCK_UNSLOTTED;
}
#endif

/* The sections' work, one copy for every row, each function starting on a
 * cache line: with the work inlined into each row's loop, its speed followed
 * where that loop happened to land, and rows whose code had not changed moved
 * by up to 40% between builds (glibc's one-thread 100-unit row 16.3 or 22.3
 * Mops/s).  The call is made only when there is work (cs > 0). */
static __attribute__((noinline, aligned(HWS_CACHELINE))) uint64_t
read_section(const volatile uint64_t *data, unsigned cs)
{
	uint64_t sum = 0;
	for (unsigned u = 0; u < cs; u++)
		sum += data[u % DATA_WORDS];
	return sum;
}

static __attribute__((noinline, aligned(HWS_CACHELINE))) void
write_section(volatile uint64_t *data, unsigned cs)
{
	for (unsigned u = 0; u < cs; u++)
		data[u % DATA_WORDS]++;
	data[DATA_WORDS - 1]++;
}

/* The measured loop, instantiated once per implementation with its calls
 * written in place: the header locks (hwsync's cores, ck) inline into it and
 * no row pays a per-operation dispatch, so the rows compare alike.  It runs
 * on rw_thread_fn's k, seed, ops, sink and end. */
#define RW_LOOP(rd_lock, rd_unlock, wr_lock, wr_unlock)                                      \
	do {                                                                                 \
		/* relaxed: a stop flag; the TSC deadline ends the run anyway. */            \
		while (!atomic_load_explicit(&k->stop, memory_order_relaxed)) {              \
			for (int b = 0; b < 64; b++, ops++) {                                \
				if ((unsigned)(bench_xorshift(&seed) % 1000) < k->read_pm) { \
					rd_lock;                                             \
					if (k->cs)                                           \
						sink += read_section(k->data, k->cs);        \
					rd_unlock;                                           \
				} else {                                                     \
					wr_lock;                                             \
					if (k->cs)                                           \
						write_section(k->data, k->cs);               \
					else                                                 \
						k->data[DATA_WORDS - 1]++;                   \
					wr_unlock;                                           \
				}                                                            \
			}                                                                    \
			if (hws_tsc() >= end)                                                \
				atomic_store_explicit(&k->stop, 1, memory_order_relaxed);    \
		}                                                                            \
	} while (0)

/* hwsync's typed cores share one shape: the kind names the header, the union
 * member and the functions. */
#define RW_LOOP_HWSYNC(kind)                                                    \
	RW_LOOP(hws_rw_##kind##_core_rdlock(&l->h.kind, &l->wait, HWS_FOREVER), \
		hws_rw_##kind##_core_unlock(&l->h.kind),                        \
		hws_rw_##kind##_core_wrlock(&l->h.kind, &l->wait, HWS_FOREVER), \
		hws_rw_##kind##_core_unlock(&l->h.kind))

static void rw_thread_fn(void *arg, unsigned i)
{
	struct rw_cell *k = arg;
	struct rw_thread *t = &k->th[i];
	struct rw_lock *l = k->l;
	uint64_t seed = (i + 1) * 0x9e3779b97f4a7c15ull, ops = 0, sink = 0;
	uint64_t end = hws_tsc() + hws_ns_to_tsc(k->duration_ns);

	switch (l->kind) {
	case I_PTHREAD:
		RW_LOOP(pthread_rwlock_rdlock(&l->prw), pthread_rwlock_unlock(&l->prw),
			pthread_rwlock_wrlock(&l->prw), pthread_rwlock_unlock(&l->prw));
		break;
	case I_READER: RW_LOOP_HWSYNC(reader); break;
	case I_WRITER: RW_LOOP_HWSYNC(writer); break;
	case I_BRAVO: RW_LOOP_HWSYNC(bravo); break;
#if HWS_HAVE_CK
	case I_CK_RW:
		RW_LOOP(ck_rwlock_read_lock(&l->ckrw), ck_rwlock_read_unlock(&l->ckrw),
			ck_rwlock_write_lock(&l->ckrw), ck_rwlock_write_unlock(&l->ckrw));
		break;
	case I_CK_BR:
		ck_brlock_read_register(&l->ckbr, &t->reader);
		RW_LOOP(ck_brlock_read_lock(&l->ckbr, &t->reader),
			ck_brlock_read_unlock(&t->reader),
			ck_brlock_write_lock(&l->ckbr), ck_brlock_write_unlock(&l->ckbr));
		ck_brlock_read_unregister(&l->ckbr, &t->reader);
		break;
	case I_CK_BYTE:
		RW_LOOP(ck_bytelock_read_lock(&l->ckbyte, byte_slot(l, i)),
			ck_bytelock_read_unlock(&l->ckbyte, byte_slot(l, i)),
			ck_bytelock_write_lock(&l->ckbyte, byte_slot(l, i)),
			ck_bytelock_write_unlock(&l->ckbyte));
		break;
#endif
	default: break;
	}
	t->ops = ops + (sink == 42);
}

static int rw_new(struct rw_lock **out, enum impl kind, const char *policy, char *why, size_t len)
{
	struct rw_lock *l = bench_zalloc_lines(sizeof *l);
	if (!l)
		return snprintf(why, len, "out of memory"), ENOMEM;
	l->kind = kind;
	switch (kind) {
	case I_PTHREAD: pthread_rwlock_init(&l->prw, NULL); break;
	case I_READER: hws_rw_reader_core_init(&l->h.reader); break;
	case I_WRITER: hws_rw_writer_core_init(&l->h.writer); break;
	case I_BRAVO: hws_rw_bravo_core_init(&l->h.bravo); break;
#if HWS_HAVE_CK
	case I_CK_RW: ck_rwlock_init(&l->ckrw); break;
	case I_CK_BR: ck_brlock_init(&l->ckbr); break;
	case I_CK_BYTE: ck_bytelock_init(&l->ckbyte); break;
#else
	default:
		free(l);
		snprintf(why, len, "Concurrency Kit (libck-dev) was not found at build time");
		return ENOTSUP;
#endif
	}
	if (kind >= I_READER && hws_wait_init(&l->wait, policy)) {
		snprintf(why, len, "%s", hws_last_error());
		free(l);
		return ENOTSUP;
	}
	*out = l;
	return 0;
}

static int rw_run(struct bench_ctx *ctx, struct bench_cell *c)
{
	struct rw_cell *k = c->priv;
	char why[200];
	int rc;

	k->duration_ns = bench_opts(ctx)->duration_ns;
	atomic_store(&k->stop, 0);
	k->th = bench_zalloc_lines(c->nthreads * sizeof *k->th);
	k->data = bench_zalloc_lines(DATA_WORDS * sizeof *k->data);
	if (!k->th || !k->data) {
		snprintf(c->skip, sizeof c->skip, "out of memory");
		rc = ENOMEM;
		goto out;
	}
	if ((rc = rw_new(&k->l, k->kind, c->policy, why, sizeof why))) {
		snprintf(c->skip, sizeof c->skip, "%s", why);
		goto out;
	}
	uint64_t t0 = hws_now_ns();
	rc = bench_run_threads(c->nthreads, c->cpus, rw_thread_fn, k);
	uint64_t t1 = hws_now_ns();
	if (rc) {
		snprintf(c->skip, sizeof c->skip, "cannot run the threads: %s", strerror(rc));
		goto out;
	}
	uint64_t ops = 0;
	for (unsigned i = 0; i < c->nthreads; i++)
		ops += k->th[i].ops;
	double mops = t1 > t0 ? (double)ops * 1e3 / (double)(t1 - t0) : 0;
	bench_sample_value(c, "throughput", "Mops/s", mops);
	if (c->measuring && k->nrep < RW_MAX_REPS)
		k->rep[k->nrep++] = mops;
out:
	if (k->l && k->l->kind == I_PTHREAD)
		pthread_rwlock_destroy(&k->l->prw);
	free(k->l);
	free(k->th);
	free((void *)k->data);
	k->l = NULL;
	k->th = NULL;
	k->data = NULL;
	return rc;
}

static void rw_cleanup(struct bench_cell *c)
{
	free(c->priv);
	c->priv = NULL;
}

struct rw_setup {
	unsigned reads[8], nreads, cs[8], ncs;
	const char *placement;
};

static int add_cells(struct bench_ctx *ctx, const struct rw_setup *z, unsigned n, const int *cpus)
{
	const char *why;
	for (unsigned ii = 0; ii < sizeof impl_names / sizeof impl_names[0]; ii++) {
		if (!bench_impl_on(ctx, impl_names[ii]))
			continue;
		bool hw = ii >= I_READER;
		unsigned npol = hw ? bench_policy_count(ctx) : 1;
		for (unsigned p = 0; p < npol; p++) {
			const char *pol = hw ? bench_policy(ctx, p, &why) : NULL;
			if (pol && why)
				continue;
			for (unsigned r = 0; r < z->nreads; r++)
				for (unsigned s = 0; s < z->ncs; s++) {
					struct bench_cell *c = bench_cell_new_priv(
						ctx, impl_names[ii], pol, sizeof(struct rw_cell));
					if (!c)
						return bench_error("out of memory");
					struct rw_cell *k = c->priv;
					k->kind = (enum impl)ii;
					k->read_pm = z->reads[r] * 10;
					k->cs = z->cs[s];
					c->nthreads = n;
					memcpy(c->cpus, cpus, n * sizeof *cpus);
					bench_param(c, "placement", "%s", z->placement);
					bench_param_num(c, "ncpu", bench_distinct_cpus(cpus, n));
					bench_param_num(c, "read_pct", z->reads[r]);
					bench_param_num(c, "cs", z->cs[s]);
				}
		}
	}
	return 0;
}

static int rw_setup(struct bench_ctx *ctx)
{
	const struct bench_list *pl = bench_placements(ctx);
	unsigned nth, ov, one;
	const unsigned *threads = bench_threads(ctx, &nth);
	const char *why;
	struct rw_setup z = { 0 };
	int rc;

#if !HWS_HAVE_CK
	bench_skip(ctx, "Concurrency Kit (libck-dev) was not found at build time",
		   "ck-rwlock, ck-brlock, ck-bytelock");
#endif
	if (bench_parse_ulist(bench_xopt(ctx, "read"), z.reads, 8, &z.nreads) || !z.nreads)
		return bench_error("rwlocks: --read takes a list of percentages, e.g. 90,99");
	for (unsigned r = 0; r < z.nreads; r++)
		if (z.reads[r] > 100)
			return bench_error("rwlocks: --read %u is not a percentage", z.reads[r]);
	if (bench_parse_ulist(bench_xopt(ctx, "cs"), z.cs, 8, &z.ncs) || !z.ncs)
		return bench_error("rwlocks: --cs takes a list of unit counts, e.g. 0,100");
	if (bench_parse_ulist(bench_xopt(ctx, "oversub"), &ov, 1, &one) || ov > 64)
		return bench_error("rwlocks: --oversub takes one number 0..64 (0 = no such rows)");
	for (unsigned p = 0; p < bench_policy_count(ctx); p++) {
		const char *pol = bench_policy(ctx, p, &why);
		if (why)
			bench_skip(ctx, why, "hwsync rwlocks policy %s", pol);
	}
	for (unsigned p = 0; p < pl->n; p++) {
		int cpus[BENCH_MAX_CPUS];
		z.placement = pl->v[p];
		for (unsigned t = 0; t < nth; t++) {
			rc = bench_place(ctx, pl->v[p], threads[t], cpus, &why);
			if (rc) {
				bench_skip(ctx, why, "threads=%u placement=%s (see --oversub)",
					   threads[t], pl->v[p]);
				continue;
			}
			if ((rc = add_cells(ctx, &z, threads[t], cpus)))
				return rc;
		}
		unsigned n = bench_oversub_row(ctx, pl->v[p], ov, threads, nth, cpus);
		if (n && (rc = add_cells(ctx, &z, n, cpus)))
			return rc;
	}
	return 0;
}

/* ---- summary: each hwsync row over glibc and over the best peer ---------- */
static const char *param(const struct bench_cell *c, const char *key)
{
	for (unsigned i = 0; i < c->nparams; i++)
		if (!strcmp(c->param[i].key, key))
			return c->param[i].val;
	return "";
}

static bool same_group(const struct bench_cell *a, const struct bench_cell *b)
{
	static const char *const keys[] = { "placement", "read_pct", "cs" };
	if (a->nthreads != b->nthreads)
		return false;
	for (unsigned i = 0; i < 3; i++)
		if (strcmp(param(a, keys[i]), param(b, keys[i])))
			return false;
	return true;
}

static double median_of(const struct rw_cell *k)
{
	double v[RW_MAX_REPS];
	struct bench_summary s;
	memcpy(v, k->rep, k->nrep * sizeof *v);   /* bench_summarize sorts it */
	bench_summarize(v, k->nrep, &s);
	return k->nrep ? s.median : NAN;
}

static void ratio_row(struct bench_ctx *ctx, const struct bench_cell *a,
		      const struct bench_cell *p, const char *over)
{
	const struct rw_cell *ka = a->priv, *kp = p->priv;
	char impl[48];
	snprintf(impl, sizeof impl, "%s", a->impl);
	struct bench_cell *r = bench_summary_row(ctx, impl, a->policy);
	if (!r)
		return;
	r->nthreads = a->nthreads;
	memcpy(r->cpus, a->cpus, a->nthreads * sizeof *a->cpus);
	bench_param(r, "placement", "%s", param(a, "placement"));
	bench_param_num(r, "read_pct", atof(param(a, "read_pct")));
	bench_param_num(r, "cs", atof(param(a, "cs")));
	bench_param(r, "over", "%s", over);
	bench_param(r, "peer", "%s", p->impl);
	for (unsigned i = 0; i < ka->nrep && i < kp->nrep; i++)
		if (kp->rep[i] > 0)
			bench_sample_value(r, "throughput_ratio", "x", ka->rep[i] / kp->rep[i]);
}

static void rw_summarize(struct bench_ctx *ctx)
{
	unsigned n;
	struct bench_cell *const *cells = bench_cells(ctx, &n);
	for (unsigned i = 0; i < n; i++) {
		const struct bench_cell *a = cells[i], *glibc = NULL, *best = NULL;
		double bestv = -1;
		if (strncmp(a->impl, "hwsync-", 7))
			continue;
		for (unsigned j = 0; j < n; j++) {
			const struct bench_cell *p = cells[j];
			if (!strncmp(p->impl, "hwsync-", 7) || !same_group(a, p))
				continue;
			if (!strcmp(p->impl, "pthread-rwlock"))
				glibc = p;
			double v = median_of(p->priv);
			if (!isnan(v) && v > bestv)
				best = p, bestv = v;
		}
		if (glibc)
			ratio_row(ctx, a, glibc, "glibc");
		if (best)
			ratio_row(ctx, a, best, "best peer");
	}
}

static const struct bench_xopt rw_xopts[] = {
	{ "read", "50,90,99,100", "90,99", "percent of operations that are reads (a list)" },
	{ "cs", "0,100", "0,100", "critical-section units (a list): a write increments that\n"
	  "        many shared words, a read loads them" },
	{ "oversub", "4", NULL, "also run this many threads per CPU of the placement\n"
	  "        (4: 8 threads on 2 CPUs); 0 = no such rows" },
	{ NULL, NULL, NULL, NULL },
};

static const struct bench_exp rwlocks_exp = {
	.name = "rwlocks",
	.title = "reader-writer locks: throughput by read fraction, threads and critical section",
	.reproduces = "[BRAVO] Sec. 5 (throughput against read fraction and threads)",
	.help =
"    Threads take one reader-writer lock for --duration: each operation is a read\n"
"    with probability --read percent, else a write, around a critical section of\n"
"    --cs units (a write increments shared words, a read loads them); the\n"
"    throughput of all threads together.  Threads 1, 2 and N (the placement's\n"
"    CPUs) by default, and --oversub threads per CPU.  Rows: glibc, Concurrency\n"
"    Kit and hwsync's kinds per wait policy, interleaved round-robin.\n"
"\n"
"    pthread-rwlock   glibc's pthread_rwlock_rdlock/wrlock (default kind)\n"
"    ck-rwlock        ck_rwlock (writer flag, then readers drain)\n"
"    ck-brlock        ck_brlock (each thread registered with a counter of its own)\n"
"    ck-bytelock      ck_bytelock (a byte per slotted reader; threads past the\n"
"                     lock's slots read unslotted)\n"
"    hwsync-reader    hwsync/rwlock_reader.h, the typed core (reader-preferring)\n"
"    hwsync-writer    hwsync/rwlock_writer.h (writer-preferring)\n"
"    hwsync-bravo     hwsync/rwlock_bravo.h ([BRAVO] over reader)\n"
"\n"
"METRICS\n"
"    throughput        operations of all threads per second (Mops/s)\n"
"SUMMARY\n"
"    throughput_ratio  each hwsync row over glibc (over=glibc) and over the peer\n"
"                      with the best median in its group (over=best peer), per\n"
"                      repetition (the rows of one repetition ran side by side)\n",
	.impls = RW_PEERS "," RW_HWSYNC,
	.uses_policies = true,
	.def_policies = "adaptive,futex",
	.quick_policies = "adaptive",
	.def_threads = "1,2,N",
	.def_placements = "core",
	.xopts = rw_xopts,
	.rank = 72,
	.setup = rw_setup,
	.run = rw_run,
	.cleanup = rw_cleanup,
	.summarize = rw_summarize,
	.summary_title = "hwsync rwlocks over glibc and the best peer: ratio of one repetition, median [95% CI]",
};
BENCH_REGISTER(rwlocks_exp)
