# Bench area: the peer benchmark's runner end to end (bench/peers/run.mjs --quick on the web build's
# attnviz_bench_module, against onnxruntime-web and tfjs-wasm from npm): same outputs, and every
# line make bench's figures are read from. A smoke test of the runner, not a timing.
if(NOT EMSCRIPTEN)
  add_test(NAME bench_peers_smoke
           COMMAND node --experimental-wasm-relaxed-simd "${CMAKE_SOURCE_DIR}/tests/bench/peers_smoke_test.mjs"
                   "${ATTNVIZ_WEB_DIR}/bench/attnviz_bench_module.js")
  set_tests_properties(bench_peers_smoke PROPERTIES LABELS wasm TIMEOUT 300)
endif()
