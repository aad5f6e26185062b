# big: big and LLM-sized attention (docs/PERFORMANCE.md, "Big files"). The safetensors container
# and the lazily read attention file: header validation, conversions, rows and overviews through
# memory, files (mmap natively, pread in WASM) and a hand-driven asynchronous source, a sparse
# 32 GiB file (native and WASM).
attnviz_add_test(big_tests
  SOURCES tests/big/safetensors_test.cpp tests/big/lazy_attention_test.cpp
  LIBS attnviz_io)
