/* Active kernels ([T2SPIN] Sec. 4): integer add, 64-bit multiply,
 * unpredictable branches, L1-hit and L2-hit pointer chases, integer and FP
 * matrix-vector products, quicksort, hash-table lookups.  Each unit is a
 * dependent chain so the compiler cannot collapse it. */
#include <stdlib.h>
#include <string.h>
#include "bench/kernels.h"

#define UNIT 4096
#define MV 64
#define SORTN 512
#define HASHN 1024

struct kstate {
	uint32_t *l1;      /* 16 KiB cyclic permutation: fits L1d */
	uint32_t *l2;      /* 256 KiB: misses L1, fits L2 */
	int32_t mi[MV * MV], vi[MV];
	double mf[MV * MV], vf[MV];
	int32_t src[SORTN], tmp[SORTN];
	uint64_t keys[HASHN];
	uint64_t seed;
};

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 17;
}

/* A single cycle through n slots (Sattolo), so the chase visits them all. */
static void cycle(uint32_t *a, uint32_t n, uint64_t *s)
{
	for (uint32_t i = 0; i < n; i++)
		a[i] = i;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)(lcg(s) % i), t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

void *bench_kernel_state_new(void)
{
	struct kstate *k = calloc(1, sizeof *k);
	if (!k)
		return NULL;
	k->seed = 12345;
	k->l1 = malloc(4096 * sizeof *k->l1);
	k->l2 = malloc(65536 * sizeof *k->l2);
	if (!k->l1 || !k->l2) {
		bench_kernel_state_free(k);
		return NULL;
	}
	cycle(k->l1, 4096, &k->seed);
	cycle(k->l2, 65536, &k->seed);
	for (int i = 0; i < MV * MV; i++) {
		k->mi[i] = (int32_t)(lcg(&k->seed) % 100);
		k->mf[i] = (double)(lcg(&k->seed) % 1000) / 997.0;
	}
	for (int i = 0; i < MV; i++) {
		k->vi[i] = i;
		k->vf[i] = 1.0 / (i + 1);
	}
	for (int i = 0; i < SORTN; i++)
		k->src[i] = (int32_t)lcg(&k->seed);
	for (int i = 0; i < HASHN; i++)
		k->keys[i] = 0;
	return k;
}

void bench_kernel_state_free(void *state)
{
	struct kstate *k = state;
	if (!k)
		return;
	free(k->l1);
	free(k->l2);
	free(k);
}

static uint64_t k_add(void *s)
{
	uint64_t x = (uintptr_t)s, y = 7;
	for (unsigned i = 0; i < UNIT; i++) {
		x += i;
		y += x;
		__asm__ __volatile__("" : "+r"(x), "+r"(y));
	}
	return x ^ y;
}

static uint64_t k_mulx(void *s)
{
	uint64_t x = (uintptr_t)s | 1, hi = 0;
	for (unsigned i = 0; i < UNIT; i++) {
		unsigned __int128 p = (unsigned __int128)x * 0x9e3779b97f4a7c15ull;
		x = (uint64_t)p + 1;
		hi ^= (uint64_t)(p >> 64);
	}
	return x ^ hi;
}

static uint64_t k_branch(void *s)
{
	struct kstate *k = s;
	uint64_t a = 0, b = 0;
	for (unsigned i = 0; i < UNIT; i++) {
		if (lcg(&k->seed) & 1)   /* a coin flip: mispredicted half the time */
			a += i;
		else
			b ^= i;
		__asm__ __volatile__("" : "+r"(a), "+r"(b));
	}
	return a + b;
}

static uint64_t chase(const uint32_t *a, uint32_t start)
{
	uint32_t p = start;
	for (unsigned i = 0; i < UNIT; i++)
		p = a[p];
	return p;
}

static uint64_t k_l1hit(void *s)
{
	struct kstate *k = s;
	return chase(k->l1, (uint32_t)(k->seed++ & 4095));
}

static uint64_t k_l2hit(void *s)
{
	struct kstate *k = s;
	return chase(k->l2, (uint32_t)(k->seed++ & 65535));
}

static uint64_t k_matvec_int(void *s)
{
	struct kstate *k = s;
	int64_t sum = 0;
	for (int i = 0; i < MV; i++) {
		int64_t r = 0;
		for (int j = 0; j < MV; j++)
			r += (int64_t)k->mi[i * MV + j] * k->vi[j];
		sum += r;
	}
	k->vi[sum & (MV - 1)]++;
	return (uint64_t)sum;
}

static uint64_t k_matvec_fp(void *s)
{
	struct kstate *k = s;
	double sum = 0;
	for (int i = 0; i < MV; i++) {
		double r = 0;
		for (int j = 0; j < MV; j++)
			r += k->mf[i * MV + j] * k->vf[j];
		sum += r;
	}
	k->vf[(unsigned)sum & (MV - 1)] += 1e-9;
	return (uint64_t)sum;
}

static void qsort_i32(int32_t *a, int lo, int hi)
{
	while (lo < hi) {
		int32_t pivot = a[(lo + hi) / 2];
		int i = lo, j = hi;
		while (i <= j) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				int32_t t = a[i];
				a[i++] = a[j];
				a[j--] = t;
			}
		}
		if (j - lo < hi - i) {   /* recurse on the smaller side */
			qsort_i32(a, lo, j);
			lo = i;
		} else {
			qsort_i32(a, i, hi);
			hi = j;
		}
	}
}

static uint64_t k_quicksort(void *s)
{
	struct kstate *k = s;
	memcpy(k->tmp, k->src, sizeof k->tmp);
	k->tmp[k->seed++ % SORTN] ^= 1;
	qsort_i32(k->tmp, 0, SORTN - 1);
	return (uint64_t)k->tmp[SORTN / 2];
}

static uint64_t k_hash(void *s)
{
	struct kstate *k = s;
	uint64_t found = 0;
	/* open addressing, linear probing: 512 inserts-or-finds into an empty table */
	memset(k->keys, 0, sizeof k->keys);
	for (unsigned i = 0; i < 512; i++) {
		uint64_t key = (lcg(&k->seed) % 2048) + 1;
		uint64_t h = (key * 0x9e3779b97f4a7c15ull) >> 54;   /* 10 bits */
		for (unsigned p = 0; p < HASHN; p++) {
			uint64_t *slot = &k->keys[(h + p) & (HASHN - 1)];
			if (*slot == key) {
				found++;
				break;
			}
			if (!*slot) {
				*slot = key;
				break;
			}
		}
	}
	return found;
}

static const struct bench_kernel kernels[] = {
	{ "add", "4096 dependent integer adds", k_add },
	{ "mulx", "4096 dependent 64x64->128-bit multiplies", k_mulx },
	{ "branch", "4096 unpredictable branches", k_branch },
	{ "l1hit", "4096-step pointer chase in 16 KiB (L1 hits)", k_l1hit },
	{ "l2hit", "4096-step pointer chase in 256 KiB (L2 hits)", k_l2hit },
	{ "matvec-int", "64x64 int32 matrix-vector product", k_matvec_int },
	{ "matvec-fp", "64x64 double matrix-vector product", k_matvec_fp },
	{ "quicksort", "quicksort of 512 int32", k_quicksort },
	{ "hash", "512 inserts-or-finds in a fresh 1024-slot hash table", k_hash },
};

const struct bench_kernel *bench_kernel_find(const char *name)
{
	for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
		if (!strcmp(kernels[i].name, name))
			return &kernels[i];
	return NULL;
}
