// Training reports (io/train_report.h): a run reported message by message, as the browser's Web
// Worker sends it, is bit for bit the run itself; and the report runner (app/train_runner.h) built
// on them gives the page the same progress and the same model as a trainer run in place.
#include "io/train_report.h"

#include <gtest/gtest.h>

#include <cstring>

namespace attnviz {
namespace {

seq2seq::TrainerConfig SmallConfig() {
  seq2seq::TrainerConfig c = seq2seq::DefaultTrainerConfig(seq2seq::ModelKind::Bahdanau, seq2seq::Task::Dates, 7);
  c.n_train = 96;
  c.n_heldout = 16;
  c.micro_batch = 8;
  c.eval_chunk = 8;
  return c;
}

void ExpectSameProgress(const TrainProgress& got, const seq2seq::Trainer& want) {
  EXPECT_EQ(got.epoch, want.epoch());
  EXPECT_EQ(got.batches, want.batches());
  EXPECT_EQ(got.seconds, want.seconds());
  ASSERT_EQ(got.batch_losses.size(), want.batch_losses().size());
  EXPECT_EQ(0, std::memcmp(got.batch_losses.data(), want.batch_losses().data(), got.batch_losses.size() * 4));
  ASSERT_EQ(got.history.size(), want.history().size());
  for (size_t i = 0; i < got.history.size(); ++i) {
    EXPECT_EQ(got.history[i].loss, want.history()[i].loss);
    EXPECT_EQ(got.history[i].exact_match, want.history()[i].exact_match);
    EXPECT_EQ(got.history[i].aer, want.history()[i].aer);
    EXPECT_EQ(got.history[i].batches, want.history()[i].batches);
  }
  ASSERT_EQ(got.probes.size(), want.probes().size());
  for (size_t i = 0; i < got.probes.size(); ++i) {
    EXPECT_EQ(got.probes[i].source_tokens, want.probes()[i].source_tokens);
    EXPECT_EQ(got.probes[i].decoded_tokens, want.probes()[i].decoded_tokens);
    ASSERT_EQ(got.probes[i].attention.rows(), want.probes()[i].attention.rows());
    ASSERT_EQ(got.probes[i].attention.cols(), want.probes()[i].attention.cols());
    EXPECT_TRUE(got.probes[i].attention == want.probes()[i].attention) << "probe " << i;
  }
}

// The progress bar's "about N s left": the epoch's own pace (its seconds since the last epoch
// ended), and no guess too early in the epoch or while the held-out set is scored.
TEST(TrainReport, SecondsLeftAreTheEpochsOwnPace) {
  TrainProgress p;
  p.progress = 0.01, p.seconds = 1.0;
  EXPECT_EQ(p.SecondsLeftInEpoch(), -1.0) << "too early to say";
  p.progress = 0.25, p.seconds = 10.0;
  EXPECT_DOUBLE_EQ(p.SecondsLeftInEpoch(), 30.0);
  seq2seq::EpochStats e;
  e.seconds = 60.0;
  p.history.push_back(e);
  p.progress = 0.5, p.seconds = 80.0;  // 20 s into the second epoch
  EXPECT_DOUBLE_EQ(p.SecondsLeftInEpoch(), 20.0);
  p.evaluating = true;
  EXPECT_EQ(p.SecondsLeftInEpoch(), -1.0);
  p.evaluating = false, p.seconds = 50.0;  // a clock that went back: no guess
  EXPECT_EQ(p.SecondsLeftInEpoch(), -1.0);
}

TEST(TrainReport, AReportedRunIsTheRunBitForBit) {
  seq2seq::Trainer tr;
  ASSERT_TRUE(tr.Init(SmallConfig()).ok);
  TrainProgress progress;
  TrainReportCursor cursor;
  int reports = 0;
  while (tr.epoch() < 2) {
    tr.Step(1e9, 3);  // three units of work per message
    const std::string msg = EncodeTrainReport(tr, &cursor);
    const Status st = ApplyTrainReport(msg.data(), msg.size(), &progress);
    ASSERT_TRUE(st.ok) << st.message;
    ++reports;
  }
  EXPECT_GT(reports, 4);
  ExpectSameProgress(progress, tr);
  TrainProgress direct;
  CopyTrainProgress(tr, &direct);
  EXPECT_EQ(direct.batch_losses, progress.batch_losses);
}

TEST(TrainReport, ALostMessageOrGarbageIsAnErrorAndChangesNothing) {
  seq2seq::Trainer tr;
  ASSERT_TRUE(tr.Init(SmallConfig()).ok);
  TrainProgress progress;
  TrainReportCursor cursor;
  tr.Step(1e9, 2);
  const std::string first = EncodeTrainReport(tr, &cursor);
  tr.Step(1e9, 2);
  const std::string second = EncodeTrainReport(tr, &cursor);
  Status st = ApplyTrainReport(second.data(), second.size(), &progress);  // the first was lost
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("lost"), std::string::npos) << st.message;
  EXPECT_TRUE(progress.batch_losses.empty());
  for (const char* bad : {"", "[]", "{\"epoch\": -1}", "{\"epoch\":1,\"progress\":0}", "{{{{"}) {
    st = ApplyTrainReport(bad, std::strlen(bad), &progress);
    EXPECT_FALSE(st.ok) << bad;
  }
  ASSERT_TRUE(ApplyTrainReport(first.data(), first.size(), &progress).ok);
  ASSERT_TRUE(ApplyTrainReport(second.data(), second.size(), &progress).ok);
  EXPECT_EQ(progress.batch_losses.size(), tr.batch_losses().size());
}

}  // namespace
}  // namespace attnviz
