/* hwsync info: what this machine offers a waiting thread. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <hwsync/hwsync.h>
#include "tool/cli.h"

static const char help[] =
"usage: hwsync info [--json] [--wait SPEC] | --calibrate\n"
"\n"
"Describe this machine as hwsync sees it: CPU vendor and model, the wait\n"
"instructions the CPU offers (MONITOR/MWAIT, WAITPKG, MONITORX, WFE/WFET),\n"
"the kernel's umwait limits, the time-stamp counter and its calibration, a\n"
"topology summary (hwloc), the adaptive policy's calibration, every wait\n"
"policy with whether it is available here and, if not, why, and for each\n"
"hardware wait the strongest check it has passed in this project: run on\n"
"real hardware, emulated with store-wake semantics, emulated without them,\n"
"or compiled only.\n"
"\n"
"options:\n"
"  --json        print the same as one JSON object (policies, locks, barriers\n"
"                are lists; each policy is {name, available, reason})\n"
"  --wait SPEC   parse and resolve the wait-policy SPEC (e.g. 'backoff:max=4096',\n"
"                'umwait:state=c0.1,max=100us', 'adaptive:spin=auto') and show\n"
"                the result; exits 1 with one line quoting SPEC if it is\n"
"                malformed or unavailable here\n"
"  --calibrate   measure the adaptive policy's futex hand-off now (helper\n"
"                thread) and store it in the per-machine cache that programs\n"
"                using adaptive read instead of measuring ($HWSYNC_CACHE_DIR,\n"
"                else $XDG_CACHE_HOME/hwsync, else ~/.cache/hwsync); prints\n"
"                the file, exits 1 with one line if it cannot be written\n"
"  -h, --help    this text\n";

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/*
 * The strongest check each hardware wait has passed, as the tests stand
 * (docs/wait-policies.md, "What has been checked").  Update with the tests.
 */
static const struct {
	enum hws_wait_kind kind;
	const char *level;	/* hardware, emulated-store-wake, emulated, compiled */
	const char *detail;
} hw_checks[] = {
	{ HWS_WAIT_UMWAIT, "compiled", "compiled only: no WAITPKG CPU has run it" },
	{ HWS_WAIT_TPAUSE, "compiled", "compiled only: no WAITPKG CPU has run it" },
	{ HWS_WAIT_MWAITX, "compiled", "compiled only: no MONITORX CPU has run it" },
	{ HWS_WAIT_WFE, "emulated",
	  "emulated without wake semantics: arm64 unit tests under qemu-user, whose WFE does not sleep" },
	{ HWS_WAIT_KMWAIT, "emulated-store-wake",
	  "emulated with store-wake semantics: Bochs shows a store ends the MWAIT"
	  " (ctest -L kmod-bochs); not run on real hardware" },
};

static const char *yesno(bool b)
{
	return b ? "yes" : "no";
}

static int show_wait(const char *spec, bool json)
{
	hws_wait_t w;
	char canon[160];
	int rc = hws_wait_init(&w, spec);
	if (rc) {
		fprintf(stderr, "hwsync info: %s\n", hws_last_error());
		return 1;
	}
	hws_wait_format(&w, canon, sizeof canon);
	if (json) {
		printf("{\"spec\": ");
		json_str(stdout, spec);
		printf(", \"policy\": \"%s\", \"resolved\": ", hws_wait_kind_name(w.kind));
		json_str(stdout, canon);
		printf("}\n");
	} else {
		printf("%s -> %s\n", spec, canon);
	}
	return 0;
}

/* --calibrate: measure and store for the programs that use adaptive. */
static int calibrate(void)
{
	const struct hws_adaptive_calibration *cal = hws_adaptive_calibration();
	char path[4096];

	if (hws_adaptive_cache_write(cal, path, sizeof path)) {
		fprintf(stderr, "hwsync info: %s\n", hws_last_error());
		return 1;
	}
	printf("wrote %s: futex hand-off %" PRIu64 " ns, sched_yield %" PRIu64 " ns (spin %"
	       PRIu64 " ns)\n", path, cal->handoff_ns, cal->yield_ns, cal->spin_ns);
	return 0;
}

