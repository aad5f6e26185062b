# hostile: the readers against hostile files (docs/SECURITY.md). Unit cases per table row
# (native and WASM); the corpus runner drives attnviz-cli over tests/data/hostile and the bombs
# tests/hostile/make_corpus.py generates into the build folder, with time and memory limits.
attnviz_add_test(hostile_tests SOURCES tests/hostile/hostile_io_test.cpp LIBS attnviz_io)

# The viewer's open path as a program: a headless App opens each file as a dropped one.
add_executable(attnviz_open_file tests/hostile/open_file_main.cpp)
target_link_libraries(attnviz_open_file PRIVATE attnviz_app)
target_compile_options(attnviz_open_file PRIVATE ${ATTNVIZ_WARNINGS})
set_target_properties(attnviz_open_file PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/tests")
if(EMSCRIPTEN)
  set_target_properties(attnviz_open_file PROPERTIES SUFFIX ".js")
  target_link_options(attnviz_open_file PRIVATE ${ATTNVIZ_WASM_NODE_LINK} -sMAXIMUM_MEMORY=4GB
                      -sMIN_WEBGL_VERSION=2 -sMAX_WEBGL_VERSION=2)
else()
  # The corpus through attnviz-cli and the open path, natively; with the web build present also
  # the WASM open path under node (build/web/tests/attnviz_open_file.js).
  add_test(NAME hostile_corpus
           COMMAND /usr/bin/python3 "${CMAKE_SOURCE_DIR}/tests/hostile/run_corpus.py"
                   --cli "$<TARGET_FILE:attnviz-cli>" --open "$<TARGET_FILE:attnviz_open_file>"
                   --wasm "${ATTNVIZ_WEB_DIR}/tests/attnviz_open_file.js" --bombs "${CMAKE_BINARY_DIR}/hostile-bombs")
  set_tests_properties(hostile_corpus PROPERTIES TIMEOUT 600)
  # The committed corpus and its manifest are what the generator writes today.
  add_test(NAME hostile_corpus_in_sync
           COMMAND bash -c "d=$(mktemp -d) && /usr/bin/python3 tests/hostile/make_corpus.py --small \"$d\" >/dev/null && diff -r \"$d\" tests/data/hostile; rc=$?; rm -rf \"$d\"; exit $rc"
           WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
endif()
