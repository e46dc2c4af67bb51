/* rseq_probe: what the C library's own rseq registration of this thread
 * offers the time-slice extension.  Dynamic, so that it reports on the C
 * library it is loaded with (tests/slice_vm/slice_vm_test.sh runs it with
 * the system's loader and with another C library's).  Prints one line:
 *   rseq_probe: libc VERSION __rseq_size N __rseq_offset O flags 0xF
 *               available A get G set S
 * where A is the extension's AVAILABLE bit in the area's flags, G the
 * prctl GET result and S the SET(enable) result (or -errno). */
#define _GNU_SOURCE
#include <errno.h>
#include <gnu/libc-version.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>

extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

int main(void)
{
	unsigned size = &__rseq_size ? __rseq_size : 0;
	long off = &__rseq_offset ? (long)__rseq_offset : 0;
	unsigned flags = 0;
	if (size >= 20) {
		char *tp;
		__asm__("mov %%fs:0, %0" : "=r"(tp));
		flags = *(volatile uint32_t *)(tp + off + 16);
	}
	long get = prctl(79, 1, 0, 0, 0);
	if (get < 0)
		get = -errno;
	long set = prctl(79, 2, 1, 0, 0);
	if (set < 0)
		set = -errno;
	long get2 = prctl(79, 1, 0, 0, 0);
	if (get2 < 0)
		get2 = -errno;
	printf("rseq_probe: libc %s __rseq_size %u __rseq_offset %ld flags 0x%x available %u "
	       "get %ld set %ld get-after %ld\n", gnu_get_libc_version(), size, off, flags,
	       (flags >> 4) & 1, get, set, get2);
	return 0;
}
