# Core area: attention exactness (seeds + numpy reference data), kernel twins, head stats, colormaps.
# Reference data: tests/reference/make_reference.py -> tests/reference/data/attention_cases.txt
attnviz_add_test(core_tests
  SOURCES tests/core/attention_test.cpp tests/core/kernels_test.cpp tests/core/kernels_tiles_test.cpp
          tests/core/head_stats_test.cpp tests/core/colormap_test.cpp tests/core/label_layout_test.cpp
          tests/core/row_scan_test.cpp tests/core/token_select_test.cpp
          tests/core/half_test.cpp
  LIBS attnviz_core)
target_include_directories(core_tests PRIVATE ${CMAKE_SOURCE_DIR}/tests/core)
# The relaxed-SIMD (FMA) tile variants: the WASM twin links the web glue that loads them; the
# native ctest runs that twin once more with relaxed SIMD enabled in node and requires them.
if(EMSCRIPTEN)
  target_sources(core_tests PRIVATE $<TARGET_OBJECTS:attnviz_fma_glue>)
  target_link_options(core_tests PRIVATE ${ATTNVIZ_FMA_LINK_OPTIONS})
else()
  add_test(NAME core_tests_wasm_relaxed_simd
           COMMAND node --no-experimental-fetch --experimental-wasm-relaxed-simd "${ATTNVIZ_WEB_DIR}/tests/core_tests.js"
                   --gtest_filter=KernelTiles.*:Kernels.* --require-isa=wasm-relaxed-simd)
  set_tests_properties(core_tests_wasm_relaxed_simd PROPERTIES LABELS wasm)
  # the module alone: results, imports, no data segment, no byte written outside C
  add_test(NAME fma_module COMMAND node --experimental-wasm-relaxed-simd "${CMAKE_SOURCE_DIR}/tests/core/fma_module_test.mjs"
                                   "${ATTNVIZ_WEB_DIR}/gen/attnviz_fma.wasm")
  set_tests_properties(fma_module PROPERTIES LABELS wasm)
endif()
