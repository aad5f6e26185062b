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

# attnviz_decode_bench: F16 attention weights decoded to float, the shipped functions against the
# ones they replaced, in one process (both builds).
add_executable(attnviz_decode_bench bench/decode_bench.cpp)
target_link_libraries(attnviz_decode_bench PRIVATE attnviz_io)
target_compile_options(attnviz_decode_bench PRIVATE ${ATTNVIZ_WARNINGS})
set_target_properties(attnviz_decode_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bench")
if(EMSCRIPTEN)
  set_target_properties(attnviz_decode_bench PROPERTIES SUFFIX ".js")
  target_link_options(attnviz_decode_bench PRIVATE -sENVIRONMENT=node -sALLOW_MEMORY_GROWTH=1)
endif()

# attnviz_load_bench (native): a 151 MB .npy opened by a headless App, whole-file vs streamed
# (docs/PERFORMANCE.md, "Big files"); bench/load_browser_bench.mjs does the same in Chromium.
if(NOT EMSCRIPTEN)
  add_executable(attnviz_load_bench bench/load_bench.cpp)
  target_link_libraries(attnviz_load_bench PRIVATE attnviz_app)
  target_compile_options(attnviz_load_bench PRIVATE ${ATTNVIZ_WARNINGS})
  set_target_properties(attnviz_load_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bench")
endif()

# The WASM kernels as a module that bench/peers/run.mjs loads next to onnxruntime-web and tfjs.
if(EMSCRIPTEN)
  add_executable(attnviz_bench_module bench/bench_module.cpp $<TARGET_OBJECTS:attnviz_fma_glue>)
  target_link_libraries(attnviz_bench_module PRIVATE attnviz_core)
  target_compile_options(attnviz_bench_module PRIVATE ${ATTNVIZ_WARNINGS})
  set_target_properties(attnviz_bench_module PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bench" SUFFIX ".js")
  target_link_options(attnviz_bench_module PRIVATE -sENVIRONMENT=node -sALLOW_MEMORY_GROWTH=1 ${ATTNVIZ_FMA_LINK_OPTIONS} -sMODULARIZE=1
    -sEXPORT_NAME=createAttnvizBench -sEXPORTED_RUNTIME_METHODS=UTF8ToString
    -sEXPORTED_FUNCTIONS=_malloc,_free,_attnviz_bench_tile_count,_attnviz_bench_tile_name,_attnviz_bench_tile_isa,_attnviz_bench_probe,_attnviz_bench_probe_gflops,_attnviz_bench_probe_ms,_attnviz_bench_force_tile,_attnviz_bench_force_block,_attnviz_bench_block_rule,_attnviz_bench_muladd_peak,_attnviz_bench_fma_peak,_attnviz_bench_attention,_attnviz_bench_phase,_attnviz_bench_gemm_l1,_attnviz_bench_selected)
endif()

# Natively: the Eigen baseline built with -march=native, isolated in a shared library.
if(NOT EMSCRIPTEN)
  add_library(attnviz_eigen_native SHARED bench/eigen_native.cpp)
  target_link_libraries(attnviz_eigen_native PRIVATE Eigen3::Eigen)
  target_compile_options(attnviz_eigen_native PRIVATE -march=native -fvisibility=hidden -fvisibility-inlines-hidden)
  target_link_options(attnviz_eigen_native PRIVATE -Wl,-Bsymbolic)
  set_target_properties(attnviz_eigen_native PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bench")
  target_link_libraries(attnviz_bench PRIVATE attnviz_eigen_native)
  target_compile_definitions(attnviz_bench PRIVATE ATTNVIZ_BENCH_EIGEN_NATIVE)
endif()
