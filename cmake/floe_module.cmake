option(FLOE_FUZZ "Build libFuzzer targets with clang (-fsanitize=fuzzer)" OFF)

# floe_library(NAME name SRCS ... DEPS ...)
#   One static library per module: floe_<name>, includes written from src/.
#   DEPS are the modules and system libraries it may use (DESIGN.md: dependencies point down).
function(floe_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(floe_${ARG_NAME} STATIC ${ARG_SRCS})
  target_include_directories(floe_${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(floe_${ARG_NAME} PUBLIC ${ARG_DEPS})
endfunction()

# floe_unit_test(NAME name SRCS ... DEPS ... [RELEASE])
#   A GoogleTest binary whose cases are registered with CTest under the label "unit".
#   `make test` runs the unit tests in the sanitizer tree only, so the Release tree it builds for
#   the integration tests leaves them out (target for-integration, below). RELEASE marks the
#   few the sanitizer tree cannot build (they link src/app): their label is "unit-release",
#   and for-integration builds them so that `make test` runs them in the Release tree.
#   (Test sources stay at the tree's -O1: at -O0 they compile 2.5x faster, but the heaviest
#   sanitizer tests, e.g. avro_hostile's every-truncation loop, ran 3-5x longer, and the compile
#   is hidden behind the integration tests anyway.)
function(floe_unit_test)
  cmake_parse_arguments(ARG "RELEASE" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  if(ARG_RELEASE)
    # One label (CMake 3.25's discovery script cannot carry a list): ctest -L takes a regular
    # expression, so both `-L unit` and `-L release` select it.
    gtest_discover_tests(${ARG_NAME} PROPERTIES LABELS unit-release DISCOVERY_TIMEOUT 60)
  else()
    set_property(GLOBAL APPEND PROPERTY FLOE_UNIT_ONLY_TARGETS ${ARG_NAME})
    gtest_discover_tests(${ARG_NAME} PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60)
  endif()
endfunction()

# floe_integration_target()
#   Called once, last: the target for-integration builds every executable except the unit tests
#   (unless RELEASE), the fuzz replay drivers and the benchmarks: what the tests labelled
#   integration (and unit-release) run. `make test` builds only this in the Release tree.
function(floe_collect_executables dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  set(found "")
  foreach(t IN LISTS targets)
    get_target_property(type ${t} TYPE)
    if(type STREQUAL "EXECUTABLE")
      list(APPEND found ${t})
    endif()
  endforeach()
  foreach(d IN LISTS subdirs)
    floe_collect_executables(${d} below)
    list(APPEND found ${below})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()
function(floe_integration_target)
  floe_collect_executables(${PROJECT_SOURCE_DIR} all)
  get_property(unit_only GLOBAL PROPERTY FLOE_UNIT_ONLY_TARGETS)
  add_custom_target(for-integration)
  foreach(t IN LISTS all)
    get_target_property(dir ${t} SOURCE_DIR)
    if(t IN_LIST unit_only OR dir MATCHES "^${PROJECT_SOURCE_DIR}/bench(/|$)")
      continue()
    endif()
    add_dependencies(for-integration ${t})
  endforeach()
  # Custom targets the integration tests need (e.g. a client built from outside sources).
  get_property(extra GLOBAL PROPERTY FLOE_INTEGRATION_EXTRA)
  foreach(t IN LISTS extra)
    add_dependencies(for-integration ${t})
  endforeach()
endfunction()

# floe_fuzz_target(NAME name SRCS ... DEPS ... [CORPUS dir])
#   A libFuzzer target: SRCS define LLVMFuzzerTestOneInput.
#   - In the sanitizer tree (FLOE_FUZZ=ON, clang, which also builds and runs the unit tests): a
#     real libFuzzer binary with ASan+UBSan, run for a short, bounded time by `make test` (label
#     fuzz) and for longer by scripts/fuzz.
#   - In the other builds: linked with a replay driver that feeds the seed corpus and a fixed
#     number of deterministic mutations of it, registered as a unit test, so every build
#     exercises the decoder on hostile input.
set(FLOE_FUZZ_SECONDS 15 CACHE STRING "Seconds each fuzz target runs in make test")
function(floe_fuzz_target)
  cmake_parse_arguments(ARG "" "NAME;CORPUS" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
  if(ARG_CORPUS)
    set(corpus ${ARG_CORPUS})
  else()
    set(corpus ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${ARG_NAME})
  endif()
  if(FLOE_FUZZ)
    target_compile_options(${ARG_NAME} PRIVATE -fsanitize=fuzzer)
    target_link_options(${ARG_NAME} PRIVATE -fsanitize=fuzzer)
    set(work ${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}.corpus)
    add_test(NAME fuzz.${ARG_NAME}
      COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1
              UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
              $<TARGET_FILE:${ARG_NAME}> -max_total_time=${FLOE_FUZZ_SECONDS} -timeout=10
              -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 ${work} ${corpus})
    set_tests_properties(fuzz.${ARG_NAME} PROPERTIES LABELS fuzz TIMEOUT 300)
    file(MAKE_DIRECTORY ${work})
  else()
    set_property(GLOBAL APPEND PROPERTY FLOE_UNIT_ONLY_TARGETS ${ARG_NAME})
    target_sources(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src/testkit/fuzz_replay_main.cc)
    add_test(NAME replay.${ARG_NAME} COMMAND ${ARG_NAME} ${corpus})
    set_tests_properties(replay.${ARG_NAME} PROPERTIES LABELS unit TIMEOUT 300)
  endif()
endfunction()
