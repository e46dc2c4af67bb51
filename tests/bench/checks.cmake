# locks, barriers, spr, wake, uncontended: tiny runs, JSON schema, expected
# rows and metrics, the Chrome trace, and one-line rejection of bad options;
# and the whole quick suite (every experiment, its rows and skipped entries).
find_package(Python3 COMPONENTS Interpreter)
if(NOT CMAKE_CROSSCOMPILING AND NOT HWS_TSAN AND Python3_FOUND)
  foreach(exp locks barriers spr wake uncontended rwlocks suite)
    add_test(NAME bench_check_${exp}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/smoke_${exp}.sh $<TARGET_FILE:hwsync_cli>
              ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/check_bench_json.py)
    set_tests_properties(bench_check_${exp} PROPERTIES LABELS bench TIMEOUT 120
      SKIP_RETURN_CODE 77)
  endforeach()
endif()
