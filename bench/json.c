/* Streaming JSON writer: indentation for readability, strings escaped. */
#include <math.h>
#include "bench/json.h"

void json_begin(struct json *j, FILE *f)
{
	*j = (struct json){ .f = f, .depth = 0 };
	j->first[0] = true;
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* Separator, newline/indent and key before a new element. */
static void element(struct json *j, const char *key)
{
	bool first = j->first[j->depth];
	if (!first)
		fputc(',', j->f);
	if (j->depth > 0 && !j->inline_[j->depth])
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	else if (j->depth > 0 && !first)
		fputc(' ', j->f);
	j->first[j->depth] = false;
	if (key) {
		put_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void open_(struct json *j, const char *key, bool inline_, char c)
{
	element(j, key);
	fputc(c, j->f);
	j->depth++;
	j->first[j->depth] = true;
	j->inline_[j->depth] = inline_ || j->inline_[j->depth - 1];
}

static void close_(struct json *j, char c)
{
	bool empty = j->first[j->depth], in = j->inline_[j->depth];
	j->depth--;
	if (!empty && !in)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(c, j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

void json_obj(struct json *j, const char *key, bool inline_) { open_(j, key, inline_, '{'); }
void json_arr(struct json *j, const char *key, bool inline_) { open_(j, key, inline_, '['); }
void json_end_obj(struct json *j) { close_(j, '}'); }
void json_end_arr(struct json *j) { close_(j, ']'); }

void json_str(struct json *j, const char *key, const char *v)
{
	element(j, key);
	if (v)
		put_string(j->f, v);
	else
		fputs("null", j->f);
}

void json_num(struct json *j, const char *key, double v)
{
	element(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.10g", v);
	else
		fputs("null", j->f);
}

void json_int(struct json *j, const char *key, long long v)
{
	element(j, key);
	fprintf(j->f, "%lld", v);
}

void json_bool(struct json *j, const char *key, bool v)
{
	element(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	element(j, key);
	fputs("null", j->f);
}
