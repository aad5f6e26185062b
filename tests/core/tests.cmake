# Core area: attention exactness (seeds + numpy reference data), kernel twins, head stats, colormaps.
# Reference data: tests/reference/make_reference.py -> tests/reference/data/attention_cases.txt
attnviz_add_test(core_tests
  SOURCES tests/core/attention_test.cpp tests/core/kernels_test.cpp tests/core/kernels_tiles_test.cpp
          tests/core/head_stats_test.cpp
          tests/core/colormap_test.cpp
  LIBS attnviz_core)
target_include_directories(core_tests PRIVATE ${CMAKE_SOURCE_DIR}/tests/core)
