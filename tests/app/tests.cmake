# Backend-less app smoke test (no window, no GL): every view for hundreds of frames.
attnviz_add_test(app_smoke_tests SOURCES "${CMAKE_SOURCE_DIR}/tests/app/app_smoke_test.cpp" LIBS attnviz_app NO_WASM)