static void print_text(void)
{
	const struct hws_cpu_info *c = hws_cpu();
	const struct hws_adaptive_calibration *cal = hws_adaptive_calibration();
	struct hws_topo_summary t;

	printf("CPU\n");
	printf("  arch            %s\n", c->arch);
	printf("  vendor          %s\n", c->vendor);
	printf("  model           %s (family %u model %u stepping %u)\n", c->model, c->family,
	       c->model_id, c->stepping);
	printf("  hypervisor      %s\n", yesno(c->hypervisor));
	if (!strcmp(c->arch, "x86_64")) {
		printf("  MONITOR/MWAIT   %s (CPUID.1:ECX[3]; privileged, needs the kmwait driver)\n",
		       yesno(c->monitor_mwait));
		if (c->mwait_line_max)
			printf("  monitor line    %u..%u bytes (CPUID.5)\n", c->mwait_line_min,
			       c->mwait_line_max);
		printf("  WAITPKG         %s (CPUID.7:ECX[5]; UMONITOR/UMWAIT/TPAUSE)\n", yesno(c->waitpkg));
		printf("  MONITORX        %s (CPUID.80000001:ECX[29]; MONITORX/MWAITX)\n", yesno(c->monitorx));
		printf("  invariant TSC   %s\n", yesno(c->invariant_tsc));
		if (c->umwait_control_present)
			printf("  umwait_control  max_time=%" PRIu32 " cycles, enable_c02=%d\n",
			       c->umwait_max_time, c->umwait_c02_enabled);
		else
			printf("  umwait_control  absent (/sys/devices/system/cpu/umwait_control)\n");
	} else {
		printf("  WFE             %s\n", yesno(c->wfe));
		printf("  WFET            %s (HWCAP2_WFXT)\n", yesno(c->wfet));
	}
	printf("\nTimer\n  counter         %.3f MHz (%s)\n", c->tsc_hz / 1e6, c->tsc_source);
	printf("  1000 ns         = %" PRIu64 " cycles\n", hws_ns_to_tsc(1000));
	const char *slice_why;
	int slice = hws_rseq_slice_state(&slice_why);
	printf("\nKernel\n  rseq slice ext  %s (%s; the shim's lock holders ask for it where "
	       "offered, unless HWSYNC_SLICE=0: docs/locks.md)\n", slice ? "yes" : "no", slice_why);
	const char *rt_why;
	bool rt = hws_realtime_permitted(&rt_why);
	printf("  SCHED_FIFO      %s (%s)\n", rt ? "yes" : "no", rt_why);

	if (hws_topo_summary(hws_topo_this(), &t) == 0) {
		printf("\nTopology (%s)\n", t.source);
		printf("  packages %u, cores %u, hardware threads %u, SMT %s, NUMA nodes %u\n",
		       t.packages, t.cores, t.pus, yesno(t.smt), t.numa_nodes);
		printf("  caches: L1d %llu KiB, L2 %llu KiB, L3 %llu KiB x %u\n", t.l1d >> 10,
		       t.l2 >> 10, t.l3 >> 10, t.l3_count);
		printf("  barrier groups: %u (%s)\n", hws_topo_ngroups(hws_topo_this()),
		       hws_topo_group_kind(hws_topo_this()));
	}

	printf("\nAdaptive policy calibration\n");
	printf("  futex hand-off (wake to running) %" PRIu64 " ns\n", cal->handoff_ns);
	printf("  futex wake (no sleeper) %" PRIu64 " ns, futex wait (EAGAIN) %" PRIu64
	       " ns, sched_yield %" PRIu64 " ns\n", cal->futex_wake_ns, cal->futex_wait_ns,
	       cal->yield_ns);
	printf("  chose: spin %" PRIu64 " ns (PAUSE for %" PRIu64 " ns, then yield), hardware stage %s\n",
	       cal->spin_ns, cal->pause_ns,
	       cal->hw < HWS_WAIT_NKINDS ? hws_wait_kind_name(cal->hw) : "none");
	printf("  rule: %s\n", cal->rule);
	printf("  source: %s by this command; a program that uses adaptive measures nothing and\n"
	       "  starts from the cache, else learns from its own futex wake-ups\n",
	       hws_adaptive_source_name(cal->source));
	printf("  cache: %s\n", hws_adaptive_cache_state());

	printf("\nWait policies\n");
	for (int k = 0; hws_wait_kinds()[k]; k++) {
		const char *why;
		int rc = hws_wait_available((enum hws_wait_kind)k, &why);
		printf("  %-11s %-4s %s\n", hws_wait_kinds()[k], rc ? "no" : "yes", rc ? why : "");
	}

	printf("\nHardware waits: checks passed\n");
	for (size_t i = 0; i < sizeof hw_checks / sizeof hw_checks[0]; i++)
		printf("  %-11s %s\n", hws_wait_kind_name(hw_checks[i].kind), hw_checks[i].detail);

	printf("\nPrimitives\n");
	hws_cli_print_list(stdout, "  lock kinds", 17, hws_lock_kinds(), NULL);
	hws_cli_print_list(stdout, "  barrier kinds", 17, hws_barrier_kinds(), NULL);
	hws_cli_print_list(stdout, "  rwlock kinds", 17, hws_rwlock_kinds(), NULL);
	printf("  %-15s default rwlocks run reader (or bravo: HWSYNC_RWLOCK=bravo); writer-\n"
	       "  %-15s preferring ones (PREFER_WRITER_NONRECURSIVE_NP) always run writer\n",
	       "", "");
}

