/* hwsync compare: what the runner (compare.c) hands the report
 * (compare_report.c): the configurations, every measured run, every round. */
#ifndef HWS_TOOL_COMPARE_H
#define HWS_TOOL_COMPARE_H
#include <stdbool.h>
#include <stddef.h>

#define CMP_MAX_CONFIGS 16

struct cmp_config {
	char name[128];    /* as given: "native", "auto", "mcs:futex" */
	char lock[32];     /* HWSYNC_LOCK, "" for native */
	char wait[96];     /* HWSYNC_WAIT, "" when not set (the shim's default) */
	char slug[128];    /* the name made safe for file names */
	bool native;
	char **env;        /* the child's environment */
};

struct cmp_run {
	double wall_s;     /* start to the end of wait4 */
	double cpu_s;      /* user + system, wait4's rusage (the program and its reaped children) */
	long rss_kib;      /* peak resident set, wait4's ru_maxrss */
	int exit_status;   /* the program's exit status (runs that fail stop the comparison) */
};

struct cmp_round {
	unsigned first;    /* the configuration that ran first: order is a rotation */
	double wall_s;     /* the whole round, setup commands included */
	double other;      /* CPU time others used, over the round's CPU capacity; < 0 unknown */
	bool flagged;      /* other > 10% */
};

struct cmp {
	struct cmp_config cfg[CMP_MAX_CONFIGS];
	unsigned ncfg, ref;         /* ref: native, or the first configuration */
	unsigned rounds, warmup;    /* planned */
	unsigned done;              /* measured rounds completed */
	bool budget_stop;           /* stopped early: the next round would not fit */
	double budget_s, timeout_s; /* 0 = none */
	double elapsed_s;
	int expect_status;
	bool check_output, quiet;
	const char *setup, *out, *out_dir;
	char **argv;                /* the program and its arguments */
	int argc;
	struct cmp_run *runs;       /* runs[round * ncfg + config], measured rounds */
	struct cmp_round *round;    /* measured rounds */
	char cmdline[2048];
};

/* compare_report.c: the table and verdict on stdout, the JSON to c->out. */
void cmp_print_report(const struct cmp *c);
int cmp_write_json(const struct cmp *c);
/* BUF (LEN bytes, N used) plus a space and ARG, single-quoted for the shell
 * when it needs to be; the new length (never past LEN - 1). */
size_t cmp_append_quoted(char *buf, size_t len, size_t n, const char *arg);
/* The `hwsync run` command line that gives configuration k (shell-quoted). */
void cmp_run_line(const struct cmp *c, unsigned k, char *buf, size_t len);
#endif
