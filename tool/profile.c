/* hwsync profile: print a contention profile (the JSON the shim writes for
 * HWSYNC_PROFILE=FILE, docs/preload.md "Contention profile") as the table
 * the shim prints at exit, sorted by any column, with each call-site frame
 * resolved to function and file:line by binutils' addr2line where the module
 * has a symbol table or debug info.  The JSON is read with a small parser of
 * its own (the tool links no JSON library). */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "tool/cli.h"

static const char help[] =
"NAME\n"
"    hwsync profile - the contention profile of a program, as a table\n"
"\n"
"SYNOPSIS\n"
"    hwsync profile FILE [--sort KEY] [--top N] [--family NAME] [--no-lines]\n"
"\n"
"DESCRIPTION\n"
"    Reads the JSON that `hwsync run --profile=FILE` (HWSYNC_PROFILE=FILE) writes\n"
"    at exit (schema hwsync-profile, version 1) and prints one row per object:\n"
"    family, address, acquisitions, contended acquisitions, total and longest\n"
"    wait, mean sampled hold time, and under it the call site of its first\n"
"    contended acquisition, each frame as module+offset, function and, where\n"
"    the module has debug info, file:line (addr2line from binutils; the\n"
"    return address minus one, so the line of the call).  A condvar's\n"
"    acquisitions and contended columns count its waits.\n"
"\n"
"OPTIONS\n"
"    --sort KEY     wait (default: total wait), mean-wait, max-wait, contended,\n"
"                   acquisitions, hold (mean hold), max-hold, timeouts,\n"
"                   family, address, id; largest first, names A-Z\n"
"    --top N        the first N objects (default 10; 0: all)\n"
"    --family NAME  only this family (pthread_mutex, pthread_rwlock,\n"
"                   pthread_cond, sem, pthread_spin, omp_lock, omp_nest_lock,\n"
"                   'omp critical')\n"
"    --no-lines     do not run addr2line\n"
"    -h, --help     this text\n"
"\n"
"EXIT STATUS\n"
"    0 on success; 1 with one line on stderr when the file cannot be read or\n"
"    is not a profile; 2 for bad usage.\n";

/* ---- a small JSON reader ---- */
enum jt { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };
struct jv {
	enum jt t;
	double num;
	unsigned long long u;   /* J_NUM: the integer, exactly */
	char *str;              /* J_STR */
	struct jv *kids;        /* J_ARR, J_OBJ */
	char **keys;            /* J_OBJ */
	size_t n;
};
struct jp {
	const char *s;
	const char *err;
};

static void ws(struct jp *p)
{
	while (isspace((unsigned char)*p->s))
		p->s++;
}

static bool jparse(struct jp *p, struct jv *v, int depth);

static char *jstring(struct jp *p)
{
	size_t cap = 16, n = 0;
	char *out = malloc(cap);
	if (!out || *p->s != '"')
		return p->err = "expected a string", free(out), NULL;
	p->s++;
	while (*p->s && *p->s != '"') {
		char c = *p->s++;
		if (c == '\\') {
			char e = *p->s++;
			switch (e) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				unsigned x = 0;
				for (int i = 0; i < 4; i++) {
					if (!isxdigit((unsigned char)p->s[i]))
						return p->err = "bad \\u escape", free(out), NULL;
					x = x * 16 + (unsigned)(isdigit((unsigned char)p->s[i]) ?
						p->s[i] - '0' : (tolower((unsigned char)p->s[i]) - 'a' + 10));
				}
				p->s += 4;
				c = x < 0x80 ? (char)x : '?';
				break;
			}
			case '"': case '\\': case '/': c = e; break;
			default: return p->err = "bad escape", free(out), NULL;
			}
		}
		if (n + 2 > cap) {
			char *m = realloc(out, cap *= 2);
			if (!m)
				return free(out), p->err = "out of memory", NULL;
			out = m;
		}
		out[n++] = c;
	}
	if (*p->s != '"')
		return p->err = "unterminated string", free(out), NULL;
	p->s++;
	out[n] = 0;
	return out;
}

