// attnviz seq2seq: AER and sequence metrics (see metrics.h).
#include "core/seq2seq/metrics.h"

#include <set>
#include <utility>

namespace attnviz {
namespace seq2seq {

void AlignmentCounts::Add(const AlignmentCounts& o) {
  predicted += o.predicted;
  sure += o.sure;
  predicted_sure += o.predicted_sure;
  predicted_possible += o.predicted_possible;
}

double AlignmentCounts::Aer() const {
  if (predicted + sure == 0) return 0.0;
  return 1.0 - static_cast<double>(predicted_sure + predicted_possible) / static_cast<double>(predicted + sure);
}

std::vector<Link> AlignmentFromAttention(const Mat& attention, const SentencePair& gold, AlignMode mode,
                                         float threshold) {
  std::vector<uint8_t> scored(gold.target.size(), 0);
  for (const Link& l : gold.links)
    if (l.target >= 0 && l.target < static_cast<int>(scored.size())) scored[l.target] = 1;
  std::vector<Link> out;
  const int rows = std::min<int>(static_cast<int>(attention.rows()), static_cast<int>(gold.target.size()));
  const int cols = std::min<int>(static_cast<int>(attention.cols()), static_cast<int>(gold.source.size()));
  if (cols <= 0) return out;
  for (int t = 0; t < rows; ++t) {
    if (!scored[t]) continue;
    if (mode == AlignMode::ArgMax) {
      int best = 0;
      attention.row(t).head(cols).maxCoeff(&best);
      out.push_back({t, best, true});
    } else {
      for (int s = 0; s < cols; ++s)
        if (attention(t, s) >= threshold) out.push_back({t, s, true});
    }
  }
  return out;
}

AlignmentCounts ScoreAlignment(const Mat& attention, const SentencePair& gold, AlignMode mode, float threshold) {
  std::set<std::pair<int, int>> sure, possible;
  for (const Link& l : gold.links) {
    possible.insert({l.target, l.source});
    if (l.sure) sure.insert({l.target, l.source});
  }
  AlignmentCounts c;
  c.sure = static_cast<int64_t>(sure.size());
  for (const Link& a : AlignmentFromAttention(attention, gold, mode, threshold)) {
    ++c.predicted;
    c.predicted_sure += sure.count({a.target, a.source});
    c.predicted_possible += possible.count({a.target, a.source});
  }
  return c;
}

void SequenceCounts::Add(const std::vector<int>& decoded, const std::vector<int>& reference) {
  ++sentences;
  exact += decoded == reference ? 1 : 0;
  const size_t n = reference.size();
  tokens += static_cast<int64_t>(n) + 1;
  for (size_t i = 0; i < n; ++i) tokens_correct += i < decoded.size() && decoded[i] == reference[i] ? 1 : 0;
  tokens_correct += decoded.size() == n ? 1 : 0;  // EOS at the right place
}

}  // namespace seq2seq
}  // namespace attnviz
