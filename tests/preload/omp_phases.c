/* OpenMP phases whose answers depend on their barriers (test_omp_phases.sh).
 *
 * Each phase has its threads write shared data before a barrier and read
 * what the other threads wrote after it, ROUNDS times; a barrier that lets a
 * thread through early makes a read see a value of an older round.  One
 * writer in each round waits a little before it writes, so that a thread let
 * through early reads before the write rather than after it by luck (the
 * answer itself never depends on timing: with a barrier it is exact).
 * Rounds alternate between two buffers, so a thread that starts round r + 1
 * while another still reads round r writes the other buffer: one barrier per
 * round is enough.
 *
 *   dynamic, guided  loops ending in GOMP_loop_end
 *   sections         sections ending in GOMP_sections_end
 *   ordered          an ordered loop: a chain built in iteration order
 *   loop-tasks       a dynamic loop whose iterations create tasks, pending
 *                    at the loop's barrier (which must run them)
 *   tasks            nested tasks before `#pragma omp barrier`
 *   combined-for     `parallel for schedule(dynamic)` (GOMP_parallel_loop_*)
 *   combined-sections `parallel sections` (GOMP_parallel_sections)
 *   nested           a dynamic loop and a barrier in teams nested in a team
 *   deep             `#pragma omp barrier` in a team under five one-thread
 *                    regions (deeper than the shim keeps per-thread slots)
 *   task-reduction   `parallel reduction(task, ...)` (GOMP_parallel_reductions)
 *                    around a dynamic loop whose iterations add from tasks
 *   teams            host `teams` (GOMP_teams_reg), each with a parallel
 *                    region and a guided loop in it
 *   late-barrier     one region function, ROUNDS regions that meet at no
 *                    barrier (so the shim then starts it unwrapped), then
 *                    ROUNDS that meet at `#pragma omp barrier`
 *
 * Usage: omp_phases [PHASE...] (default: all).  Prints one line per phase
 * with its checksum and number of wrong reads; exits 1 on any wrong read. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ROUNDS 24
#define M 64        /* iterations of a loop */
#define NSEC 4      /* sections */
#define NTASK 32    /* tasks (each creates one nested task) */
#define DELAY_US 300

static long buf[2][M];
static long secbuf[2][NSEC];
static long chain[2][M];
static long tbuf[2][2 * NTASK];

static long want_sum(int r)
{
	long s = 0;
	for (int i = 0; i < M; i++)
		s += (long)r * M + i + 1;
	return s;
}

static long sum_buf(const long *b, int n)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += b[i];
	return s;
}

static void slow(int i, int last)
{
	if (i == last)
		usleep(DELAY_US);
}

/* Round r's value of slot i of a loop buffer, its last slot written late. */
static void write_slot(long *b, int r, int i)
{
	slow(i, M - 1);
	b[i] = (long)r * M + i + 1;
}

/* What this thread reads of round r's loop buffer once the barrier let it
 * through: the sum, a wrong one counted in *bad (atomic: the team shares it). */
static long read_round(const long *b, int r, long *bad)
{
	long s = sum_buf(b, M);
	if (s != want_sum(r)) {
#pragma omp atomic
		(*bad)++;
	}
	return s;
}

static long phase_loop(int guided, long *bad)
{
	long check = 0;
#pragma omp parallel reduction(+ : check)
	for (int r = 0; r < ROUNDS; r++) {
		long *b = buf[r & 1];
		if (guided) {
#pragma omp for schedule(guided, 1)
			for (int i = 0; i < M; i++)
				write_slot(b, r, i);
		} else {
#pragma omp for schedule(dynamic, 1)
			for (int i = 0; i < M; i++)
				write_slot(b, r, i);
		}
		check += read_round(b, r, bad);
	}
	return check;
}

static long phase_sections(long *bad)
{
	long check = 0;
#pragma omp parallel reduction(+ : check)
	for (int r = 0; r < ROUNDS; r++) {
		long *b = secbuf[r & 1];
#pragma omp sections
		{
#pragma omp section
			b[0] = r * 10 + 1;
#pragma omp section
			b[1] = r * 10 + 2;
#pragma omp section
			b[2] = r * 10 + 3;
#pragma omp section
			{
				usleep(DELAY_US);
				b[3] = r * 10 + 4;
			}
		}
		long s = sum_buf(b, NSEC);
		if (s != r * 40 + 10) {
#pragma omp atomic
			(*bad)++;
		}
		check += s;
	}
	return check;
}

