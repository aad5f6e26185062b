# Benchmarks (programs that print figures; not tests). See docs/PERFORMANCE.md.
#   attnviz_bench        attention kernels vs the naive Eigen baseline in the same process
#   attnviz_train_bench  seconds for the Bahdanau model to reach the translation targets
# native: build/<dir>/bench/<name>; web: node --no-experimental-fetch build/<dir>/bench/<name>.js
foreach(bench attnviz_bench attnviz_train_bench)
  if(bench STREQUAL "attnviz_bench")
    add_executable(${bench} bench/attention_bench.cpp)
  else()
    add_executable(${bench} bench/train_bench.cpp)
  endif()
  target_link_libraries(${bench} PRIVATE attnviz_core)
  target_compile_options(${bench} PRIVATE ${ATTNVIZ_WARNINGS})
  set_target_properties(${bench} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bench")
  if(EMSCRIPTEN)
    set_target_properties(${bench} PROPERTIES SUFFIX ".js")
    target_link_options(${bench} PRIVATE -sENVIRONMENT=node -sALLOW_MEMORY_GROWTH=1)
  endif()
endforeach()

# attnviz_load_bench (native): a 151 MB .npy opened by a headless App, whole-file vs streamed
# (docs/PERFORMANCE.md, "Big files"); bench/load_browser_bench.mjs does the same in Chromium.
if(NOT EMSCRIPTEN)
  add_executable(attnviz_load_bench bench/load_bench.cpp)
  target_link_libraries(attnviz_load_bench PRIVATE attnviz_app)
  target_compile_options(attnviz_load_bench PRIVATE ${ATTNVIZ_WARNINGS})
  set_target_properties(attnviz_load_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bench")
endif()
