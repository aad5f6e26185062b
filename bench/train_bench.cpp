// Training benchmark: how long a model takes, single thread, to reach the targets (held-out
// exact match >= 95% and AER <= 10%) with the browser's settings (DefaultTrainerConfig,
// micro-batches of 4, evaluation chunks of 8). Natively and in WASM (node). One line per epoch,
// then a summary:
//   train model=bahdanau task=en-fr epoch=E seconds=S exact_match=X aer=Y
//   train_target model=bahdanau task=en-fr reached=1 seconds=S epochs=E
// usage: attnviz_train_bench [bahdanau|luong|transformer] [seconds] [en-fr|es-en|dates]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/seq2seq/trainer.h"

using namespace attnviz::seq2seq;

int main(int argc, char** argv) {
  const char* kind_name = argc > 1 ? argv[1] : "bahdanau";
  const double limit_s = argc > 2 ? std::atof(argv[2]) : 240.0;
  const char* task_name = argc > 3 ? argv[3] : "en-fr";
  ModelKind kind;
  Task task;
  if (!ParseModelKind(kind_name, &kind) || !ParseTask(task_name, &task)) {
    std::fprintf(stderr, "usage: attnviz_train_bench [bahdanau|luong|transformer] [seconds] [en-fr|es-en|dates]\n");
    return 2;
  }
  TrainerConfig cfg = DefaultTrainerConfig(kind, task, 1);
  cfg.micro_batch = 4;
  cfg.eval_chunk = 8;
  Trainer tr;
  attnviz::Status st = tr.Init(cfg);
  if (!st) {
    std::fprintf(stderr, "attnviz_train_bench: %s\n", st.message.c_str());
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  double reached = -1;
  int reached_epoch = 0;
  while (true) {
    tr.RunEpoch();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const EpochStats& e = tr.history().back();
    std::printf("train model=%s task=%s epoch=%d seconds=%.2f exact_match=%.4f aer=%.4f loss=%.4f\n", kind_name,
                task_name, e.epoch, s, e.exact_match, e.aer, e.loss);
    std::fflush(stdout);
    if (reached < 0 && e.exact_match >= 0.95 && e.aer <= 0.10) {
      reached = s;
      reached_epoch = e.epoch;
      break;
    }
    if (s > limit_s || e.epoch >= 30) break;
  }
  std::printf("train_target model=%s task=%s reached=%d seconds=%.2f epochs=%d\n", kind_name, task_name,
              reached >= 0 ? 1 : 0, reached >= 0 ? reached : -1.0, reached_epoch);
  return 0;
}
