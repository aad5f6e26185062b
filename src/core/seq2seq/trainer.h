// attnviz seq2seq: training in bounded slices (the browser calls Step() once per frame).
//
// Index of this header
//   - TrainerConfig   model, task, corpus sizes, optimizer settings
//   - EpochStats      one row of the history (loss, exact match, token accuracy, AER, time)
//   - ProbeSnapshot   the probe sentence's attention at the end of an epoch (and at epoch 0)
//   - Trainer         Init(), Step(budget_ms), history, probes, the model
//
// An epoch is: shuffle the training pairs, train on every batch (Adam, global-norm clipping,
// teacher forcing), then evaluate the held-out set in chunks (greedy decoding for exact match and
// token accuracy; teacher-forced attention for AER), then snapshot the probe.
// Every unit of work (one micro-batch, one evaluation chunk; with threads, one per thread) is
// short, so Step() can stay within a frame budget: it starts a unit only if the unit's average
// cost still fits.
// Data parallelism (config.threads > 1, native): the micro-batches of a batch are computed on
// several threads, each with its own tape and gradient buffers. Every micro-batch's gradient is
// computed from zero into its own buffer and the buffers are added into the batch's gradient in
// micro-batch order, one thread or many, so the run is bitwise the same for every thread count.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/seq2seq/corpus.h"
#include "core/seq2seq/metrics.h"
#include "core/seq2seq/model.h"
#include "core/seq2seq/worker_pool.h"
#include "core/status.h"

namespace attnviz {
namespace seq2seq {

struct TrainerConfig {
  ModelConfig model;             // architecture (DefaultConfig(kind, task) is a good start)
  Task task = Task::EnFr;        // which corpus to generate
  uint64_t seed = 1;             // corpus, initial weights and shuffling all derive from it
  int n_train = 6000;            // training pairs
  int n_heldout = 400;           // held-out pairs (evaluated every epoch)
  int batch_size = 32;           // sentences per batch (one Adam update)
  int micro_batch = 0;           // sentences per unit of work (gradients accumulate); 0 = batch_size.
                                 // The browser uses small micro-batches so one unit fits in a frame.
  float learning_rate = 6e-3f;   // Adam step size after warm-up
  int warmup_batches = 100;      // linear warm-up of the learning rate
  int decay_batches = 0;         // > 0: after this many updates the rate decays as sqrt(decay_batches / update)
  float beta2 = 0.999f;          // Adam second-moment decay
  float clip_norm = 5.0f;        // global gradient norm clip (<= 0: off)
  int eval_chunk = 50;           // held-out sentences per evaluation unit (the browser: ~8)
  float align_threshold = 0.3f;  // AlignMode::Threshold cut-off
  float align_weight = 0.0f;     // weight of the alignment loss: the Transformer's supervised head (model.align_layer /
                                 // align_head), or the RNN models' attention (guided alignment)
  int threads = 1;  // threads computing micro-batches (and evaluation chunks) in parallel, natively; the result
                    // is bitwise the same for every count. 1 in the browser (no threads); HardwareThreads() natively.
};
TrainerConfig DefaultTrainerConfig(ModelKind kind, Task task, uint64_t seed);  // settings of the pretrained models
// Settings for training live in the page (the Train view, bench/train_bench.cpp): small units of
// work (micro-batches of 4, evaluation chunks of 8) so a frame's slice stays near its budget, and
// settings that reach the targets in less compute (docs/PERFORMANCE.md).
TrainerConfig LiveTrainerConfig(ModelKind kind, Task task, uint64_t seed);

struct EpochStats {
  int epoch = 0;              // 1-based
  double loss = 0;            // mean training loss over the epoch's batches (per target token; with a
                              // supervised head, plus align_weight x its alignment loss)
  double heldout_loss = 0;    // mean teacher-forced loss on the held-out set
  double exact_match = 0;     // held-out, greedy decoding, [0, 1]
  double token_accuracy = 0;  // held-out, greedy decoding, [0, 1]
  double aer = 0;             // held-out, argmax of attention vs gold links, [0, 1]
  double aer_threshold = 0;   // held-out, attention >= align_threshold vs gold links
  double seconds = 0;         // cumulative time spent in Step() when the epoch ended
  int64_t batches = 0;        // cumulative training batches
};

struct ProbeSnapshot {
  int epoch = 0;                              // 0 = before training
  std::vector<std::string> source_tokens;     // the probe source
  std::vector<std::string> reference_tokens;  // its reference translation
  std::vector<std::string> decoded_tokens;    // greedy translation at this epoch
  Mat attention;                              // teacher-forced attention [n_ref + 1, n_src] (last row: EOS)
  double aer = 0;                             // argmax AER of this snapshot
};

// Scores model on pairs (batches of batch_size): greedy exact match / token accuracy and
// teacher-forced AER and loss. Used by the trainer every epoch; handy for tests and tools.
EpochStats Evaluate(const Model& model, const std::vector<SentencePair>& pairs, int batch_size = 50,
                    float align_threshold = 0.3f);

class Trainer {
 public:
  Status Init(const TrainerConfig& config);  // generates the corpus and initializes the model
  // Trains for about budget_ms milliseconds (at least one unit) or max_units units (0 = no cap).
  // Returns the number of units (micro-batches or evaluation chunks) done.
  int Step(double budget_ms, int max_units = 0);
  int RunEpoch();                                                       // steps until the current epoch is evaluated
  int epoch() const { return epoch_; }                                  // completed epochs
  bool evaluating() const { return evaluating_; }                       // true while the held-out set is being scored
  double progress() const;                                              // fraction of the current epoch done, [0, 1]
  double seconds() const { return seconds_; }                           // time spent in Step()
  int64_t batches() const { return batches_; }                          // training batches so far
  float last_loss() const { return last_loss_; }                        // loss of the most recent batch
  const std::vector<EpochStats>& history() const { return history_; }   // one entry per epoch
  const std::vector<ProbeSnapshot>& probes() const { return probes_; }  // epoch 0, 1, 2, ...
  const std::vector<float>& batch_losses() const { return batch_losses_; }  // every batch's loss
  const Model& model() const { return model_; }                             // the model being trained
  const Corpus& corpus() const { return corpus_; }                          // train / held-out pairs
  const TrainerConfig& config() const { return config_; }                   // as given to Init

