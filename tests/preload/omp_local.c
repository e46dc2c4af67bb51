/* A program without OpenMP that loads an OpenMP module with dlopen and
 * RTLD_LOCAL (argv[1]) and runs its parallel regions: under the shim, the
 * module's GOMP calls bind to the shim, which must find libgomp although it
 * is not in the global scope.  Prints the module's count; exit 0. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s MODULE.so\n", argv[0]);
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	int (*run)(int) = (int (*)(int))dlsym(h, "omp_local_run");
	if (!run) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 1;
	}
	printf("%d\n", run(50));
	return 0;
}
