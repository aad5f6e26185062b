# io: NPY/NPZ/ZIP, JSON, the attention file format, SVG export and colormaps (native and WASM).
# Fixtures in tests/io/data are written by numpy: /usr/bin/python3 tests/io/make_npy_fixtures.py
attnviz_add_test(io_tests
  SOURCES tests/io/npy_test.cpp tests/io/json_test.cpp tests/io/attention_file_test.cpp tests/io/attention_sets_test.cpp tests/io/csv_test.cpp tests/io/train_report_test.cpp
  LIBS attnviz_io)
