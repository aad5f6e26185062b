# Python package (python/attnviz, docs/PYTHON.md), native ctest only:
#   python_tests      pytest on Debian's python3-numpy, python3-torch and python3-pytest; uses the
#                     web build (ATTNVIZ_WEB_DIR/app) for to_html/serve and attnviz-cli to read what
#                     Python writes
#   python_notebook   python/examples/quickstart.ipynb executed headless by nbconvert to HTML
#   browser_notebook  that HTML opened from disk in headless Chromium: both viewers draw their data
#   browser_python_serve  `python3 -m attnviz serve` of a .npy too big to read whole, in headless
#                     Chromium: read lazily over Range requests; a small .npy read whole
# `make test` builds the web app before ctest runs.
if(NOT EMSCRIPTEN)
  set(ATTNVIZ_PYTHON "/usr/bin/python3" CACHE FILEPATH "Python with Debian's numpy, torch, pytest, nbconvert, ipykernel")
  set(ATTNVIZ_PY_ENV "PYTHONPATH=${CMAKE_SOURCE_DIR}/python" "PYTHONDONTWRITEBYTECODE=1"
      "ATTNVIZ_APP_DIR=${ATTNVIZ_WEB_DIR}/app")

  add_test(NAME python_tests COMMAND "${ATTNVIZ_PYTHON}" -m pytest -q -p no:cacheprovider tests/python
           WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
  set_tests_properties(python_tests PROPERTIES LABELS python
                       ENVIRONMENT "${ATTNVIZ_PY_ENV};ATTNVIZ_CLI=$<TARGET_FILE:attnviz-cli>")

  # `jupyter nbconvert` run through the same interpreter; the kernel inherits the environment.
  add_test(NAME python_notebook
           COMMAND "${ATTNVIZ_PYTHON}" -m nbconvert --to html --execute --output-dir "${CMAKE_BINARY_DIR}/python"
                   --output quickstart "${CMAKE_SOURCE_DIR}/python/examples/quickstart.ipynb"
           WORKING_DIRECTORY "${CMAKE_SOURCE_DIR}")
  set_tests_properties(python_notebook PROPERTIES LABELS python FIXTURES_SETUP attnviz_notebook_html
                       ENVIRONMENT "${ATTNVIZ_PY_ENV};PYDEVD_DISABLE_FILE_VALIDATION=1")

  attnviz_add_node_test(browser_python_serve "${CMAKE_SOURCE_DIR}/tests/python/serve.test.mjs")
  set_tests_properties(browser_python_serve PROPERTIES ENVIRONMENT
                       "ATTNVIZ_WEB_APP=${ATTNVIZ_WEB_DIR}/app;ATTNVIZ_PYTHON=${ATTNVIZ_PYTHON}")

  attnviz_add_node_test(browser_notebook "${CMAKE_SOURCE_DIR}/tests/browser/notebook.test.mjs")
  set_tests_properties(browser_notebook PROPERTIES FIXTURES_REQUIRED attnviz_notebook_html
                       ENVIRONMENT "ATTNVIZ_WEB_APP=${ATTNVIZ_WEB_DIR}/app;ATTNVIZ_NOTEBOOK_HTML=${CMAKE_BINARY_DIR}/python/quickstart.html")
endif()
