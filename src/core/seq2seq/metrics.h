// attnviz seq2seq: translation and alignment metrics.
//
// Index of this header
//   - AlignmentCounts / Aer   alignment error rate (Och & Ney 2003) of attention against gold links
//   - AlignmentFromAttention  attention rows -> predicted links (argmax or threshold)
//   - SequenceCounts          exact match and token accuracy of decoded sentences
#pragma once
#include <cstdint>
#include <vector>

#include "core/seq2seq/corpus.h"
#include "core/seq2seq/tape.h"

namespace attnviz {
namespace seq2seq {

enum class AlignMode {
  ArgMax,     // one link per target word: its most attended source word
  Threshold,  // every source word with weight >= threshold
};

struct AlignmentCounts {
  int64_t predicted = 0;               // |A|
  int64_t sure = 0;                    // |S|
  int64_t predicted_sure = 0;          // |A n S|
  int64_t predicted_possible = 0;      // |A n P| (P includes S)
  void Add(const AlignmentCounts& o);  // accumulate (corpus-level AER is micro-averaged)
  double Aer() const;                  // 1 - (|A n S| + |A n P|) / (|A| + |S|); 0 when both are empty
};

// Links predicted from attention [>= n_target, n_source] for the rows of target words that have
// gold links (rows of unaligned-by-design punctuation and the final EOS row are not scored).
std::vector<Link> AlignmentFromAttention(const Mat& attention, const SentencePair& gold, AlignMode mode,
                                         float threshold = 0.3f);
AlignmentCounts ScoreAlignment(const Mat& attention, const SentencePair& gold, AlignMode mode,
                               float threshold = 0.3f);  // counts for one sentence

struct SequenceCounts {
  int64_t sentences = 0;       // decoded sentences
  int64_t exact = 0;           // decoded == reference
  int64_t tokens = 0;          // reference tokens + 1 (EOS)
  int64_t tokens_correct = 0;  // positions i where decoded[i] == reference[i] (EOS position included)
  void Add(const std::vector<int>& decoded, const std::vector<int>& reference);  // one sentence (ids, no EOS)
  double ExactMatch() const { return sentences ? static_cast<double>(exact) / sentences : 0.0; }        // [0, 1]
  double TokenAccuracy() const { return tokens ? static_cast<double>(tokens_correct) / tokens : 0.0; }  // [0, 1]
};

}  // namespace seq2seq
}  // namespace attnviz
