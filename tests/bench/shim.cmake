# shim: a reduced --quick run natively and under the LD_PRELOAD shim, the JSON
# and its paired ratios, explicit kinds/policies, and the skip without the shim.
find_package(Python3 COMPONENTS Interpreter)
if(NOT CMAKE_CROSSCOMPILING AND NOT HWS_TSAN AND Python3_FOUND)
  add_test(NAME bench_check_shim
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/smoke_shim.sh $<TARGET_FILE:hwsync_cli>
            ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_bench_json.py
            $<TARGET_FILE:hwsync_preload> ${CMAKE_INSTALL_FULL_LIBDIR})
  set_tests_properties(bench_check_shim PROPERTIES LABELS bench TIMEOUT 180)
endif()
