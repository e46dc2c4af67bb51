/* A program that uses an installed hwsync. */
#include <stdio.h>
#include <hwsync/hwsync.h>

int main(void)
{
	hws_wait_t w;
	_Atomic uint32_t word = 1;
	if (hws_wait_init(&w, "pause") != 0) {
		fprintf(stderr, "%s\n", hws_last_error());
		return 1;
	}
	if (hws_wait_while_eq32(&word, 0, &w, HWS_FOREVER) != 0)
		return 1;
	printf("consumer: ok (%s)\n", hws_cpu()->arch);
	return 0;
}
