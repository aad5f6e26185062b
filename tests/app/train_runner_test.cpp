// Live training off the UI thread (app/train_runner.h): the report runner, fed by a TrainWorker as
// the browser's Web Worker feeds it, gives the page the same run and the same model as a trainer
// run in place; the thread runner likewise. Runs natively and in WASM.
#include "app/train_runner.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

namespace attnviz {
namespace {

seq2seq::TrainerConfig SmallConfig() {
  seq2seq::TrainerConfig c = seq2seq::DefaultTrainerConfig(seq2seq::ModelKind::Luong, seq2seq::Task::Dates, 3);
  c.n_train = 96;
  c.n_heldout = 16;
  c.batch_size = 16;  // not the defaults: the worker must receive every setting (the run would differ)
  c.learning_rate = 4e-3f;
  c.decay_batches = 5;
  c.micro_batch = 8;
  c.eval_chunk = 8;
  return c;
}

// The reference: the same config trained in place until `epochs` epochs are done.
std::unique_ptr<seq2seq::Trainer> Reference(int epochs) {
  auto tr = std::make_unique<seq2seq::Trainer>();
  EXPECT_TRUE(tr->Init(SmallConfig()).ok);
  while (tr->epoch() < epochs) tr->Step(1e9, 1);
  return tr;
}

void ExpectSameRun(const TrainProgress& got, const seq2seq::Trainer& want, const seq2seq::Model& got_model) {
  ASSERT_EQ(got.epoch, want.epoch());
  EXPECT_EQ(got.batches, want.batches());
  ASSERT_EQ(got.batch_losses.size(), want.batch_losses().size());
  EXPECT_EQ(0, std::memcmp(got.batch_losses.data(), want.batch_losses().data(), got.batch_losses.size() * 4));
  ASSERT_EQ(got.history.size(), want.history().size());
  for (size_t i = 0; i < got.history.size(); ++i) {
    EXPECT_EQ(got.history[i].exact_match, want.history()[i].exact_match);
    EXPECT_EQ(got.history[i].aer, want.history()[i].aer);
  }
  ASSERT_EQ(got.probes.size(), want.probes().size());
  EXPECT_TRUE(got.probes.back().attention == want.probes().back().attention);
  std::vector<uint8_t> a, b;
  ASSERT_TRUE(seq2seq::SaveModel(got_model, &a).ok);
  ASSERT_TRUE(seq2seq::SaveModel(want.model(), &b).ok);
  EXPECT_EQ(a, b) << "the model the page receives is the model trained";
}

TEST(TrainRunner, ThroughWorkerReportsTheRunIsTheTrainersRun) {
  TrainWorker worker;
  std::string worker_error;
  ReportRunner runner([&](const std::string& msg) {
    if (Status st = worker.Handle(msg); !st) worker_error = st.message;
  });
  ASSERT_TRUE(runner.Start(SmallConfig(), true).ok);
  ASSERT_TRUE(worker_error.empty()) << worker_error;
  seq2seq::Model model;
  int epochs_seen = 0, slices = 0;
  std::vector<uint8_t> bytes;
  while (runner.progress().epoch < 2 && slices < 100000) {
    const std::string report = worker.Slice(2.0, &bytes);  // ~2 ms slices: many messages
    ++slices;
    if (report.empty()) continue;
    runner.Deliver(report.data(), report.size(), bytes.data(), bytes.size());
    ASSERT_EQ(runner.error(), "");
    if (runner.Poll(0, &model)) ++epochs_seen;
  }
  EXPECT_EQ(epochs_seen, 2);
  EXPECT_GT(slices, 5);
  ExpectSameRun(runner.progress(), *Reference(2), model);
  // Pause: the worker stops stepping; resume goes on.
  runner.SetRunning(false);
  EXPECT_FALSE(worker.running());
  EXPECT_TRUE(worker.Slice(2.0, &bytes).empty());
  runner.SetRunning(true);
  EXPECT_TRUE(worker.running());
  EXPECT_FALSE(worker.Handle("{\"type\":\"fly\"}").ok);
  EXPECT_FALSE(worker.Handle("{\"type\":\"start\",\"config\":{\"kind\":9}}").ok);
}

// A run started paused (the Train view's prepared run): its epoch-0 probe reaches the page, no batch
// is trained until it is resumed, and then it is the same run as one started running.
TEST(TrainRunner, ThroughWorkerAPausedStartReportsTheEpochZeroProbeAndTrainsNothing) {
  TrainWorker worker;
  ReportRunner runner([&](const std::string& msg) { ASSERT_TRUE(worker.Handle(msg).ok); });
  ASSERT_TRUE(runner.Start(SmallConfig(), false).ok);
  EXPECT_FALSE(worker.running());
  std::vector<uint8_t> bytes;
  const std::string report = worker.Slice(2.0, &bytes);
  ASSERT_FALSE(report.empty()) << "the first report carries the epoch-0 probe";
  runner.Deliver(report.data(), report.size(), bytes.data(), bytes.size());
  ASSERT_EQ(runner.error(), "");
  ASSERT_EQ(runner.progress().probes.size(), 1u);
  EXPECT_EQ(runner.progress().probes[0].epoch, 0);
  EXPECT_EQ(runner.progress().batches, 0);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(worker.Slice(2.0, &bytes).empty()) << "a paused run trains nothing";
  runner.SetRunning(true);
  seq2seq::Model model;
  for (int slices = 0; runner.progress().epoch < 1 && slices < 100000; ++slices) {
    const std::string r = worker.Slice(2.0, &bytes);
    if (r.empty()) continue;
    runner.Deliver(r.data(), r.size(), bytes.data(), bytes.size());
    (void)runner.Poll(0, &model);
  }
  ExpectSameRun(runner.progress(), *Reference(1), model);
}

TEST(TrainRunner, InFramesAPausedStartHasTheEpochZeroProbeAndTrainsNothing) {
  std::unique_ptr<TrainRunner> runner = MakeFrameRunner();
  ASSERT_TRUE(runner->Start(SmallConfig(), false).ok);
  seq2seq::Model model;
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(runner->Poll(50, &model));
  ASSERT_EQ(runner->progress().probes.size(), 1u);
  EXPECT_EQ(runner->progress().batches, 0);
  runner->SetRunning(true);
  for (int i = 0; runner->progress().epoch < 1 && i < 1000000; ++i)
    (void)runner->Poll(1e-3, &model);  // a unit a call: it stops at the epoch's end
  ExpectSameRun(runner->progress(), *Reference(1), model);
}

TEST(TrainRunner, AWorkerErrorReachesThePage) {
  ReportRunner runner([](const std::string&) {});
  runner.Fail("could not load attnviz-train.wasm");
  EXPECT_EQ(runner.error(), "could not load attnviz-train.wasm");
  const char garbage[] = "{\"epoch\": 1}";
  ReportRunner r2([](const std::string&) {});
  r2.Deliver(garbage, sizeof(garbage) - 1, nullptr, 0);
  EXPECT_NE(r2.error(), "");
}

// The browser build has no threads (it trains in a worker, above, or in frames): native only.
#if !defined(__EMSCRIPTEN__)
TEST(TrainRunner, OnAThreadTheRunIsTheTrainersRun) {
  std::unique_ptr<TrainRunner> runner = MakeThreadRunner();
  ASSERT_TRUE(runner->Start(SmallConfig(), true).ok);
  seq2seq::Model model, last;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (runner->progress().epoch < 2 && std::chrono::steady_clock::now() < end) {
    if (runner->Poll(0, &model)) last = model;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  runner->SetRunning(false);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  (void)runner->Poll(0, &model);
  // The thread may have gone a little past epoch 2 before the pause: compare at its epoch.
  const int epochs = runner->progress().epoch;
  ASSERT_GE(epochs, 2);
  auto ref = Reference(epochs);
  EXPECT_EQ(runner->progress().history.size(), ref->history().size());
  EXPECT_EQ(runner->progress().history.back().exact_match, ref->history().back().exact_match);
  EXPECT_EQ(runner->progress().history.back().aer, ref->history().back().aer);
}

TEST(TrainRunner, OnAThreadAPausedStartHasTheEpochZeroProbeAndTrainsNothing) {
  std::unique_ptr<TrainRunner> runner = MakeThreadRunner();
  ASSERT_TRUE(runner->Start(SmallConfig(), false).ok);
  seq2seq::Model model;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(runner->Poll(0, &model));
  ASSERT_EQ(runner->progress().probes.size(), 1u);
  EXPECT_EQ(runner->progress().batches, 0) << "the thread waits for SetRunning(true)";
  runner->SetRunning(true);
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (runner->progress().batches == 0 && std::chrono::steady_clock::now() < end) {
    (void)runner->Poll(0, &model);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_GT(runner->progress().batches, 0);
}
#endif

}  // namespace
}  // namespace attnviz
