# soak: long runs leave memory flat (docs/SECURITY.md). attnviz_soak plays the animation and/or
# opens and closes files for --seconds, checking the live heap and RSS (native) or the WASM memory
# size after a warm-up. ctest runs 60 s natively and 60 s as WASM under node; `make soak` an hour.
add_executable(attnviz_soak tests/soak/soak_main.cpp)
target_link_libraries(attnviz_soak PRIVATE attnviz_app)
target_compile_options(attnviz_soak PRIVATE ${ATTNVIZ_WARNINGS})
set_target_properties(attnviz_soak PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/tests")
set(ATTNVIZ_SOAK_FILES "${CMAKE_SOURCE_DIR}/tests/io/data/attention_lhqk.npz"
    "${CMAKE_SOURCE_DIR}/tests/fuzz/seeds/attention/v1.json")
if(EMSCRIPTEN)
  set_target_properties(attnviz_soak PROPERTIES SUFFIX ".js")
  target_link_options(attnviz_soak PRIVATE ${ATTNVIZ_WASM_NODE_LINK} -sMAXIMUM_MEMORY=4GB
                      -sMIN_WEBGL_VERSION=2 -sMAX_WEBGL_VERSION=2)
else()
  # The 2-minute version: 60 s of animation natively and 60 s as WASM.
  add_test(NAME soak_animation_60s COMMAND "$<TARGET_FILE:attnviz_soak>" --phase animation --seconds 60)
  add_test(NAME soak_animation_60s_wasm
           COMMAND node --no-experimental-fetch "${ATTNVIZ_WEB_DIR}/tests/attnviz_soak.js" --phase animation --seconds 60)
  set_tests_properties(soak_animation_60s soak_animation_60s_wasm PROPERTIES LABELS soak TIMEOUT 300)
  # Repeated opens of the same files: reopening replaces a file and only the 8 most recent stay
  # (app_files.cpp), so memory stays flat. Fails fast at +8 MB.
  add_test(NAME soak_open_close COMMAND "$<TARGET_FILE:attnviz_soak>" --phase open-close --seconds 20
           ${ATTNVIZ_SOAK_FILES})
  set_tests_properties(soak_open_close PROPERTIES LABELS soak TIMEOUT 120)
endif()
