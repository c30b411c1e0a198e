# floe_library(NAME name SRCS ... DEPS ...)
#   One static library per module: floe_<name>, includes written from src/.
#   DEPS are the modules and system libraries it may use (DESIGN.md: dependencies point down).
function(floe_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(floe_${ARG_NAME} STATIC ${ARG_SRCS})
  target_include_directories(floe_${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(floe_${ARG_NAME} PUBLIC ${ARG_DEPS})
endfunction()

# floe_unit_test(NAME name SRCS ... DEPS ...)
#   A GoogleTest binary whose cases are registered with CTest under the label "unit".
function(floe_unit_test)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  gtest_discover_tests(${ARG_NAME} PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60)
endfunction()
