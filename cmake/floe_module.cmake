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

# floe_unit_test(NAME name SRCS ... DEPS ...)
#   A GoogleTest binary whose cases are registered with CTest under the label "unit".
function(floe_unit_test)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  gtest_discover_tests(${ARG_NAME} PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60)
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
    target_sources(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src/testkit/fuzz_replay_main.cc)
    add_test(NAME replay.${ARG_NAME} COMMAND ${ARG_NAME} ${corpus})
    set_tests_properties(replay.${ARG_NAME} PROPERTIES LABELS unit TIMEOUT 300)
  endif()
endfunction()