 private:
  struct Slot {  // one task of a unit of work: its own tape, gradients and results
    Tape tape;
    std::vector<Mat> grads;                  // training: this micro-batch's parameter gradients
    std::vector<const SentencePair*> pairs;  // the sentences of this task
    double loss = 0;                         // training: the micro-batch's loss; evaluation: sum over sentences
    SequenceCounts seq;                      // evaluation
    AlignmentCounts argmax, threshold;       // evaluation
  };
  void TrainUnit();
  void ApplyUpdate();
  void EvalChunk();
  void RunSlots(int count, void (Trainer::*work)(Slot*));
  void ForEachParameter(const std::function<void(size_t)>& fn);  // fn(i) for every parameter, on the pool
  void TrainSlot(Slot* slot);
  void EvalSlot(Slot* slot);
  void FinishEpoch();
  void Snapshot();
  void StartEpoch();

  TrainerConfig config_;
  Corpus corpus_;
  Model model_;
  std::vector<std::unique_ptr<Slot>> slots_;  // config.threads of them; slot 0's tape also serves Snapshot
  std::unique_ptr<WorkerPool> pool_;          // null with one thread
  Rng rng_;
  std::vector<int> order_;
  size_t cursor_ = 0;       // next training pair (index into order_)
  size_t batch_end_ = 0;    // end of the batch being accumulated
  int micro_in_batch_ = 0;  // micro-batches accumulated into the gradients
  double batch_loss_sum_ = 0;
  bool evaluating_ = false;
  size_t eval_cursor_ = 0;
  int epoch_ = 0;
  int64_t batches_ = 0;
  int64_t adam_t_ = 0;
  double seconds_ = 0;
  float last_loss_ = 0;
  double epoch_loss_sum_ = 0;
  int epoch_loss_count_ = 0;
  double eval_loss_sum_ = 0;
  int eval_loss_count_ = 0;
  SequenceCounts eval_seq_;
  AlignmentCounts eval_argmax_, eval_threshold_;
  double avg_batch_ms_ = 0, avg_eval_ms_ = 0;
  double step_start_ms_ = 0;  // start of the running Step(), for EpochStats::seconds
  std::vector<EpochStats> history_;
  std::vector<ProbeSnapshot> probes_;
  std::vector<float> batch_losses_;
};

}  // namespace seq2seq
}  // namespace attnviz
