# io: NPY/NPZ/ZIP, JSON, the attention file format and SVG export (native and WASM).
attnviz_add_test(io_tests
  SOURCES tests/io/npy_test.cpp
  LIBS attnviz_io)
