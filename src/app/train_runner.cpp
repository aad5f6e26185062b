#include "app/train_runner.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "io/json.h"

namespace attnviz {
namespace {

// Trains in the UI thread, budget_ms a frame.
class FrameRunner : public TrainRunner {
 public:
  Status Start(const seq2seq::TrainerConfig& config, bool running) override {
    auto t = std::make_unique<seq2seq::Trainer>();
    if (Status st = t->Init(config); !st) return st;
    trainer_ = std::move(t);
    progress_ = TrainProgress{};
    CopyTrainProgress(*trainer_, &progress_);  // the epoch-0 probe, before any step
    running_ = running;
    return Status::Ok();
  }
  void SetRunning(bool running) override { running_ = running; }
  bool Poll(float budget_ms, seq2seq::Model* model) override {
    if (!trainer_ || !running_) return false;
    const int before = trainer_->epoch();
    trainer_->Step(budget_ms);
    CopyTrainProgress(*trainer_, &progress_);
    if (trainer_->epoch() == before) return false;
    *model = trainer_->model();
    return true;
  }
  const TrainProgress& progress() const override { return progress_; }
  const char* where() const override { return "frames"; }

 private:
  std::unique_ptr<seq2seq::Trainer> trainer_;
  TrainProgress progress_;
  bool running_ = false;
};

// Trains on its own thread in steps of 20 ms; the UI copies what is new once a frame. The trainer
// computes micro-batches on `threads` threads (its own pool; bitwise the same run as one thread).
class ThreadRunner : public TrainRunner {
 public:
  explicit ThreadRunner(int threads) : threads_(threads > 0 ? threads : seq2seq::HardwareThreads()) {}
  ~ThreadRunner() override { Stop(); }
  Status Start(const seq2seq::TrainerConfig& config, bool running) override {
    Stop();
    auto t = std::make_unique<seq2seq::Trainer>();
    seq2seq::TrainerConfig cfg = config;
    cfg.threads = threads_;
    if (Status st = t->Init(cfg); !st) return st;
    trainer_ = std::move(t);
    progress_ = shared_ = TrainProgress{};
    CopyTrainProgress(*trainer_, &shared_);  // the epoch-0 probe, before any step (no thread yet)
    new_epoch_ = false;
    quit_ = false;
    running_ = running;
    thread_ = std::thread([this] { Loop(); });
    return Status::Ok();
  }
  void SetRunning(bool running) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_ = running;
    }
    wake_.notify_all();
  }
  bool Poll(float, seq2seq::Model* model) override {
    std::lock_guard<std::mutex> lock(mutex_);
    UpdateTrainProgress(shared_, shared_.batch_losses, shared_.history, shared_.probes, &progress_);
    if (!new_epoch_) return false;
    *model = epoch_model_;
    new_epoch_ = false;
    return true;
  }
  const TrainProgress& progress() const override { return progress_; }
  const char* where() const override { return "thread"; }

 private:
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  void Loop() {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [this] { return quit_ || running_; });
        if (quit_) return;
      }
      const int before = trainer_->epoch();
      trainer_->Step(20.0);  // the trainer is this thread's alone; only the copy below is shared
      std::lock_guard<std::mutex> lock(mutex_);
      CopyTrainProgress(*trainer_, &shared_);
      if (trainer_->epoch() != before) {
        epoch_model_ = trainer_->model();
        new_epoch_ = true;
      }
    }
  }

  const int threads_;
  std::unique_ptr<seq2seq::Trainer> trainer_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool quit_ = false, running_ = false, new_epoch_ = false;  // guarded by mutex_
  TrainProgress shared_;                                     // guarded by mutex_
  seq2seq::Model epoch_model_;                               // guarded by mutex_
  TrainProgress progress_;                                   // the UI thread's copy
};

}  // namespace

std::unique_ptr<TrainRunner> MakeFrameRunner() {
  return std::make_unique<FrameRunner>();
}

std::unique_ptr<TrainRunner> MakeThreadRunner() {
  return std::make_unique<ThreadRunner>(0);
}

std::unique_ptr<TrainRunner> MakeThreadRunnerOn(int threads) {
  return std::make_unique<ThreadRunner>(threads);
}

std::string TrainStartMessage(const seq2seq::TrainerConfig& c, bool running) {
  JsonWriter w;
  w.BeginObject();
  w.Key("type");
  w.String("start");
  w.Key("running");
  w.Bool(running);
  w.Key("config");
  w.BeginObject();
  w.Key("kind");
  w.Number((int)c.model.kind);
  w.Key("task");
  w.Number((int)c.task);
  w.Key("seed");
  w.Number((double)c.seed);
  w.Key("n_train");
  w.Number(c.n_train);
  w.Key("n_heldout");
  w.Number(c.n_heldout);
  w.Key("batch_size");
  w.Number(c.batch_size);
  w.Key("learning_rate");
  w.NumberF(c.learning_rate);
  w.Key("warmup_batches");
  w.Number(c.warmup_batches);
  w.Key("decay_batches");
  w.Number(c.decay_batches);
  w.Key("align_weight");
  w.NumberF(c.align_weight);
  w.Key("micro_batch");
  w.Number(c.micro_batch);
  w.Key("eval_chunk");
  w.Number(c.eval_chunk);
  w.EndObject();
  w.EndObject();
  return w.str();
}

