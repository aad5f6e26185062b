// attnviz seq2seq: translation models that learn alignment. Include this one header.
//
// Index
//   corpus.h     Task (en-fr, dates, es-en), SentencePair with gold links, GenerateCorpus(), ProbePair()
//   figures.h    FigureSentences(): Bahdanau et al.'s Figure 3 and the TensorFlow tutorial's sentences,
//                with hand-made gold alignments; held out of every corpus
//   vocab.h      Vocab (ids, unknown words, Suggest()), Tokenize(), EditDistance()
//   model.h      ModelKind (Bahdanau, Luong, Transformer), ModelConfig, Model, InitModel(),
//                SaveModel() / LoadModel() (validated binary)
//   translate.h  Translate() (greedy / beam) -> tokens + attention rows; IncrementalDecoder
//   trainer.h    Trainer: Step(budget_ms) trains in frame-sized slices; history, probe snapshots
//   metrics.h    AER (argmax / threshold) against gold links, exact match, token accuracy
//   tape.h       the autodiff tape (forward + hand-written backward of every operation)
//
// Quick start for a UI
//   // 1. a pretrained model (bytes of models/bahdanau-en-fr.bin)
//   seq2seq::Model model;
//   if (Status st = seq2seq::LoadModel(data, size, &model); !st) ShowError(st.message);
//   // 2. unknown words, before translating
//   for (int i : model.source_vocab.UnknownPositions(seq2seq::Tokenize(text)))
//     for (const auto& s : model.source_vocab.Suggest(words[i])) OfferFix(s.token);
//   // 3. translate at once ...
//   seq2seq::Translation t;
//   seq2seq::Translate(model, text, {}, &t);   // t.attention: [n_target + 1, n_source]
//   // ... or one row per frame
//   seq2seq::IncrementalDecoder dec;  dec.Start(model, text);
//   while (!dec.Done()) { seq2seq::DecodedWord w; dec.DecodeStep(&w); /* w.token, w.attention */ }
//   // 4. train live: ~8 ms of work per frame keeps the page >= 50 fps
//   seq2seq::Trainer trainer;
//   trainer.Init(seq2seq::DefaultTrainerConfig(seq2seq::ModelKind::Bahdanau, seq2seq::Task::EnFr, 1));
//   every frame: trainer.Step(8.0);  plot trainer.history(), trainer.probes().back().attention
//
// All matrices are row-major float (seq2seq::Mat == attnviz::MatrixRM). Nothing here throws,
// touches files or the screen.
#pragma once
#include "core/seq2seq/corpus.h"
#include "core/seq2seq/figures.h"
#include "core/seq2seq/metrics.h"
#include "core/seq2seq/model.h"
#include "core/seq2seq/trainer.h"
#include "core/seq2seq/translate.h"
#include "core/seq2seq/vocab.h"
