# cli: runs the attnviz-cli binary end to end (native only; the CLI is not built for WASM).
# Inputs and numpy references in tests/cli/data: /usr/bin/python3 tests/cli/make_cli_fixtures.py
if(NOT EMSCRIPTEN)
  attnviz_add_test(cli_tests
    SOURCES tests/cli/cli_test.cpp
    LIBS attnviz_io
    NO_WASM)
  target_compile_definitions(cli_tests PRIVATE ATTNVIZ_CLI_PATH="$<TARGET_FILE:attnviz-cli>")
  add_dependencies(cli_tests attnviz-cli)
  # numpy itself must read what attnviz-cli writes (skipped when Debian's numpy is absent).
  if(EXISTS /usr/bin/python3)
    add_test(NAME cli_numpy_reads_output
      COMMAND /usr/bin/python3 "${CMAKE_SOURCE_DIR}/tests/cli/check_with_numpy.py" "$<TARGET_FILE:attnviz-cli>")
  endif()
endif()

# render: PNG / GIF / SVG figures read back (libpng, giflib) and inverted to the weights.
if(NOT EMSCRIPTEN)
  attnviz_add_test(cli_render_tests
    SOURCES tests/cli/render_test.cpp
    LIBS attnviz_figure
    NO_WASM)
  target_compile_definitions(cli_render_tests PRIVATE ATTNVIZ_CLI_PATH="$<TARGET_FILE:attnviz-cli>"
                                                     ATTNVIZ_UI_FONT_PATH="${ATTNVIZ_UI_FONT}")
  add_dependencies(cli_render_tests attnviz-cli)
endif()
