/* Private to the harness (harness.c, run.c, output.c): the context of one
 * experiment run and the session that collects them for the JSON file. */
#ifndef HWS_BENCH_INTERNAL_H
#define HWS_BENCH_INTERNAL_H

#include "bench/harness.h"
#include "bench/json.h"

struct bench_skipped {
	char what[160];
	char reason[200];
};

struct bench_ctx {
	const struct bench_exp *exp;
	const struct bench_opts *o;
	unsigned threads[BENCH_MAX_LIST], nthreads;
	struct bench_list placements;
	char placement_store[128];   /* backs placements when defaulted */
	struct bench_list policies;  /* --policies or the quick default */
	char policy_store[256];
	struct bench_cell **cells;
	unsigned ncells, capcells;
	struct bench_cell **summary;     /* rows added by exp->summarize */
	unsigned nsummary, capsummary;
	struct bench_skipped *skipped;
	unsigned nskipped, capskipped;
	uint64_t t_start_ns, last_progress_ns;
	bool progress_shown;
	char progress_what[96];
};

struct bench_session {
	char cmdline[1024];
	struct bench_ctx **runs;
	unsigned nruns;
};

/* After one measured repetition of c: append to each metric the median of
 * the samples that repetition added (before[k]: metric k's count before it;
 * metrics from nbefore on are new). */
void bench_close_rep(struct bench_cell *c, const size_t *before, unsigned nbefore);
/* Free a cell's samples. */
void bench_cell_free_samples(struct bench_cell *c);

void bench_print_table(const struct bench_ctx *ctx, FILE *f);
void bench_write_machine(struct json *j);
void bench_ctx_free(struct bench_ctx *ctx);

#endif
