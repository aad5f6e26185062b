// attnviz io: a training run's progress as a message, for training that runs elsewhere (a Web
// Worker with its own WASM instance, posting back to the page).
//
// Index of this header
//   - TrainProgress      what a view shows of a run: scalars, per-batch losses, epochs, probes
//   - TrainReportCursor  how much of a Trainer's history has been reported already
//   - EncodeTrainReport  Trainer -> JSON text of what is new since the cursor
//   - ApplyTrainReport   JSON text -> appended to a TrainProgress (validated, never crashes)
//
// A report is one JSON object:
//   {"epoch", "progress", "seconds", "batches", "last_loss", "evaluating",
//    "losses_from": k, "losses": [...],          batch losses k, k+1, ...
//    "history_from": h, "history": [{...}],      EpochStats h, h+1, ...
//    "probes_from": p, "probes": [{...}]}        ProbeSnapshots p, p+1, ...
// Floats are written in their shortest round-trip form, so a run reported this way is bit-for-bit
// the run itself (tests/io/train_report_test.cpp). A report whose `*_from` does not continue what
// the progress holds is refused (a lost or reordered message is an error, not a silent gap).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/seq2seq/trainer.h"
#include "core/status.h"

namespace attnviz {

struct TrainProgress {
  int epoch = 0;                               // completed epochs
  double progress = 0;                         // fraction of the current epoch done, [0, 1]
  double seconds = 0;                          // training compute time so far
  int64_t batches = 0;                         // training batches so far
  float last_loss = 0;                         // loss of the most recent batch
  bool evaluating = false;                     // scoring the held-out set
  std::vector<float> batch_losses;             // every batch's loss
  std::vector<seq2seq::EpochStats> history;    // one entry per epoch
  std::vector<seq2seq::ProbeSnapshot> probes;  // epoch 0, 1, 2, ...

  // Training seconds left in the current epoch at its pace so far; -1 while unknown (the first 2 %
  // of the epoch, or while the held-out set is scored).
  double SecondsLeftInEpoch() const;
};

struct TrainReportCursor {
  size_t losses = 0, history = 0, probes = 0;  // entries reported so far
};

// The trainer's state and everything new since *cursor, which is advanced.
std::string EncodeTrainReport(const seq2seq::Trainer& trainer, TrainReportCursor* cursor);
// Copies a trainer's state into progress directly (the same result as encoding and applying).
void CopyTrainProgress(const seq2seq::Trainer& trainer, TrainProgress* progress);
// Brings *progress up to date: the scalars of `scalars`, the losses, epochs and probes it lacks
// (entries are only ever appended during a run).
void UpdateTrainProgress(const TrainProgress& scalars, const std::vector<float>& losses,
                         const std::vector<seq2seq::EpochStats>& history,
                         const std::vector<seq2seq::ProbeSnapshot>& probes, TrainProgress* progress);
// Parses a report and appends it to *progress; on error *progress is unchanged.
Status ApplyTrainReport(const char* json, size_t size, TrainProgress* progress);

}  // namespace attnviz
