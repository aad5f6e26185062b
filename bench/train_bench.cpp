// Training benchmark: how much compute a model takes, single thread, to reach the targets
// (held-out exact match >= 95% and AER <= 10%) with the browser's settings (LiveTrainerConfig:
// what the Train view runs) and, with "guided", the same settings plus guided alignment (weight
// 0.3, as the shipped en-fr RNN models) in the same run. Time is the process's CPU time, evaluation included
// (the machine may be shared, so wall time is printed too but not compared). Natively and in
// WASM (node). One line per epoch, then a summary per configuration and their ratio:
//   train config=live model=bahdanau task=en-fr epoch=E seconds=S cpu_seconds=C exact_match=X aer=Y loss=L
//   train_target config=live model=bahdanau task=en-fr reached=1 cpu_seconds=C epochs=E
//   train_ratio guided_over_live=R   (only with "guided"; a run that misses counts where it stopped)
// usage: attnviz_train_bench [bahdanau|luong|transformer] [cpu-seconds] [en-fr|es-en|dates] [guided]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "core/seq2seq/trainer.h"

using namespace attnviz::seq2seq;

namespace {

struct Outcome {
  bool reached = false;
  double cpu_seconds = 0;  // at the target, else when the run stopped
  int epochs = 0;
};

Outcome RunToTarget(const TrainerConfig& cfg, const char* label, const char* kind_name, const char* task_name,
                    double limit_s) {
  Outcome out;
  Trainer tr;
  attnviz::Status st = tr.Init(cfg);
  if (!st) {
    std::fprintf(stderr, "attnviz_train_bench: %s\n", st.message.c_str());
    std::exit(1);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  while (true) {
    tr.RunEpoch();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    const EpochStats& e = tr.history().back();
    std::printf(
        "train config=%s model=%s task=%s epoch=%d seconds=%.2f cpu_seconds=%.2f exact_match=%.4f aer=%.4f "
        "loss=%.4f\n",
        label, kind_name, task_name, e.epoch, s, cpu, e.exact_match, e.aer, e.loss);
    std::fflush(stdout);
    out.cpu_seconds = cpu;
    out.epochs = e.epoch;
    if (e.exact_match >= 0.95 && e.aer <= 0.10) {
      out.reached = true;
      break;
    }
    if (cpu > limit_s || e.epoch >= 30) break;
  }
  std::printf("train_target config=%s model=%s task=%s reached=%d cpu_seconds=%.2f epochs=%d\n", label, kind_name,
              task_name, out.reached ? 1 : 0, out.cpu_seconds, out.epochs);
  std::fflush(stdout);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const char* kind_name = argc > 1 ? argv[1] : "bahdanau";
  const double limit_s = argc > 2 ? std::atof(argv[2]) : 240.0;
  const char* task_name = argc > 3 ? argv[3] : "en-fr";
  const bool guided = argc > 4 && std::strcmp(argv[4], "guided") == 0;
  ModelKind kind;
  Task task;
  if (!ParseModelKind(kind_name, &kind) || !ParseTask(task_name, &task)) {
    std::fprintf(stderr,
                 "usage: attnviz_train_bench [bahdanau|luong|transformer] [cpu-seconds] [en-fr|es-en|dates] "
                 "[guided]\n");
    return 2;
  }
  const Outcome live = RunToTarget(LiveTrainerConfig(kind, task, 1), "live", kind_name, task_name, limit_s);
  if (!guided) return 0;
  TrainerConfig cfg = LiveTrainerConfig(kind, task, 1);
  if (kind != ModelKind::Transformer) cfg.align_weight = 0.3f;  // the Transformer is supervised already
  const Outcome g = RunToTarget(cfg, "guided", kind_name, task_name, limit_s);
  std::printf("train_ratio guided_over_live=%.2f%s\n", g.cpu_seconds / live.cpu_seconds,
              g.reached && live.reached ? "" : " (a run did not reach the target: compare where they stopped)");
  return 0;
}
