# Backend-less app smoke test (no window, no GL): every view for hundreds of frames.
attnviz_add_test(app_smoke_tests SOURCES "${CMAKE_SOURCE_DIR}/tests/app/app_smoke_test.cpp" LIBS attnviz_app NO_WASM)
if(NOT EMSCRIPTEN)
  # The real desktop app under Xvfb (Mesa OpenGL ES 3): every view draws.
  add_test(NAME native_app_xvfb COMMAND bash "${CMAKE_SOURCE_DIR}/tests/app/native_run.sh" "$<TARGET_FILE:attnviz>"
           "${CMAKE_SOURCE_DIR}/build/test-artifacts" WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
endif()
# Live training off the UI thread: worker reports and the thread runner equal the trainer (native and WASM).
attnviz_add_test(train_runner_tests SOURCES "${CMAKE_SOURCE_DIR}/tests/app/train_runner_test.cpp" LIBS attnviz_app)
if(NOT EMSCRIPTEN)
  # Token labels in nine scripts, natively (fontconfig + FreeType + HarfBuzz) under Xvfb: pixels per label box.
  add_test(NAME native_labels_xvfb COMMAND bash "${CMAKE_SOURCE_DIR}/tests/app/native_labels.sh" "$<TARGET_FILE:attnviz>"
           "${CMAKE_SOURCE_DIR}/build/test-artifacts" WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
endif()
