# FindCK: Concurrency Kit (libck), a peer the bench compares hwsync with.
#
#   find_package(CK)  ->  CK_FOUND, CK_VERSION and the imported target CK::CK
#
# Found through ck's pkg-config file (Debian: libck-dev).  pkg-config is asked
# again on every configure: an answer kept in the cache from an earlier run
# would hide a libck-dev installed since (`make` before `make demo`) or keep
# one that was removed.  pkg_check_modules skips its query when the cached
# <prefix>_FOUND is true, so that entry is dropped first.
find_package(PkgConfig QUIET)
unset(CK_FOUND CACHE)
unset(CK_FOUND)
if(PkgConfig_FOUND)
  pkg_check_modules(CK QUIET IMPORTED_TARGET ck)
endif()
if(CK_FOUND AND NOT TARGET CK::CK)
  add_library(CK::CK INTERFACE IMPORTED)
  target_link_libraries(CK::CK INTERFACE PkgConfig::CK)
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CK REQUIRED_VARS CK_LINK_LIBRARIES VERSION_VAR CK_VERSION)
