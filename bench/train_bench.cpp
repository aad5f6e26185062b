// Training benchmark: how much compute a model takes, single thread, to reach the targets
// (held-out exact match >= 95% and AER <= 10%) with the browser's settings (LiveTrainerConfig:
// what the Train view runs) and, with "guided", the same settings plus guided alignment (weight
// 0.3, as the shipped en-fr RNN models) in the same run. Time is the process's CPU time, evaluation included
// (std::clock natively, node's process.cpuUsage in WASM; the machine may be shared, so wall time
// is printed too but not compared). Natively and in
// WASM (node). One line per epoch, then a summary per configuration and their ratio:
//   train config=live model=bahdanau task=en-fr epoch=E seconds=S cpu_seconds=C exact_match=X aer=Y loss=L
//   train_target config=live model=bahdanau task=en-fr reached=1 cpu_seconds=C epochs=E
//   train_ratio guided_over_live=R   (only with "guided"; a run that misses counts where it stopped)
// First, in the same process: the tape's SIMD products against Eigen (train_gemm), its tanh against
// libm's (train_tanh) and, natively,
// data-parallel training on every hardware thread against one (train_threads).
// usage: attnviz_train_bench [bahdanau|luong|transformer] [cpu-seconds] [en-fr|es-en|dates] [guided]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "core/seq2seq/gemm.h"
#include "core/seq2seq/rng.h"
#include "core/seq2seq/trainer.h"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
// Under node, clock() is wall time; the process's CPU time (all of node's threads) comes from here.
EM_JS(double, NodeCpuSeconds, (), {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
});
#endif

using namespace attnviz::seq2seq;

namespace {

double CpuSeconds() {
#ifdef __EMSCRIPTEN__
  return NodeCpuSeconds();
#else
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
#endif
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The tape's products (gemm.h) against Eigen's on the training shapes, alternating, best of 7:
//   train_gemm shape=MxKxN eigen_gflops=.. simd_gflops=.. speedup=..
void GemmLines() {
  struct Shape {
    int m, k, n;
    const char* what;
  };
  const Shape shapes[] = {{48, 192, 594, "output layer, 4 sentences"},
                          {4, 128, 192, "decoder GRU input, 4 sentences"},
                          {48, 32, 144, "encoder GRU input, 4 sentences"}};
  Rng rng(3);
  for (const Shape& s : shapes) {
    Mat a(s.m, s.k), b(s.k, s.n), c(s.m, s.n);
    for (int i = 0; i < a.size(); ++i) a.data()[i] = rng.Symmetric(1.0f);
    for (int i = 0; i < b.size(); ++i) b.data()[i] = rng.Symmetric(1.0f);
    const double flops = 2.0 * s.m * s.k * s.n;
    const int reps = std::max(1, static_cast<int>(2e8 / flops));
    double best_eigen = 1e9, best_simd = 1e9;
    for (int round = 0; round < 7; ++round) {
      double t0 = Now();
      for (int r = 0; r < reps; ++r) c.noalias() = a * b;
      best_eigen = std::min(best_eigen, (Now() - t0) / reps);
      t0 = Now();
      for (int r = 0; r < reps; ++r) MatMulNN(s.m, s.n, s.k, a.data(), s.k, b.data(), s.n, c.data(), s.n, false);
      best_simd = std::min(best_simd, (Now() - t0) / reps);
    }
    std::printf("train_gemm shape=%dx%dx%d eigen_gflops=%.2f simd_gflops=%.2f speedup=%.2f  (%s)\n", s.m, s.k, s.n,
                flops / best_eigen * 1e-9, flops / best_simd * 1e-9, best_eigen / best_simd, s.what);
    std::fflush(stdout);
  }
}

// The GRU gates' and additive scores' tanh (gemm.h TanhInPlace) against libm's, best of 7:
//   train_tanh n=65536 libm_ns=.. simd_ns=.. speedup=..   (ns per value)
void TanhLine() {
  const int n = 65536;
  Rng rng(4);
  std::vector<float> x(n), y(n);
  for (float& v : x) v = rng.Symmetric(5.0f);
  double best_libm = 1e9, best_simd = 1e9, sink = 0;
  for (int round = 0; round < 7; ++round) {
    double t0 = Now();
    for (int i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
    best_libm = std::min(best_libm, Now() - t0);
    sink += y[n / 2];
    y = x;
    t0 = Now();
    TanhInPlace(y.data(), n);
    best_simd = std::min(best_simd, Now() - t0);
    sink += y[n / 3];
  }
  volatile double keep = sink;  // the loops' results are used
  (void)keep;
  std::printf("train_tanh n=%d libm_ns=%.2f simd_ns=%.2f speedup=%.2f\n", n, best_libm / n * 1e9, best_simd / n * 1e9,
              best_libm / best_simd);
  std::fflush(stdout);
}

#ifndef __EMSCRIPTEN__
// Data-parallel training (TrainerConfig::threads) against one thread, the page's settings, in
// rounds of `batches` Adam updates alternating between the two trainers (wall time: the point is
// to use more cores). The runs are bitwise the same, which the line checks too:
//   train_threads threads=N speedup=.. same_losses=1
void ThreadLines(ModelKind kind, Task task) {
  const int threads = HardwareThreads();
  if (threads < 2) {
    std::printf("train_threads threads=1 (one hardware thread: nothing to compare)\n");
    return;
  }
  TrainerConfig cfg = LiveTrainerConfig(kind, task, 1);
  Trainer one, many;
  if (!one.Init(cfg)) std::exit(1);
  cfg.threads = threads;
  if (!many.Init(cfg)) std::exit(1);
  const int batches = 20;
  double t_one = 0, t_many = 0;
  for (int round = 1; round <= 5; ++round) {
    double t0 = Now();
    while (one.batches() < round * batches) one.Step(1e9, 1);
    t_one += Now() - t0;
    t0 = Now();
    while (many.batches() < round * batches) many.Step(1e9, 1);
    t_many += Now() - t0;
  }
  const bool same = one.batch_losses() == many.batch_losses();
  std::printf("train_threads threads=%d batches=%lld one_s=%.2f many_s=%.2f speedup=%.2f same_losses=%d\n", threads,
              static_cast<long long>(one.batches()), t_one, t_many, t_one / t_many, same ? 1 : 0);
  std::fflush(stdout);
}
#endif

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
  const double c0 = CpuSeconds();
  while (true) {
    tr.RunEpoch();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = CpuSeconds() - c0;
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
  GemmLines();
  TanhLine();
#ifndef __EMSCRIPTEN__
  ThreadLines(kind, task);
#endif
  const Outcome live = RunToTarget(LiveTrainerConfig(kind, task, 1), "live", kind_name, task_name, limit_s);
  if (!guided) return 0;
  TrainerConfig cfg = LiveTrainerConfig(kind, task, 1);
  if (kind != ModelKind::Transformer) cfg.align_weight = 0.3f;  // the Transformer is supervised already
  const Outcome g = RunToTarget(cfg, "guided", kind_name, task_name, limit_s);
  std::printf("train_ratio guided_over_live=%.2f%s\n", g.cpu_seconds / live.cpu_seconds,
              g.reached && live.reached ? "" : " (a run did not reach the target: compare where they stopped)");
  return 0;
}
