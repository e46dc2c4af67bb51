/* The polling policies: spin, pause, backoff, the delay loops of [T2SPIN] and
 * yield.  Each differs only in what it does between two reads of the word. */
#include <sched.h>
#include "wait/internal.h"

static void nothing(const hws_wait_t *w, uint32_t *state)
{
	(void)w, (void)state;
	__asm__ __volatile__("" ::: "memory");
}

static void pause_once(const hws_wait_t *w, uint32_t *state)
{
	(void)w, (void)state;
	hws_cpu_relax();
}

/* Exponential backoff: pause min, 2*min, ... up to max times between reads. */
static void backoff(const hws_wait_t *w, uint32_t *state)
{
	uint32_t n = *state ? *state : w->backoff_min;

	for (uint32_t i = 0; i < n; i++)
		hws_cpu_relax();
	*state = n >= w->backoff_max / 2 ? w->backoff_max : n * 2;
}

static void delay_div(const hws_wait_t *w, uint32_t *state)
{
	for (uint32_t i = 0; i < w->ops; i++)
		*state += (uint32_t)hws_delay_div(*state);
}

static void delay_fdiv(const hws_wait_t *w, uint32_t *state)
{
	for (uint32_t i = 0; i < w->ops; i++)
		*state += (uint32_t)hws_delay_fdiv((double)*state);
}

static void delay_cas(const hws_wait_t *w, uint32_t *state)
{
	for (uint32_t i = 0; i < w->ops; i++)
		*state += (uint32_t)hws_delay_cas();
}

static void delay_miss(const hws_wait_t *w, uint32_t *state)
{
	for (uint32_t i = 0; i < w->ops; i++)
		*state += (uint32_t)hws_delay_miss();
}

static void yield_once(const hws_wait_t *w, uint32_t *state)
{
	(void)w, (void)state;
	hws_yield();
}

int hws_wait_spin(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl)
{
	return hws_poll_loop(a, old, w, dl, nothing);
}

int hws_wait_pause(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl)
{
	return hws_poll_loop(a, old, w, dl, pause_once);
}

int hws_wait_backoff(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl)
{
	return hws_poll_loop(a, old, w, dl, backoff);
}

int hws_wait_delay(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl)
{
	switch (w->kind) {
	case HWS_WAIT_DELAY_DIV:
		return hws_poll_loop(a, old, w, dl, delay_div);
	case HWS_WAIT_DELAY_FDIV:
		return hws_poll_loop(a, old, w, dl, delay_fdiv);
	case HWS_WAIT_DELAY_CAS:
		return hws_poll_loop(a, old, w, dl, delay_cas);
	default:
		return hws_poll_loop(a, old, w, dl, delay_miss);
	}
}

int hws_wait_yield(const _Atomic uint32_t *a, uint32_t old, const hws_wait_t *w, uint64_t dl)
{
	return hws_poll_loop(a, old, w, dl, yield_once);
}
