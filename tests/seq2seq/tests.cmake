# seq2seq: corpus, serialization, decoding and training tests on the library as shipped (float),
# and the tape's attention forward against core Attend() for every score the models use.
attnviz_add_test(seq2seq_tests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/corpus_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/model_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/attention_match_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/figures_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/pretrained_test.cpp
          ${CMAKE_CURRENT_LIST_DIR}/gemm_test.cpp
  LIBS attnviz_core)

# Finite-difference gradient checks of all three models. The tape and the models are compiled a
# second time in double precision (ATTNVIZ_SEQ2SEQ_DOUBLE) so the checks can be tight; this
# executable does not link attnviz_core.
set(ATTNVIZ_S2S_DIR ${CMAKE_SOURCE_DIR}/src/core/seq2seq)
attnviz_add_test(seq2seq_gradcheck
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/gradient_test.cpp
          ${ATTNVIZ_S2S_DIR}/tape.cpp ${ATTNVIZ_S2S_DIR}/model.cpp ${ATTNVIZ_S2S_DIR}/transformer.cpp
          ${ATTNVIZ_S2S_DIR}/corpus.cpp ${ATTNVIZ_S2S_DIR}/vocab.cpp ${ATTNVIZ_S2S_DIR}/figures.cpp
          ${ATTNVIZ_S2S_DIR}/grammar_en_fr.cpp ${ATTNVIZ_S2S_DIR}/grammar_es_en.cpp
  LIBS Eigen3::Eigen)
target_include_directories(seq2seq_gradcheck PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_compile_definitions(seq2seq_gradcheck PRIVATE ATTNVIZ_SEQ2SEQ_DOUBLE)
