# attnviz_bench: attention kernel benchmark, native and WASM (node). See docs/PERFORMANCE.md.
#   native: build/<dir>/bench/attnviz_bench
#   web:    node --no-experimental-fetch build/<dir>/bench/attnviz_bench.js
add_executable(attnviz_bench bench/attention_bench.cpp)
target_link_libraries(attnviz_bench PRIVATE attnviz_core)
target_compile_options(attnviz_bench PRIVATE ${ATTNVIZ_WARNINGS})
set_target_properties(attnviz_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/bench")
if(EMSCRIPTEN)
  set_target_properties(attnviz_bench PROPERTIES SUFFIX ".js")
  target_link_options(attnviz_bench PRIVATE -sENVIRONMENT=node -sALLOW_MEMORY_GROWTH=1)
endif()
# The repo's package.json says "type": "module"; Emscripten's node output is CommonJS.
if(EMSCRIPTEN)
  file(WRITE "${CMAKE_BINARY_DIR}/bench/package.json" "{ \"type\": \"commonjs\" }\n")
endif()
