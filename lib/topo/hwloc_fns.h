/* hwloc's functions as the topology code calls them: through a table, so that
 * the same topology objects serve the library, which links hwloc
 * (hwloc_linked.c), and the LD_PRELOAD shim, which loads it with dlopen on the
 * first topology query (hwloc_dlopen.c): a program under the shim then loads
 * libhwloc (and libudev with it) only when it uses what needs the topology
 * (the hier barrier), not in every process at start-up.  Only hwloc's
 * exported functions are listed, not its inline helpers, which would
 * reference hwloc symbols directly. */
#ifndef HWS_TOPO_HWLOC_FNS_H
#define HWS_TOPO_HWLOC_FNS_H

#include <hwloc.h>

struct hwloc_fns {
	__typeof__(&hwloc_get_api_version) get_api_version;
	__typeof__(&hwloc_topology_init) topology_init;
	__typeof__(&hwloc_topology_set_xml) topology_set_xml;
	__typeof__(&hwloc_topology_load) topology_load;
	__typeof__(&hwloc_topology_destroy) topology_destroy;
	__typeof__(&hwloc_get_type_depth) get_type_depth;
	__typeof__(&hwloc_get_nbobjs_by_depth) get_nbobjs_by_depth;
	__typeof__(&hwloc_get_obj_by_depth) get_obj_by_depth;
	__typeof__(&hwloc_obj_type_snprintf) obj_type_snprintf;
	__typeof__(&hwloc_bitmap_isset) bitmap_isset;
};

/* The table, or NULL after hws_fail(ENOTSUP, why) when hwloc cannot be
 * loaded.  One definition is linked in: hwloc_linked.c or hwloc_dlopen.c.
 * Hidden: not part of what libhwsync.so exports. */
__attribute__((visibility("hidden")))
const struct hwloc_fns *hws_hwloc_fns(void);

#endif
