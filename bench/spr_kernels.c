/* Kernels for speculative precomputation ([AK08] Sec. 4.4): LU
 * decomposition, transitive closure (Warshall) and sparse matrix-vector
 * multiply, each cut into phases of about `chunk` bytes of data.  The worker
 * runs phase p while the helper runs prefetch(p + 1): plain loads of one word
 * per cache line (and, for SpMV, of the x entries the column indexes name),
 * so that the data is near when the worker gets there.  The phases do exactly
 * the serial computation in the serial order, so results compare bit for bit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench/harness.h"
#include "bench/spr_kernels.h"

#define LINE 64

struct range {
	unsigned step, r0, r1;   /* step (k or iteration) and rows [r0, r1) */
};

struct kern {
	struct spr_kernel k;     /* first: the public part */
	unsigned n;              /* matrix order or rows */
	unsigned nnz, iters;     /* spmv */
	struct range *ph;
	double *a, *a0;          /* lu: matrix, its input */
	uint8_t *b, *b0;         /* closure: adjacency matrix, its input */
	double *val, *x, *y, *x0;
	uint32_t *col;
};

/* Phases of `step` over rows [lo, n): blocks of about chunk / row_bytes rows. */
static int add_phases(struct kern *q, size_t *cap, unsigned step, unsigned lo, unsigned n,
		      size_t row_bytes, size_t chunk)
{
	size_t rows = row_bytes ? chunk / row_bytes : n;
	rows = rows ? rows : 1;
	for (unsigned r = lo; r < n; r += (unsigned)rows) {
		if (q->k.nphases == *cap) {
			size_t nc = *cap ? 2 * *cap : 1024;
			void *p = realloc(q->ph, nc * sizeof *q->ph);
			if (!p)
				return ENOMEM;
			q->ph = p;
			*cap = nc;
		}
		unsigned r1 = (size_t)r + rows < n ? r + (unsigned)rows : n;
		q->ph[q->k.nphases++] = (struct range){ step, r, r1 };
	}
	return 0;
}

/* ---- LU decomposition (right-looking, no pivoting, diagonally dominant) -- */
static void lu_reset(struct spr_kernel *k)
{
	struct kern *q = (struct kern *)k;
	memcpy(q->a, q->a0, (size_t)q->n * q->n * sizeof *q->a);
}

static void lu_phase(struct spr_kernel *k, size_t p)
{
	struct kern *q = (struct kern *)k;
	unsigned n = q->n, s = q->ph[p].step;
	const double *piv = q->a + (size_t)s * n;
	for (unsigned i = q->ph[p].r0; i < q->ph[p].r1; i++) {
		double *row = q->a + (size_t)i * n;
		double l = row[s] / piv[s];
		row[s] = l;
		for (unsigned j = s + 1; j < n; j++)
			row[j] -= l * piv[j];
	}
}

static uint64_t lu_prefetch(struct spr_kernel *k, size_t p)
{
	struct kern *q = (struct kern *)k;
	unsigned n = q->n, s = q->ph[p].step;
	double sum = 0;
	for (unsigned i = q->ph[p].r0; i < q->ph[p].r1; i++)
		for (unsigned j = s; j < n; j += LINE / sizeof(double))
			sum += q->a[(size_t)i * n + j];
	return (uint64_t)sum;
}

/* ---- transitive closure (Warshall on a byte matrix) ---------------------- */
static void tc_reset(struct spr_kernel *k)
{
	struct kern *q = (struct kern *)k;
	memcpy(q->b, q->b0, (size_t)q->n * q->n);
}

static void tc_phase(struct spr_kernel *k, size_t p)
{
	struct kern *q = (struct kern *)k;
	unsigned n = q->n, s = q->ph[p].step;
	const uint8_t *via = q->b + (size_t)s * n;
	for (unsigned i = q->ph[p].r0; i < q->ph[p].r1; i++) {
		uint8_t *row = q->b + (size_t)i * n;
		if (row[s])
			for (unsigned j = 0; j < n; j++)
				row[j] |= via[j];
	}
}