static bool jlist(struct jp *p, struct jv *v, int depth, bool obj)
{
	size_t cap = 0;
	char close = obj ? '}' : ']';
	p->s++;
	ws(p);
	if (*p->s == close) {
		p->s++;
		return true;
	}
	for (;;) {
		if (v->n == cap) {
			cap = cap ? 2 * cap : 8;
			struct jv *k = realloc(v->kids, cap * sizeof *k);
			char **ks = obj ? realloc(v->keys, cap * sizeof *ks) : NULL;
			if (!k || (obj && !ks))
				return p->err = "out of memory", false;
			v->kids = k;
			if (obj)
				v->keys = ks;
		}
		ws(p);
		if (obj) {
			if (!(v->keys[v->n] = jstring(p)))
				return false;
			ws(p);
			if (*p->s++ != ':')
				return p->err = "expected ':'", false;
		}
		if (!jparse(p, &v->kids[v->n++], depth + 1))
			return false;
		ws(p);
		if (*p->s == ',') {
			p->s++;
			continue;
		}
		if (*p->s++ == close)
			return true;
		return p->err = obj ? "expected ',' or '}'" : "expected ',' or ']'", false;
	}
}

static bool jparse(struct jp *p, struct jv *v, int depth)
{
	memset(v, 0, sizeof *v);
	if (depth > 32)
		return p->err = "nested too deeply", false;
	ws(p);
	switch (*p->s) {
	case '{': v->t = J_OBJ; return jlist(p, v, depth, true);
	case '[': v->t = J_ARR; return jlist(p, v, depth, false);
	case '"': v->t = J_STR; return (v->str = jstring(p)) != NULL;
	}
	if (!strncmp(p->s, "true", 4) || !strncmp(p->s, "false", 5)) {
		v->t = J_BOOL;
		v->u = *p->s == 't';
		p->s += v->u ? 4 : 5;
		return true;
	}
	if (!strncmp(p->s, "null", 4)) {
		p->s += 4;
		return true;
	}
	char *end;
	v->t = J_NUM;
	v->num = strtod(p->s, &end);
	if (end == p->s)
		return p->err = "unexpected character", false;
	v->u = *p->s != '-' && !memchr(p->s, '.', (size_t)(end - p->s)) ?
		strtoull(p->s, NULL, 10) : (unsigned long long)(v->num > 0 ? v->num : 0);
	p->s = end;
	return true;
}

static const struct jv *jget(const struct jv *o, const char *key)
{
	if (!o || o->t != J_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->keys[i], key))
			return &o->kids[i];
	return NULL;
}

static unsigned long long jnum(const struct jv *o, const char *key)
{
	const struct jv *v = jget(o, key);
	return v && v->t == J_NUM ? v->u : 0;
}

static const char *jstr(const struct jv *o, const char *key)
{
	const struct jv *v = jget(o, key);
	return v && v->t == J_STR ? v->str : NULL;
}

/* ---- objects ---- */
#define NSITE 4
struct frame {
	const char *module, *function;
	unsigned long long pc, offset;
	bool has_offset;
	char *fn2l, *line;   /* from addr2line */
};
struct obj {
	const char *family, *address;
	unsigned long long id, acq, cont, wait, max_wait, timeouts, hold_n, hold_ns, max_hold;
	unsigned nsite;
	struct frame site[NSITE];
};

static const char *sort_key = "wait";

static double keyval(const struct obj *o)
{
	if (!strcmp(sort_key, "mean-wait"))
		return o->cont ? (double)o->wait / (double)o->cont : 0;
	if (!strcmp(sort_key, "max-wait"))
		return (double)o->max_wait;
	if (!strcmp(sort_key, "contended"))
		return (double)o->cont;
	if (!strcmp(sort_key, "acquisitions"))
		return (double)o->acq;
	if (!strcmp(sort_key, "hold"))
		return o->hold_n ? (double)o->hold_ns / (double)o->hold_n : 0;
	if (!strcmp(sort_key, "max-hold"))
		return (double)o->max_hold;
	if (!strcmp(sort_key, "timeouts"))
		return (double)o->timeouts;
	if (!strcmp(sort_key, "id"))
		return -(double)o->id;   /* oldest first */
	return (double)o->wait;
}

