/* hwloc linked in: the library's and the tool's table (hwloc_fns.h). */
#include "topo/hwloc_fns.h"

static const struct hwloc_fns hw_linked = {
	hwloc_get_api_version, hwloc_topology_init, hwloc_topology_set_xml, hwloc_topology_load,
	hwloc_topology_destroy, hwloc_get_type_depth, hwloc_get_nbobjs_by_depth,
	hwloc_get_obj_by_depth, hwloc_obj_type_snprintf, hwloc_bitmap_isset,
};

const struct hwloc_fns *hws_hwloc_fns(void)
{
	return &hw_linked;
}