static uint64_t tc_prefetch(struct spr_kernel *k, size_t p)
{
	struct kern *q = (struct kern *)k;
	unsigned n = q->n, s = q->ph[p].step;
	uint64_t sum = 0;
	for (unsigned i = q->ph[p].r0; i < q->ph[p].r1; i++) {
		const uint8_t *row = q->b + (size_t)i * n;
		if (row[s])   /* the worker only reads rows it will update */
			for (unsigned j = 0; j < n; j += LINE)
				sum += row[j];
	}
	return sum;
}

/* ---- sparse matrix-vector multiply (CSR, fixed nnz per row, iterated) ---- */
static void mv_reset(struct spr_kernel *k)
{
	struct kern *q = (struct kern *)k;
	memcpy(q->x, q->x0, (size_t)q->n * sizeof *q->x);
}

static void mv_phase(struct spr_kernel *k, size_t p)
{
	struct kern *q = (struct kern *)k;
	unsigned it = q->ph[p].step, nnz = q->nnz;
	const double *src = it & 1 ? q->y : q->x;
	double *dst = it & 1 ? q->x : q->y;
	for (unsigned r = q->ph[p].r0; r < q->ph[p].r1; r++) {
		const uint32_t *c = q->col + (size_t)r * nnz;
		const double *v = q->val + (size_t)r * nnz;
		double s = 0;
		for (unsigned j = 0; j < nnz; j++)
			s += v[j] * src[c[j]];
		dst[r] = s;
	}
}

static uint64_t mv_prefetch(struct spr_kernel *k, size_t p)
{
	struct kern *q = (struct kern *)k;
	unsigned it = q->ph[p].step, nnz = q->nnz;
	const double *src = it & 1 ? q->y : q->x;
	size_t lo = (size_t)q->ph[p].r0 * nnz, hi = (size_t)q->ph[p].r1 * nnz;
	double sum = 0;
	for (size_t j = lo; j < hi; j += LINE / sizeof(double))
		sum += q->val[j];
	for (size_t j = lo; j < hi; j++)   /* the irregular part: x[col[j]] */
		sum += src[q->col[j]];
	return (uint64_t)sum;
}

/* ---- common --------------------------------------------------------------- */
static int check(const struct spr_kernel *k)
{
	return memcmp(k->out, k->ref, k->ref_bytes) ? EDOM : 0;
}

static void kern_free(struct spr_kernel *k)
{
	struct kern *q = (struct kern *)k;
	free(q->ph);
	free(q->a);
	free(q->a0);
	free(q->b);
	free(q->b0);
	free(q->val);
	free(q->col);
	free(q->x);
	free(q->y);
	free(q->x0);
}

struct spr_kernel *spr_kernel_new(const char *name, size_t size, size_t chunk, const char **why)
{
	struct kern *q = calloc(1, sizeof *q);
	size_t cap = 0;
	uint64_t seed = 0x2545F4914F6CDD1Dull;
	int rc = 0;