static int cmp(const void *pa, const void *pb)
{
	const struct obj *a = pa, *b = pb;
	if (!strcmp(sort_key, "family") || !strcmp(sort_key, "address")) {
		const char *x = !strcmp(sort_key, "family") ? a->family : a->address;
		const char *y = !strcmp(sort_key, "family") ? b->family : b->address;
		int c = !strcmp(sort_key, "address") && strlen(x) != strlen(y) ?
			(strlen(x) < strlen(y) ? -1 : 1) : strcmp(x, y);
		if (c)
			return c;
	}
	double ka = keyval(a), kb = keyval(b);
	if (ka != kb)
		return ka > kb ? -1 : 1;
	if (a->wait != b->wait)
		return a->wait > b->wait ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

static const char *const keys[] = { "wait", "mean-wait", "max-wait", "contended", "acquisitions",
				     "hold", "max-hold", "timeouts", "family", "address", "id",
				     NULL };

/* ---- addr2line ---- */

/* Run addr2line on every frame of the shown objects that names a module,
 * one run per module: fills fn2l and line.  0, or -1 when addr2line cannot
 * be run (the caller says so once). */
static int resolve(struct obj *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (unsigned j = 0; j < v[i].nsite; j++) {
			struct frame *f = &v[i].site[j];
			if (!f->module || !f->has_offset || f->line)
				continue;
			/* every frame of this module that is still open */
			size_t cap = 16, na = 0;
			const char **argv = malloc((cap + 8) * sizeof *argv);
			struct frame **fr = malloc(cap * sizeof *fr);
			char (*addr)[24] = malloc(cap * sizeof *addr);
			if (!argv || !fr || !addr)
				return free(argv), free(fr), free(addr), -1;
			for (size_t a = i; a < n; a++)
				for (unsigned b = 0; b < v[a].nsite; b++) {
					struct frame *g = &v[a].site[b];
					if (!g->module || !g->has_offset || g->line ||
					    strcmp(g->module, f->module))
						continue;
					if (na == cap) {
						cap *= 2;
						const char **x = realloc(argv, (cap + 8) * sizeof *x);
						struct frame **y = realloc(fr, cap * sizeof *y);
						char (*z)[24] = realloc(addr, cap * sizeof *z);
						if (x)
							argv = x;
						if (y)
							fr = y;
						if (z)
							addr = z;
						if (!x || !y || !z)
							return free(argv), free(fr), free(addr), -1;
					}
					/* the call, not the instruction after it */
					snprintf(addr[na], sizeof addr[na], "0x%llx",
						 g->offset ? g->offset - 1 : 0);
					fr[na++] = g;
				}
			size_t k = 0;
			argv[k++] = "addr2line";
			argv[k++] = "-f";
			argv[k++] = "-C";
			argv[k++] = "-e";
			argv[k++] = f->module;
			for (size_t a = 0; a < na; a++)
				argv[k++] = addr[a];
			argv[k] = NULL;
			int pfd[2];
			if (pipe(pfd))
				return free(argv), free(fr), free(addr), -1;
			pid_t pid = fork();
			if (pid == 0) {
				dup2(pfd[1], 1);
				int nul = open("/dev/null", 1);
				if (nul >= 0)
					dup2(nul, 2);
				close(pfd[0]);
				execvp("addr2line", (char **)argv);
				_exit(127);
			}
			close(pfd[1]);
			FILE *in = pid > 0 ? fdopen(pfd[0], "r") : NULL;
			char *line = NULL;
			size_t len = 0;
			for (size_t a = 0; in && a < na; a++) {
				char *fn = NULL;
				if (getline(&line, &len, in) < 0)
					break;
				line[strcspn(line, "\n")] = 0;
				fn = strdup(line);
				if (getline(&line, &len, in) < 0) {
					free(fn);
					break;
				}
				line[strcspn(line, "\n")] = 0;
				fr[a]->fn2l = fn;
				fr[a]->line = strdup(line);
			}
			free(line);
			if (in)
				fclose(in);
			else
				close(pfd[0]);
			int st = 0;
			if (pid > 0)
				waitpid(pid, &st, 0);
			for (size_t a = 0; a < na; a++)   /* none: mark it tried */
				if (!fr[a]->line)
					fr[a]->line = strdup("");
			free(argv);
			free(fr);
			free(addr);
			if (pid < 0 || (WIFEXITED(st) && WEXITSTATUS(st) == 127))
				return -1;
		}
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0, got;
	char *buf = malloc(cap + 1);
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *b = realloc(buf, 2 * cap + 1);
			if (!b) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = b;
			cap *= 2;
		}
	}
	if (buf)
		buf[n] = 0;
	if (ferror(f)) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

