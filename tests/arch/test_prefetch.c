/* hws_prefetch_write is a hint: it neither writes nor faults.  It is asked
 * for lines of a read-only and of an inaccessible page (a store or an atomic
 * in its place would end the test with SIGSEGV), and the read-only page
 * still holds what it held.  Then the lock fast paths that issue it
 * (auto's try and release) still take and free a lock. */
#include <sys/mman.h>
#include "common/test.h"
#include <hwsync/arch.h>
#include <hwsync/lock_auto.h>

int main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *ro = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(ro != MAP_FAILED);
	for (long i = 0; i < page; i++)
		ro[i] = (unsigned char)(i * 7 + 1);
	CHECK_EQ(mprotect(ro, (size_t)page, PROT_READ), 0);
	void *none = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(none != MAP_FAILED);

	for (long off = 0; off < page; off += HWS_CACHELINE) {
		hws_prefetch_write(ro + off);
		hws_prefetch_write((char *)none + off);
	}
	for (long i = 0; i < page; i++)
		CHECK_EQ(ro[i], (unsigned char)(i * 7 + 1));

	hws_auto_core_t c = { 0 };
	CHECK_EQ(hws_auto_core_try(&c), 0);
	CHECK_EQ(hws_auto_core_try(&c), EBUSY);
	CHECK_EQ(hws_auto_core_release(&c), 0);
	CHECK_EQ(hws_auto_core_try(&c), 0);
	CHECK_EQ(hws_auto_core_release(&c), 0);
	printf("prefetch for write: no fault, no write on %ld-byte pages\n", page);
	return 0;
}
