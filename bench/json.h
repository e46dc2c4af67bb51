/* A minimal streaming JSON writer for the bench results (no allocation). */
#ifndef HWS_BENCH_JSON_H
#define HWS_BENCH_JSON_H

#include <stdbool.h>
#include <stdio.h>

struct json {
	FILE *f;
	int depth;
	bool first[32];     /* no element written yet at this depth */
	bool inline_[32];   /* this level prints on one line */
};

void json_begin(struct json *j, FILE *f);
/* key is NULL inside arrays.  inline_ prints the container on one line. */
void json_obj(struct json *j, const char *key, bool inline_);
void json_arr(struct json *j, const char *key, bool inline_);
void json_end_obj(struct json *j);
void json_end_arr(struct json *j);
void json_str(struct json *j, const char *key, const char *v);   /* v NULL = null */
void json_num(struct json *j, const char *key, double v);        /* NaN/inf = null */
void json_int(struct json *j, const char *key, long long v);
void json_bool(struct json *j, const char *key, bool v);
void json_null(struct json *j, const char *key);

#endif
