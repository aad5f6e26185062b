// attnviz app: where a live training run runs. The Train view only reads a TrainProgress; one of
// these fills it:
//   - the frame runner   trains in slices of the UI frame (budget ms a frame); the fallback
//   - the thread runner  a std::thread, so the UI never waits for training (the native app's,
//                        set by src/platform/main_native.cpp; the browser build has no threads);
//                        the trainer in it computes micro-batches on every core
//   - the report runner  training elsewhere sends reports (io/train_report.h) and, at each epoch's
//                        end, the model's bytes; the browser's Web Worker (src/platform) uses it
// All are driven from the UI thread: Start, SetRunning, and Poll once a frame.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/seq2seq/trainer.h"
#include "core/status.h"
#include "io/train_report.h"

namespace attnviz {

class TrainRunner {
 public:
  virtual ~TrainRunner() = default;
  // A fresh run, replacing any; paused when !running (a run made ready ahead of its start: its
  // epoch-0 probe is in progress() as soon as it arrives, and SetRunning(true) starts it).
  virtual Status Start(const seq2seq::TrainerConfig& config, bool running) = 0;
  virtual void SetRunning(bool running) = 0;  // pause / resume
  // Once a frame: the frame runner trains for budget_ms here; the others take what arrived.
  // Returns true when an epoch ended since the last call; *model then holds the model as it was.
  virtual bool Poll(float budget_ms, seq2seq::Model* model) = 0;
  virtual const TrainProgress& progress() const = 0;
  virtual const char* where() const = 0;            // "frames", "thread" or "worker"
  virtual std::string error() const { return {}; }  // why the run stopped ("" = it did not)
};

std::unique_ptr<TrainRunner> MakeFrameRunner();
// Only where there are threads (not the browser build). The trainer computes micro-batches on
// every hardware thread (seq2seq::HardwareThreads()), or on `threads` (TrainerConfig::threads; 0: all).
std::unique_ptr<TrainRunner> MakeThreadRunner();
std::unique_ptr<TrainRunner> MakeThreadRunnerOn(int threads);

// Training in another process or worker: `send` carries the commands there ({"type":"start",
// "running":bool,"config":{...}}, {"type":"pause"}, {"type":"resume"}, {"type":"stop"}); what it
// sends back arrives through Deliver (on the UI thread).
class ReportRunner : public TrainRunner {
 public:
  explicit ReportRunner(std::function<void(const std::string& message)> send);
  ~ReportRunner() override;
  Status Start(const seq2seq::TrainerConfig& config, bool running) override;
  void SetRunning(bool running) override;
  bool Poll(float budget_ms, seq2seq::Model* model) override;
  const TrainProgress& progress() const override { return progress_; }
  const char* where() const override { return "worker"; }
  std::string error() const override { return error_; }
  // A report (JSON), with the model's bytes when an epoch ended (else size 0), or an error text.
  void Deliver(const char* json, size_t json_size, const uint8_t* model, size_t model_size);
  void Fail(const std::string& message);

 private:
  std::function<void(const std::string&)> send_;
  TrainProgress progress_;
  std::vector<uint8_t> model_bytes_;  // the newest epoch's model, until Poll takes it
  bool new_epoch_ = false;
  std::string error_;
};

// The other end of a ReportRunner: what the browser's training worker runs (its own WASM instance,
// src/platform/train_worker_main.cpp). Handle() takes the runner's commands; Slice() trains for
// about budget_ms when running and returns the report to send (empty when there is nothing new),
// with the model's bytes in *model when an epoch ended.
class TrainWorker {
 public:
  Status Handle(const std::string& message);
  std::string Slice(double budget_ms, std::vector<uint8_t>* model);
  bool running() const { return trainer_ && running_; }

 private:
  std::unique_ptr<seq2seq::Trainer> trainer_;
  TrainReportCursor cursor_;
  bool running_ = false;
};

// The start command for a config: {"type":"start","running":bool,"config":{kind, task, seed, n_train,
// n_heldout, batch_size, learning_rate, warmup_batches, decay_batches, align_weight, micro_batch,
// eval_chunk}}; the worker rebuilds the same config (DefaultTrainerConfig + these), and starts it
// paused when running is false.
std::string TrainStartMessage(const seq2seq::TrainerConfig& config, bool running);
// Its inverse, for the worker.
Status ParseTrainStart(const std::string& config_json, seq2seq::TrainerConfig* config);

}  // namespace attnviz