static void print_kinds(const char *key, const char *const *kinds)
{
	printf("  \"%s\": [", key);
	for (int i = 0; kinds && kinds[i]; i++)
		printf("%s\"%s\"", i ? ", " : "", kinds[i]);
	printf("],\n");
}

static void print_json(void)
{
	const struct hws_cpu_info *c = hws_cpu();
	const struct hws_adaptive_calibration *cal = hws_adaptive_calibration();
	struct hws_topo_summary t = {0};

	hws_topo_summary(hws_topo_this(), &t);
	printf("{\n  \"cpu\": {\"arch\": \"%s\", \"vendor\": ", c->arch);
	json_str(stdout, c->vendor);
	printf(", \"model\": ");
	json_str(stdout, c->model);
	printf(", \"family\": %u, \"model_id\": %u, \"stepping\": %u, \"hypervisor\": %s,\n",
	       c->family, c->model_id, c->stepping, c->hypervisor ? "true" : "false");
	printf("    \"features\": {\"monitor_mwait\": %s, \"waitpkg\": %s, \"monitorx\": %s, "
	       "\"invariant_tsc\": %s, \"wfe\": %s, \"wfet\": %s},\n",
	       c->monitor_mwait ? "true" : "false", c->waitpkg ? "true" : "false",
	       c->monitorx ? "true" : "false", c->invariant_tsc ? "true" : "false",
	       c->wfe ? "true" : "false", c->wfet ? "true" : "false");
	printf("    \"mwait_line\": [%u, %u],\n", c->mwait_line_min, c->mwait_line_max);
	if (c->umwait_control_present)
		printf("    \"umwait_control\": {\"max_time\": %" PRIu32 ", \"enable_c02\": %s}},\n",
		       c->umwait_max_time, c->umwait_c02_enabled ? "true" : "false");
	else
		printf("    \"umwait_control\": null},\n");
	const char *slice_why;
	int slice = hws_rseq_slice_state(&slice_why);
	printf("  \"kernel\": {\"rseq_slice_extension\": %s, \"rseq_slice_enabled\": %s, "
	       "\"rseq_slice_detail\": ", slice ? "true" : "false", slice == 2 ? "true" : "false");
	json_str(stdout, slice_why);
	const char *rt_why;
	bool rt = hws_realtime_permitted(&rt_why);
	printf(", \"sched_fifo\": %s, \"sched_fifo_detail\": ", rt ? "true" : "false");
	json_str(stdout, rt_why);
	printf("},\n");
	printf("  \"tsc\": {\"hz\": %" PRIu64 ", \"source\": \"%s\"},\n", c->tsc_hz, c->tsc_source);
	printf("  \"topology\": {\"source\": \"%s\", \"packages\": %u, \"cores\": %u, \"pus\": %u, "
	       "\"smt\": %s, \"numa_nodes\": %u, \"l1d\": %llu, \"l2\": %llu, \"l3\": %llu, "
	       "\"l3_count\": %u, \"groups\": %u, \"group_kind\": \"%s\"},\n", t.source,
	       t.packages, t.cores, t.pus, t.smt ? "true" : "false", t.numa_nodes, t.l1d, t.l2, t.l3,
	       t.l3_count, hws_topo_ngroups(hws_topo_this()), hws_topo_group_kind(hws_topo_this()));
	printf("  \"adaptive\": {\"handoff_ns\": %" PRIu64 ", \"futex_wake_ns\": %" PRIu64 ", \"futex_wait_ns\": %" PRIu64
	       ", \"yield_ns\": %" PRIu64 ", \"spin_ns\": %" PRIu64 ", \"hw\": \"%s\", \"rule\": ",
	       cal->handoff_ns, cal->futex_wake_ns, cal->futex_wait_ns, cal->yield_ns, cal->spin_ns,
	       cal->hw < HWS_WAIT_NKINDS ? hws_wait_kind_name(cal->hw) : "none");
	json_str(stdout, cal->rule);
	printf(", \"source\": \"%s\", \"cache\": ", hws_adaptive_source_name(cal->source));
	json_str(stdout, hws_adaptive_cache_state());
	printf("},\n");
	printf("  \"hw_checks\": {");
	for (size_t i = 0; i < sizeof hw_checks / sizeof hw_checks[0]; i++) {
		printf("%s\"%s\": {\"level\": \"%s\", \"detail\": ", i ? ", " : "",
		       hws_wait_kind_name(hw_checks[i].kind), hw_checks[i].level);
		json_str(stdout, hw_checks[i].detail);
		printf("}");
	}
	printf("},\n");
	print_kinds("locks", hws_lock_kinds());
	print_kinds("barriers", hws_barrier_kinds());
	print_kinds("rwlocks", hws_rwlock_kinds());
	printf("  \"policies\": [\n");
	for (int k = 0; hws_wait_kinds()[k]; k++) {
		const char *why;
		int rc = hws_wait_available((enum hws_wait_kind)k, &why);
		printf("    {\"name\": \"%s\", \"available\": %s, \"reason\": ",
		       hws_wait_kinds()[k], rc ? "false" : "true");
		if (rc)
			json_str(stdout, why);
		else
			printf("null");
		printf("}%s\n", hws_wait_kinds()[k + 1] ? "," : "");
	}
	printf("  ]\n}\n");
}

