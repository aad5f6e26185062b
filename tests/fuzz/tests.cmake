# fuzz: libFuzzer targets, one per reader (docs/SECURITY.md), built with clang-14 and
# -fsanitize=fuzzer,address,undefined in build/sanitize (`make sanitize-build`, ATTNVIZ_FUZZ=ON),
# next to ASan + UBSan builds of the core, io, CLI and lazy-app unit tests. The native build's ctest runs
# them from there: each fuzzer for 30 s under a 1 GiB RSS limit (scripts/fuzz.sh), every seed and
# regression file once, and the sanitized unit tests. `make fuzz` runs each for FUZZ_TIME.
set(ATTNVIZ_FUZZ_TARGETS npy npz json attention safetensors)
if(ATTNVIZ_FUZZ)
  foreach(t ${ATTNVIZ_FUZZ_TARGETS})
    add_executable(fuzz_${t} tests/fuzz/fuzz_${t}.cpp)
    target_include_directories(fuzz_${t} PRIVATE tests/fuzz)
    target_link_libraries(fuzz_${t} PRIVATE attnviz_io)
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
    target_compile_options(fuzz_${t} PRIVATE ${ATTNVIZ_WARNINGS})
  endforeach()
elseif(NOT EMSCRIPTEN)
  set(ATTNVIZ_SANITIZE_DIR "${CMAKE_SOURCE_DIR}/build/sanitize" CACHE PATH
      "clang ASan + UBSan + libFuzzer build folder whose tests the native ctest runs")
  set(sanitizer_env "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:quarantine_size_mb=64"
                    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
  foreach(t core_tests io_tests hostile_tests cli_tests big_tests lazy_app_tests)
    # A temporary folder of its own: the plain build's twin runs at the same time (ctest -j) and
    # writes files of the same names (testing::TempDir() is $TEST_TMPDIR, else /tmp/).
    set(tmp "${CMAKE_BINARY_DIR}/tmp/asan_${t}")
    file(MAKE_DIRECTORY "${tmp}")
    add_test(NAME asan_${t} COMMAND "${ATTNVIZ_SANITIZE_DIR}/${t}")
    set_tests_properties(asan_${t} PROPERTIES LABELS sanitize ENVIRONMENT "${sanitizer_env};TEST_TMPDIR=${tmp}/")
  endforeach()
  foreach(t ${ATTNVIZ_FUZZ_TARGETS})
    add_test(NAME fuzz_${t}_30s COMMAND bash scripts/fuzz.sh --time 30 --dir "${ATTNVIZ_SANITIZE_DIR}" ${t}
             WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
    set_tests_properties(fuzz_${t}_30s PROPERTIES LABELS fuzz TIMEOUT 120)
  endforeach()
  add_test(NAME fuzz_regressions COMMAND bash scripts/fuzz.sh --regressions --dir "${ATTNVIZ_SANITIZE_DIR}"
           WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
  set_tests_properties(fuzz_regressions PROPERTIES LABELS fuzz)
endif()
