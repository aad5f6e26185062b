// attnviz seq2seq: the sentences of the translation figures, with hand-made gold alignments.
//
// Index of this header
//   - FigureSentence     id, task, the sentence as printed, its reference, tokens + gold links
//   - FigureSentences()  the eight: "a".."d" (en-fr), "es1".."es4" (es-en), in that order
//   - FindFigure()       by id
//   - IsFigureVariant()  a sentence within one token edit of a figure: held out of every corpus
//   - EvaluateFigure()   a model's greedy translation of a figure and its AER against the gold
//
// "a".."d" are the four sample alignments of Figure 3 of D. Bahdanau, K. Cho, Y. Bengio, "Neural
// Machine Translation by Jointly Learning to Align and Translate", ICLR 2015 (arXiv:1409.0473),
// tokenized as the figure prints them (punctuation and the elided article are tokens: "L' accord",
// "1992 .", '" , a dit'). The French of the figure is the model's own translation, so it is also
// the reference here ("of environments" -> "de l' environnement"). "es1".."es4" are the examples
// of TensorFlow's tutorial "Neural machine translation with attention" (Spanish -> English).
// The gold links were written by hand (figures.cpp); tests check that each task's grammar
// generates every figure sentence with the same links, and that no corpus contains one.
//
// Typical UI use (a Figures menu in the Translate view):
//   for (const seq2seq::FigureSentence& f : seq2seq::FigureSentences())
//     if (f.task == model.config.task && MenuItem(f.label)) {
//       input = f.text;  dec.Start(model, f.text);   // animate row by row as for any sentence
//       seq2seq::FigureResult r;  seq2seq::EvaluateFigure(model, f, &r);  // exact?, AER, gold links to draw
//     }
#pragma once
#include <string>
#include <vector>

#include "core/seq2seq/corpus.h"
#include "core/seq2seq/translate.h"

namespace attnviz {
namespace seq2seq {

struct FigureSentence {
  std::string id;          // "a", "b", "c", "d", "es1", "es2", "es3", "es4" (what `translate --figure` takes)
  Task task = Task::EnFr;  // the model task that translates it
  std::string label;       // menu text, e.g. "Figure 3(a): The agreement on the European Economic Area ..."
  std::string text;        // the sentence as printed in the source, ready for Translate()
  std::string reference;   // its translation as printed in the source
  std::string citation;    // where it comes from
  SentencePair gold;       // source = Tokenize(text), target = the reference's tokens (lower case), hand-made links
};

const std::vector<FigureSentence>& FigureSentences();     // all eight, "a".."d" then "es1".."es4"
const FigureSentence* FindFigure(const std::string& id);  // nullptr if there is no such figure
// True if source_tokens are within one token insertion, deletion or substitution of a figure
// sentence of the task, punctuation ignored: such sentences never enter a corpus.
bool IsFigureVariant(Task task, const std::vector<std::string>& source_tokens);

struct FigureResult {
  Translation decoded;  // greedy translation of f.text (what Translate() and IncrementalDecoder give)
  Translation forced;   // forced decoding of the gold target: the attention the scores are taken from
  bool exact = false;   // decoded.target_tokens == f.gold.target
  double aer = 0;       // argmax AER of AlignmentMatrix(forced) (the supervised head, else the mean) vs f.gold
  double aer_mean = 0;  // argmax AER of the mean attention (== aer for the RNN models)
};
// Translates the figure's sentence with m and scores it. Errors: the model's task is not the figure's.
Status EvaluateFigure(const Model& m, const FigureSentence& f, FigureResult* out, int beam_size = 1);

}  // namespace seq2seq
}  // namespace attnviz