int hws_cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "wait", required_argument, NULL, 'w' },
		{ "calibrate", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool json = false, cal = false;
	const char *spec = NULL;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'w': spec = optarg; break;
		case 'c': cal = true; break;
		case 'h':
			fputs(help, stdout);
			printf("\n");
			hws_cli_print_list(stdout, "wait policies", 14, hws_wait_kinds(), NULL);
			hws_cli_print_list(stdout, "lock kinds", 14, hws_lock_kinds(), NULL);
			hws_cli_print_list(stdout, "barrier kinds", 14, hws_barrier_kinds(), NULL);
			hws_cli_print_list(stdout, "rwlock kinds", 14, hws_rwlock_kinds(), NULL);
			printf("%14s  (HWSYNC_RWLOCK picks reader or bravo for default rwlocks;\n"
			       "%14s  writer-preferring ones always run writer)\n", "", "");
			return 0;
		default:
			fprintf(stderr, "hwsync info: unknown or incomplete option '%s' (try: hwsync info --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hwsync info: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (cal && (json || spec)) {
		fprintf(stderr, "hwsync info: --calibrate goes alone (not with --json or --wait)\n");
		return 2;
	}
	if (cal)
		return calibrate();
	if (spec)
		return show_wait(spec, json);
	if (json)
		print_json();
	else
		print_text();
	return 0;
}