Status ParseTrainStart(const std::string& text, seq2seq::TrainerConfig* out) {
  JsonValue doc;
  if (Status st = ParseJson(text, &doc); !st) return st;
  const JsonValue* c = doc.IsObject() ? doc.Find("config") : nullptr;
  if (!c || !c->IsObject()) return Status::Error("train start: no config");
  auto num = [&](const char* key, double lo, double hi, double* v) {
    const JsonValue* x = c->Find(key);
    if (!x || x->type != JsonType::Number || !(x->number >= lo && x->number <= hi)) return false;
    *v = x->number;
    return true;
  };
  double kind, task, seed, n_train, n_heldout, batch, lr, warmup, decay, align, micro, chunk;
  if (!num("kind", 0, 2, &kind) || !num("task", 0, 2, &task) || !num("seed", 0, 9.0e15, &seed) ||
      !num("n_train", 1, 1e6, &n_train) || !num("n_heldout", 1, 1e5, &n_heldout) ||
      !num("batch_size", 1, 4096, &batch) || !num("learning_rate", 1e-9, 10, &lr) ||
      !num("warmup_batches", 0, 1e9, &warmup) || !num("decay_batches", 0, 1e9, &decay) ||
      !num("align_weight", 0, 1e3, &align) || !num("micro_batch", 0, 4096, &micro) ||
      !num("eval_chunk", 1, 4096, &chunk))
    return Status::Error(
        "train start: a setting is missing or out of range (kind, task, seed, n_train, n_heldout, "
        "batch_size, learning_rate, warmup_batches, decay_batches, align_weight, micro_batch, "
        "eval_chunk)");
  *out = seq2seq::DefaultTrainerConfig((seq2seq::ModelKind)(int)kind, (seq2seq::Task)(int)task, (uint64_t)seed);
  out->n_train = (int)n_train;
  out->n_heldout = (int)n_heldout;
  out->batch_size = (int)batch;
  out->learning_rate = (float)lr;
  out->warmup_batches = (int)warmup;
  out->decay_batches = (int)decay;
  out->align_weight = (float)align;
  out->micro_batch = (int)micro;
  out->eval_chunk = (int)chunk;
  return Status::Ok();
}

Status TrainWorker::Handle(const std::string& message) {
  JsonValue doc;
  if (Status st = ParseJson(message, &doc); !st) return st;
  const JsonValue* type = doc.IsObject() ? doc.Find("type") : nullptr;
  const std::string t = type && type->type == JsonType::String ? type->string : "";
  if (t == "start") {
    seq2seq::TrainerConfig config;
    if (Status st = ParseTrainStart(message, &config); !st) return st;
    auto tr = std::make_unique<seq2seq::Trainer>();
    if (Status st = tr->Init(config); !st) return st;
    trainer_ = std::move(tr);
    cursor_ = TrainReportCursor{};
    const JsonValue* running = doc.Find("running");  // absent: running
    running_ = !(running && running->type == JsonType::Bool && !running->boolean);
  } else if (t == "pause" || t == "resume") {
    running_ = t == "resume";
  } else if (t == "stop") {
    trainer_.reset();
    running_ = false;
  } else {
    return Status::Error("train worker: unknown message type '" + t + "'");
  }
  return Status::Ok();
}

std::string TrainWorker::Slice(double budget_ms, std::vector<uint8_t>* model) {
  model->clear();
  if (!trainer_) return {};
  const bool fresh = cursor_.probes == 0;  // the first report carries the epoch-0 probe
  if (!running_ && !fresh) return {};
  const int before = trainer_->epoch();
  if (running_) trainer_->Step(budget_ms);
  if (trainer_->epoch() != before) (void)seq2seq::SaveModel(trainer_->model(), model);
  return EncodeTrainReport(*trainer_, &cursor_);
}

ReportRunner::ReportRunner(std::function<void(const std::string&)> send) : send_(std::move(send)) {}

ReportRunner::~ReportRunner() {
  send_("{\"type\":\"stop\"}");
}

Status ReportRunner::Start(const seq2seq::TrainerConfig& config, bool running) {
  progress_ = TrainProgress{};
  model_bytes_.clear();
  new_epoch_ = false;
  error_.clear();
  send_(TrainStartMessage(config, running));
  return Status::Ok();
}

void ReportRunner::SetRunning(bool running) {
  send_(running ? "{\"type\":\"resume\"}" : "{\"type\":\"pause\"}");
}

bool ReportRunner::Poll(float, seq2seq::Model* model) {
  if (!new_epoch_) return false;
  new_epoch_ = false;
  if (Status st = seq2seq::LoadModel(model_bytes_.data(), model_bytes_.size(), model); !st) {
    error_ = "the trained model could not be read back: " + st.message;
    return false;
  }
  return true;
}

void ReportRunner::Deliver(const char* json, size_t json_size, const uint8_t* model, size_t model_size) {
  if (Status st = ApplyTrainReport(json, json_size, &progress_); !st) {
    error_ = st.message;
    return;
  }
  if (model_size > 0) {
    model_bytes_.assign(model, model + model_size);
    new_epoch_ = true;
  }
}

void ReportRunner::Fail(const std::string& message) {
  error_ = message;
}

}  // namespace attnviz
