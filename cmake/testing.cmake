# WASM programs run under node by the tests: files through NODERAWFS, a growing heap.
set(ATTNVIZ_WASM_NODE_LINK -sENVIRONMENT=node -sNODERAWFS=1 -sALLOW_MEMORY_GROWTH=1 -sEXIT_RUNTIME=1)

# attnviz_add_test(NAME SOURCES src... [LIBS lib...] [ARGS arg...] [WASM_ARGS arg...] [NO_WASM])
# (WASM_ARGS: extra arguments for the WASM twin only.)
# One GoogleTest executable per area. The native build runs it directly; the web build
# compiles the same sources to WASM (SIMD128, node, NODERAWFS so tests read files), and
# the native ctest also runs that .js under node, so `ctest` in build/native covers both.
function(attnviz_add_test name)
  cmake_parse_arguments(T "NO_WASM" "" "SOURCES;LIBS;ARGS;WASM_ARGS" ${ARGN})
  if(EMSCRIPTEN AND T_NO_WASM)
    return()
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE attnviz_gtest ${T_LIBS})
  target_compile_options(${name} PRIVATE ${ATTNVIZ_WARNINGS})
  target_compile_definitions(${name} PRIVATE ATTNVIZ_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  if(EMSCRIPTEN)
    set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/tests" SUFFIX ".js")
    # -O1 at link time (the objects are still compiled -O3): Binaryen's -O3 pass took 18-36 s
    # a test program, ~3 min of CI's two cores for seven of them, and ~1.5 s at -O1. The programs
    # that run the app's open path against time limits (attnviz_open_file, attnviz_soak) keep it:
    # there -O1 ran the 65536-entry zip bomb 5x slower (docs/PERFORMANCE.md, "CI time").
    target_link_options(${name} PRIVATE -O1 ${ATTNVIZ_WASM_NODE_LINK})
    add_test(NAME ${name} COMMAND node --no-experimental-fetch "${CMAKE_BINARY_DIR}/tests/${name}.js" ${T_ARGS} ${T_WASM_ARGS})
  else()
    add_test(NAME ${name} COMMAND ${name} ${T_ARGS})
    if(NOT T_NO_WASM)
      add_test(NAME ${name}_wasm COMMAND node --no-experimental-fetch "${ATTNVIZ_WEB_DIR}/tests/${name}.js" ${T_ARGS}
               ${T_WASM_ARGS})
      set_tests_properties(${name}_wasm PROPERTIES LABELS wasm)
    endif()
  endif()
endfunction()

# attnviz_add_node_test(NAME SCRIPT [ARGS...]): a node script (browser tests), native ctest only.
function(attnviz_add_node_test name script)
  if(EMSCRIPTEN)
    return()
  endif()
  add_test(NAME ${name} COMMAND node "${script}" ${ARGN} WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
  set_tests_properties(${name} PROPERTIES LABELS browser ENVIRONMENT "ATTNVIZ_WEB_APP=${ATTNVIZ_WEB_DIR}/app")
endfunction()