static long phase_ordered(long *bad)
{
	long check = 0;
#pragma omp parallel reduction(+ : check)
	for (int r = 0; r < ROUNDS; r++) {
		long *c = chain[r & 1];
#pragma omp for ordered schedule(dynamic, 1)
		for (int i = 0; i < M; i++) {
			slow(i, M - 1);
#pragma omp ordered
			c[i] = (i ? c[i - 1] : (long)r * M) + 1;
		}
		int ok = 1;
		for (int i = 0; i < M; i++)
			ok &= c[i] == (long)r * M + i + 1;
		if (!ok) {
#pragma omp atomic
			(*bad)++;
		}
		check += c[M - 1];
	}
	return check;
}

static long phase_loop_tasks(long *bad)
{
	long check = 0;
#pragma omp parallel reduction(+ : check)
	for (int r = 0; r < ROUNDS; r++) {
		long *b = buf[r & 1];
#pragma omp for schedule(dynamic, 4)
		for (int i = 0; i < M; i++) {
#pragma omp task firstprivate(i, r, b)
			write_slot(b, r, i);
		}
		check += read_round(b, r, bad);
	}
	return check;
}

static long phase_tasks(long *bad)
{
	long check = 0;
#pragma omp parallel reduction(+ : check)
	for (int r = 0; r < ROUNDS; r++) {
		long *t = tbuf[r & 1];
#pragma omp single nowait
		for (int k = 0; k < NTASK; k++) {
#pragma omp task firstprivate(k, r, t)
			{
				t[k] = r + 1;
#pragma omp task firstprivate(k, r, t)
				{
					slow(k, NTASK - 1);
					t[NTASK + k] = r + 1;
				}
			}
		}
#pragma omp barrier
		long s = sum_buf(t, 2 * NTASK);
		if (s != 2L * NTASK * (r + 1)) {
#pragma omp atomic
			(*bad)++;
		}
		check += s;
	}
	return check;
}

static long phase_combined_for(long *bad)
{
	long check = 0;
	for (int r = 0; r < ROUNDS; r++) {
		long *b = buf[r & 1];
#pragma omp parallel for schedule(dynamic, 1)
		for (int i = 0; i < M; i++)
			write_slot(b, r, i);
		check += read_round(b, r, bad);
	}
	return check;
}

static long phase_combined_sections(long *bad)
{
	long check = 0;
	for (int r = 0; r < ROUNDS; r++) {
		long *b = secbuf[r & 1];
#pragma omp parallel sections
		{
#pragma omp section
			b[0] = r * 10 + 1;
#pragma omp section
			b[1] = r * 10 + 2;
#pragma omp section
			{
				usleep(DELAY_US);
				b[2] = r * 10 + 3;
			}
		}
		long s = b[0] + b[1] + b[2];
		*bad += s != r * 30 + 6;
		check += s;
	}
	return check;
}

/* Teams of two nested in a team: each inner team has its own buffers. */
static long phase_nested(long *bad)
{
	static long nb[8][2][M];
	long check = 0;
	omp_set_max_active_levels(2);
#pragma omp parallel num_threads(2) reduction(+ : check)
	{
		int outer = omp_get_thread_num();
#pragma omp parallel num_threads(2) reduction(+ : check)
		for (int r = 0; r < ROUNDS / 2; r++) {
			long *b = nb[outer & 7][r & 1];
#pragma omp for schedule(dynamic, 1)
			for (int i = 0; i < M; i++)
				write_slot(b, r, i);
			check += read_round(b, r, bad);
#pragma omp barrier
		}
	}
	omp_set_max_active_levels(1);
	return check;
}

/* A team of two under five nested one-thread regions, each of which is a
 * fork of its own: rounds of plain `#pragma omp barrier`. */