int hws_cmd_profile(int argc, char **argv)
{
	const char *file = NULL, *family = NULL;
	long top = 10;
	bool lines = true;
	char known[200];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(help, stdout);
			return 0;
		}
		if (!strcmp(a, "--no-lines")) {
			lines = false;
		} else if (!strcmp(a, "--sort") || !strcmp(a, "--top") || !strcmp(a, "--family")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "hwsync profile: %s needs a value\n", a);
				return 2;
			}
			const char *v = argv[++i];
			if (!strcmp(a, "--sort")) {
				if (!hws_cli_known(keys, v)) {
					hws_cli_join(keys, known, sizeof known);
					fprintf(stderr, "hwsync profile: --sort '%s': unknown column "
						"(known: %s)\n", v, known);
					return 2;
				}
				sort_key = v;
			} else if (!strcmp(a, "--top")) {
				char *end;
				top = strtol(v, &end, 10);
				if (*end || end == v || top < 0) {
					fprintf(stderr, "hwsync profile: --top '%s': not a count\n", v);
					return 2;
				}
			} else {
				family = v;
			}
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "hwsync profile: unknown option '%s' (try: hwsync profile "
				"--help)\n", a);
			return 2;
		} else if (!file) {
			file = a;
		} else {
			fprintf(stderr, "hwsync profile: one file only ('%s' and '%s')\n", file, a);
			return 2;
		}
	}
	if (!file) {
		fprintf(stderr, "hwsync profile: no file given (usage: hwsync profile FILE "
			"[--sort KEY] [--top N])\n");
		return 2;
	}
	char *text = slurp(file);
	if (!text) {
		fprintf(stderr, "hwsync profile: %s: %s\n", file, strerror(errno ? errno : EIO));
		return 1;
	}
	struct jp p = { text, NULL };
	struct jv root;
	if (!jparse(&p, &root, 0)) {
		fprintf(stderr, "hwsync profile: %s: not JSON: %s at byte %zu\n", file, p.err,
			(size_t)(p.s - text));
		return 1;
	}
	const char *schema = jstr(&root, "schema");
	const struct jv *objs = jget(&root, "objects"), *table = jget(&root, "table");
	if (!schema || strcmp(schema, "hwsync-profile") || !objs || objs->t != J_ARR || !table) {
		fprintf(stderr, "hwsync profile: %s: not a contention profile (schema "
			"hwsync-profile)\n", file);
		return 1;
	}
	if (jnum(&root, "version") != 1) {
		fprintf(stderr, "hwsync profile: %s: schema version %llu, this hwsync reads 1\n",
			file, jnum(&root, "version"));
		return 1;
	}
	struct obj *v = calloc(objs->n ? objs->n : 1, sizeof *v);
	size_t n = 0;
	if (!v) {
		fprintf(stderr, "hwsync profile: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < objs->n; i++) {
		const struct jv *o = &objs->kids[i];
		struct obj *x = &v[n];
		x->family = jstr(o, "family");
		x->address = jstr(o, "address");
		if (!x->family || !x->address) {
			fprintf(stderr, "hwsync profile: %s: object %zu has no family or address\n",
				file, i);
			return 1;
		}
		if (family && strcmp(family, x->family))
			continue;
		x->id = jnum(o, "id");
		x->acq = jnum(o, "acquisitions");
		x->cont = jnum(o, "contended");
		x->wait = jnum(o, "wait_ns");
		x->max_wait = jnum(o, "max_wait_ns");
		x->timeouts = jnum(o, "timeouts");
		x->hold_n = jnum(o, "hold_samples");
		x->hold_ns = jnum(o, "hold_ns");
		x->max_hold = jnum(o, "max_hold_ns");
		const struct jv *site = jget(o, "site");
		for (size_t j = 0; site && site->t == J_ARR && j < site->n && x->nsite < NSITE; j++) {
			const struct jv *f = &site->kids[j];
			struct frame *fr = &x->site[x->nsite++];
			const char *pc = jstr(f, "pc"), *off = jstr(f, "offset");
			fr->pc = pc ? strtoull(pc, NULL, 16) : 0;
			fr->module = jstr(f, "module");
			fr->function = jstr(f, "function");
			if (off) {
				fr->offset = strtoull(off, NULL, 16);
				fr->has_offset = true;
			}
		}
		n++;
	}
	qsort(v, n, sizeof *v, cmp);
	size_t shown = top && (size_t)top < n ? (size_t)top : n;
	bool resolved = lines && resolve(v, shown) == 0;

	printf("%s: pid %llu, %s, lock kind %s, wait policy %s\n", file, jnum(&root, "pid"),
	       jstr(&root, "program") ? jstr(&root, "program") : "?",
	       jstr(&root, "lock_kind") ? jstr(&root, "lock_kind") : "?",
	       jstr(&root, "wait_policy") ? jstr(&root, "wait_policy") : "?");
	printf("%llu objects, %llu recorded, %llu not recorded (table of %llu), %llu slots "
	       "reused; %zu shown%s%s, by %s\n", jnum(table, "objects"), jnum(table, "recorded"),
	       jnum(table, "not_recorded"), jnum(table, "slots"), jnum(table, "reused"), shown,
	       family ? " of family " : "", family ? family : "", sort_key);
	if (lines && !resolved)
		printf("(addr2line could not be run: no file:line; install binutils)\n");
	printf("%3s %-14s %-16s %12s %10s %11s %10s %10s %10s\n", "#", "family", "object",
	       "acquisitions", "contended", "wait ms", "mean us", "max ms", "hold ns");
	for (size_t i = 0; i < shown; i++) {
		struct obj *o = &v[i];
		char hold[24] = "-", mean[24] = "-";
		if (o->hold_n)
			snprintf(hold, sizeof hold, "%llu", o->hold_ns / o->hold_n);
		if (o->cont)
			snprintf(mean, sizeof mean, "%.2f", (double)o->wait / (double)o->cont / 1e3);
		printf("%3zu %-14s %-16s %12llu %10llu %11.3f %10s %10.3f %10s%s\n", i + 1,
		       o->family, o->address, o->acq, o->cont, (double)o->wait / 1e6, mean,
		       (double)o->max_wait / 1e6, hold,
		       !strcmp(o->family, "pthread_cond") ? " (waits)" : "");
		for (unsigned j = 0; j < o->nsite; j++) {
			struct frame *f = &o->site[j];
			const char *fn = f->fn2l && strcmp(f->fn2l, "??") ? f->fn2l :
					 f->function ? f->function : "?";
			if (!f->module)
				printf("      at 0x%llx\n", f->pc);
			else
				printf("      at %s+0x%llx %s%s%s\n", base_name(f->module), f->offset,
				       fn, f->line && f->line[0] && strncmp(f->line, "??", 2) ? " " : "",
				       f->line && strncmp(f->line, "??", 2) ? f->line : "");
		}
	}
	return 0;
}
