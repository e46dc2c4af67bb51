/* hwloc loaded on first use: the LD_PRELOAD shim's table (hwloc_fns.h), by
 * the soname of the hwloc the build found (HWS_HWLOC_SONAME). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "arch/internal.h"
#include "topo/hwloc_fns.h"

static pthread_once_t hw_once = PTHREAD_ONCE_INIT;
static struct hwloc_fns hw_loaded;
static const struct hwloc_fns *hw;	/* set once, by hw_open */
static char hw_why[192] = "not loaded";

static void hw_open(void)
{
	static const char *const names[] = {
		"hwloc_get_api_version", "hwloc_topology_init", "hwloc_topology_set_xml",
		"hwloc_topology_load", "hwloc_topology_destroy", "hwloc_get_type_depth",
		"hwloc_get_nbobjs_by_depth", "hwloc_get_obj_by_depth", "hwloc_obj_type_snprintf",
		"hwloc_bitmap_isset",
	};
	void *lib = dlopen(HWS_HWLOC_SONAME, RTLD_NOW | RTLD_LOCAL);
	void *fn[sizeof names / sizeof names[0]];

	_Static_assert(sizeof fn == sizeof hw_loaded, "one name per hwloc function");
	if (!lib) {
		snprintf(hw_why, sizeof hw_why, "cannot load %s: %s", HWS_HWLOC_SONAME, dlerror());
		return;
	}
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!(fn[i] = dlsym(lib, names[i]))) {
			snprintf(hw_why, sizeof hw_why, "%s lacks %s", HWS_HWLOC_SONAME, names[i]);
			return;   /* the library stays loaded: harmless, and dlclose may not be */
		}
	memcpy(&hw_loaded, fn, sizeof hw_loaded);
	/* hwloc's rule: the same major API version as the headers we built with. */
	if (hw_loaded.get_api_version() >> 16 != HWLOC_API_VERSION >> 16) {
		snprintf(hw_why, sizeof hw_why, "%s has API version %#x, built for %#x",
			 HWS_HWLOC_SONAME, hw_loaded.get_api_version(), HWLOC_API_VERSION);
		return;
	}
	hw = &hw_loaded;
}

const struct hwloc_fns *hws_hwloc_fns(void)
{
	hws_once(&hw_once, hw_open);
	if (!hw)
		hws_fail(ENOTSUP, "hwloc is not available: %s", hw_why);
	return hw;
}