	*why = "out of memory";
	if (!q)
		return NULL;
	q->n = (unsigned)size;
	q->k.name = name;
	q->k.free = kern_free;
	q->k.check = check;
	if (!strcmp(name, "lu")) {
		unsigned n = q->n;
		size_t nn = (size_t)n * n;
		q->k.reset = lu_reset;
		q->k.phase = lu_phase;
		q->k.prefetch = lu_prefetch;
		q->k.bytes = nn * sizeof(double);
		snprintf(q->k.shape, sizeof q->k.shape, "n=%u", n);
		if (!(q->a = malloc(q->k.bytes)) || !(q->a0 = malloc(q->k.bytes)))
			goto fail;
		for (size_t i = 0; i < nn; i++)
			q->a0[i] = (double)(bench_xorshift(&seed) >> 11) * 0x1p-53;
		for (unsigned i = 0; i < n; i++)
			q->a0[(size_t)i * n + i] += n;
		for (unsigned s = 0; s + 1 < n && !rc; s++)
			rc = add_phases(q, &cap, s, s + 1, n, (size_t)(n - s) * sizeof(double), chunk);
		q->k.out = q->a;
		q->k.ref_bytes = q->k.bytes;
	} else if (!strcmp(name, "closure")) {
		unsigned n = q->n;
		size_t nn = (size_t)n * n;
		q->k.reset = tc_reset;
		q->k.phase = tc_phase;
		q->k.prefetch = tc_prefetch;
		q->k.bytes = nn;
		snprintf(q->k.shape, sizeof q->k.shape, "n=%u", n);
		if (!(q->b = malloc(nn)) || !(q->b0 = calloc(nn, 1)))
			goto fail;
		/* a sparse random digraph (about 1.5 edges a vertex): its closure
		 * fills in step by step, so late steps do more work than early ones */
		for (size_t e = 0; e < (size_t)n * 3 / 2; e++) {
			unsigned i = (unsigned)(bench_xorshift(&seed) % n), j = (unsigned)(bench_xorshift(&seed) % n);
			q->b0[(size_t)i * n + j] = 1;
		}
		for (unsigned s = 0; s < n && !rc; s++)
			rc = add_phases(q, &cap, s, 0, n, n, chunk);
		q->k.out = q->b;
		q->k.ref_bytes = nn;
	} else if (!strcmp(name, "spmv")) {
		unsigned rows = q->n;
		q->nnz = 8;
		q->iters = 4;
		size_t nz = (size_t)rows * q->nnz;
		q->k.reset = mv_reset;
		q->k.phase = mv_phase;
		q->k.prefetch = mv_prefetch;
		q->k.bytes = nz * (sizeof(double) + sizeof(uint32_t)) + 2 * (size_t)rows * sizeof(double);
		snprintf(q->k.shape, sizeof q->k.shape, "rows=%u nnz/row=%u iters=%u", rows, q->nnz,
			 q->iters);
		if (!(q->val = malloc(nz * sizeof *q->val)) || !(q->col = malloc(nz * sizeof *q->col)) ||
		    !(q->x = malloc(rows * sizeof *q->x)) || !(q->y = malloc(rows * sizeof *q->y)) ||
		    !(q->x0 = malloc(rows * sizeof *q->x0)))
			goto fail;
		for (size_t j = 0; j < nz; j++) {
			q->col[j] = (uint32_t)(bench_xorshift(&seed) % rows);
			/* row sums about 1: the iterates stay bounded */
			q->val[j] = (double)(bench_xorshift(&seed) >> 11) * 0x1p-53 * 2.0 / q->nnz;
		}
		for (unsigned r = 0; r < rows; r++)
			q->x0[r] = 1.0 + (double)(r % 7) * 0.125;
		for (unsigned it = 0; it < q->iters && !rc; it++)
			rc = add_phases(q, &cap, it, 0, rows,
					q->nnz * (sizeof(double) + sizeof(uint32_t)), chunk);
		q->k.out = q->iters & 1 ? q->y : q->x;
		q->k.ref_bytes = rows * sizeof(double);
	} else {
		*why = "unknown kernel";
		free(q);
		return NULL;
	}
	if (rc)
		goto fail;
	return &q->k;
fail:
	kern_free(&q->k);
	free(q);
	return NULL;
}

int spr_kernel_reference(struct spr_kernel *k)
{
	k->reset(k);
	for (size_t p = 0; p < k->nphases; p++)
		k->phase(k, p);
	if (!(k->ref = malloc(k->ref_bytes)))
		return ENOMEM;
	memcpy(k->ref, k->out, k->ref_bytes);
	return 0;
}

void spr_kernel_free(struct spr_kernel *k)
{
	if (!k)
		return;
	free(k->ref);
	k->free(k);
	free(k);
}
