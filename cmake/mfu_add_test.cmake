include(GoogleTest)
# mfu_add_test(NAME SOURCES a.cc b.cc LIBS mfu::x LABELS unit [SERIAL])
# SERIAL: the test runs alone (real daemons whose timing load disturbs).
function(mfu_add_test name)
  cmake_parse_arguments(T "SERIAL" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main
                        mfu_internal_flags)
  target_compile_definitions(${name} PRIVATE
    MFU_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    MFU_BINARY_DIR="${PROJECT_BINARY_DIR}")
  # Test code needs neither -O2 nor full debug information (the library under
  # test keeps the build type's flags): -O1 -g1 halves the test build, which
  # is most of CI's 90 minutes. MFU_TEST_COMPILE_OPTIONS overrides it.
  if(DEFINED MFU_TEST_COMPILE_OPTIONS)
    target_compile_options(${name} PRIVATE ${MFU_TEST_COMPILE_OPTIONS})
  elseif(CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
    target_compile_options(${name} PRIVATE -O1 -g1)
  endif()
  if(T_SERIAL)
    gtest_discover_tests(${name} PROPERTIES LABELS "${T_LABELS}" RUN_SERIAL TRUE DISCOVERY_TIMEOUT 60)
  else()
    gtest_discover_tests(${name} PROPERTIES LABELS "${T_LABELS}" DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
