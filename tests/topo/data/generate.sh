#!/bin/sh
# Regenerate the synthetic hwloc topologies the topo tests load (hwloc >= 2.0:
# lstopo from the hwloc-nox package).  The XML files are committed; run this
# only to change them.
#   two-socket.xml  2 packages, a NUMA node and an L3 each, 4 cores a package,
#                   2 SMT threads a core numbered like Linux on Intel (core 0 =
#                   CPUs 0 and 8)
#   one-socket.xml  1 package, 1 NUMA node, one L3, 4 cores, no SMT (like the
#                   small KVM guest the project is developed on, a bit wider)
#   split-llc.xml   1 package, 1 NUMA node, 2 L3s of 2 cores each (AMD CCX-like)
#   uneven.xml      two-socket.xml restricted to CPUs 0 and 4-7,12-15: package 0
#                   keeps one core without its sibling, package 1 all four cores
#                   (as a cpuset or cgroup can leave a machine)
set -e
cd "$(dirname "$0")"
lstopo=$(command -v lstopo-no-graphics || command -v lstopo)
two="pack:2 [numa] l3:1 l2:4 l1d:1 core:1 pu:2(indexes=0,8,1,9,2,10,3,11,4,12,5,13,6,14,7,15)"
"$lstopo" --input "$two" --of xml -f two-socket.xml
"$lstopo" --input "$two" --restrict 0xf0f1 --of xml -f uneven.xml
"$lstopo" --input "pack:1 [numa] l3:1 l2:4 l1d:1 core:1 pu:1" --of xml -f one-socket.xml
"$lstopo" --input "pack:1 [numa] l3:2 l2:2 l1d:1 core:1 pu:1" --of xml -f split-llc.xml