static long phase_deep(long *bad)
{
	long check = 0;
#pragma omp parallel num_threads(1)
#pragma omp parallel num_threads(1)
#pragma omp parallel num_threads(1)
#pragma omp parallel num_threads(1)
#pragma omp parallel num_threads(1)
#pragma omp parallel num_threads(2) reduction(+ : check)
	for (int r = 0; r < ROUNDS; r++) {
		long *b = buf[r & 1];
		int me = omp_get_thread_num(), n = omp_get_num_threads();
		for (int i = me; i < M; i += n)
			write_slot(b, r, i);
#pragma omp barrier
		check += read_round(b, r, bad);
	}
	return check;
}

/* `parallel reduction(task, ...)` (GOMP_parallel_reductions): a dynamic loop
 * whose iterations write the buffer and add to the reduction from tasks. */
static long phase_task_reduction(long *bad)
{
	long check = 0;
	for (int r = 0; r < ROUNDS / 2; r++) {
		long *b = buf[r & 1], t = 0;
#pragma omp parallel reduction(task, + : t)
		{
#pragma omp for schedule(dynamic, 1)
			for (int i = 0; i < M; i++) {
				write_slot(b, r, i);
#pragma omp task in_reduction(+ : t) firstprivate(i)
				t += i;
			}
			read_round(b, r, bad);
		}
		*bad += t != (long)M * (M - 1) / 2;
		check += t;
	}
	return check;
}

/* Host teams (GOMP_teams_reg) run one after the other, each with a team of
 * its own inside. */
static long phase_teams(long *bad)
{
	static long tb[4][M];
	long check = 0;
#pragma omp teams num_teams(2) reduction(+ : check)
	{
		int team = omp_get_team_num() & 3;
#pragma omp parallel reduction(+ : check)
		for (int r = 0; r < ROUNDS / 2; r++) {
			long *b = tb[(team << 1) | (r & 1)];
#pragma omp for schedule(guided, 1)
			for (int i = 0; i < M; i++)
				write_slot(b, r, i);
			check += read_round(b, r, bad);
		}
	}
	return check;
}

/* The barriers of a region the shim has stopped wrapping are libgomp's, and
 * must hold all the same. */
static long phase_late_barrier(long *bad)
{
	long check = 0;
	for (int r = 0; r < 2 * ROUNDS; r++) {
		long *b = buf[r & 1], part = 0;
		int meet = r >= ROUNDS;
#pragma omp parallel reduction(+ : part)
		{
			int me = omp_get_thread_num(), n = omp_get_num_threads();
			for (int i = me; i < M; i += n)
				write_slot(b, r, i);
			if (meet) {
#pragma omp barrier
				part += read_round(b, r, bad);
			}
		}
		check += meet ? part : read_round(b, r, bad);
	}
	return check;
}

static const struct {
	const char *name;
	long (*fn)(long *bad);
	int arg;
} phases[] = {
	{ "dynamic", NULL, 0 }, { "guided", NULL, 1 },
	{ "sections", phase_sections, 0 }, { "ordered", phase_ordered, 0 },
	{ "loop-tasks", phase_loop_tasks, 0 }, { "tasks", phase_tasks, 0 },
	{ "combined-for", phase_combined_for, 0 },
	{ "combined-sections", phase_combined_sections, 0 },
	{ "nested", phase_nested, 0 }, { "deep", phase_deep, 0 },
	{ "task-reduction", phase_task_reduction, 0 }, { "teams", phase_teams, 0 },
	{ "late-barrier", phase_late_barrier, 0 },
};
#define NPHASES (int)(sizeof phases / sizeof phases[0])

int main(int argc, char **argv)
{
	long total_bad = 0;
	int ran = 0;
	for (int p = 0; p < NPHASES; p++) {
		int want = argc < 2;
		for (int a = 1; a < argc; a++)
			want |= !strcmp(argv[a], phases[p].name);
		if (!want)
			continue;
		long bad = 0;
		long check = phases[p].fn ? phases[p].fn(&bad) : phase_loop(phases[p].arg, &bad);
		printf("%s: checksum %ld, wrong reads %ld\n", phases[p].name, check, bad);
		total_bad += bad;
		ran++;
	}
	if (!ran) {
		fprintf(stderr, "omp_phases: no such phase\n");
		return 2;
	}
	return total_bad ? 1 : 0;
}
