# seq2seq: corpus, autodiff gradients of the three models, serialization, decoding, training.
attnviz_add_test(seq2seq_tests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/corpus_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/gradient_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/model_test.cpp
  LIBS attnviz_core)
