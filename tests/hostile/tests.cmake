# hostile: the readers against hostile files (docs/SECURITY.md). Unit cases per table row
# (native and WASM); the corpus runner drives attnviz-cli over tests/data/hostile and the bombs
# tests/hostile/make_corpus.py generates into the build folder, with time and memory limits.
attnviz_add_test(hostile_tests SOURCES tests/hostile/hostile_io_test.cpp LIBS attnviz_io)
