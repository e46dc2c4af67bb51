# make install: headers, libraries, CMake package config and pkg-config file.
include(CMakePackageConfigHelpers)
# kmwait_abi.h is the kernel module's interface, used inside the library only
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/hwsync DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  PATTERN kmwait_abi.h EXCLUDE)
install(TARGETS hwsync hwsync_static EXPORT hwsyncTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS hwsync_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS hwsync_preload LIBRARY DESTINATION ${HWS_PRELOAD_LIBDIR})
install(EXPORT hwsyncTargets NAMESPACE hwsync:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hwsync)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/hwsyncConfig.cmake.in
  ${CMAKE_BINARY_DIR}/hwsyncConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hwsync)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/hwsyncConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/hwsyncConfig.cmake ${CMAKE_BINARY_DIR}/hwsyncConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/hwsync)
set(HWS_PC_REQUIRES "")
if(HWS_HAVE_HWLOC)
  set(HWS_PC_REQUIRES "hwloc")
endif()
configure_file(${CMAKE_SOURCE_DIR}/cmake/hwsync.pc.in ${CMAKE_BINARY_DIR}/hwsync.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/hwsync.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
