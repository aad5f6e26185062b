// attnviz seq2seq: a model's translation of a figure sentence, scored against the gold (see figures.h).
// Apart from figures.cpp so that the corpus code does not depend on the decoders.
#include "core/seq2seq/figures.h"
#include "core/seq2seq/metrics.h"

namespace attnviz {
namespace seq2seq {

Status EvaluateFigure(const Model& m, const FigureSentence& f, FigureResult* out, int beam_size) {
  if (m.config.task != f.task)
    return Status::Error("figure " + f.id + " is " + TaskName(f.task) + " but the model translates " +
                         TaskName(m.config.task));
  FigureResult r;
  TranslateOptions options;
  options.beam_size = beam_size;
  Status st = Translate(m, f.text, options, &r.decoded);
  if (!st || !(st = ForceDecode(m, f.gold.source, f.gold.target, &r.forced))) return st;
  r.exact = r.decoded.target_tokens == f.gold.target;
  r.aer = ScoreAlignment(AlignmentMatrix(r.forced), f.gold, AlignMode::ArgMax).Aer();
  r.aer_mean = ScoreAlignment(r.forced.attention, f.gold, AlignMode::ArgMax).Aer();
  *out = std::move(r);
  return Status::Ok();
}

}  // namespace seq2seq
}  // namespace attnviz
