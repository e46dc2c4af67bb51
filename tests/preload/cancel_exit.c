/* Threads that loop on lock/unlock with asynchronous cancellation enabled
 * are cancelled; the program must still exit (the shim's exit path must not
 * wait on anything such a thread left behind). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static volatile long n;

static void *looper(void *arg)
{
	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	for (;;) {
		pthread_mutex_lock(&m);
		n++;
		if (arg)
			pthread_cond_signal(&c);
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[3];
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, looper, (void *)i);
	usleep(100000);
	for (int i = 0; i < 3; i++)
		pthread_cancel(t[i]);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("exited after %s\n", n > 0 ? "progress" : "no progress");
	return 0;
}
