// attnviz seq2seq: the trainer's thread pool (see worker_pool.h).
#include "core/seq2seq/worker_pool.h"

#include <algorithm>

namespace attnviz {
namespace seq2seq {

int HardwareThreads() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

WorkerPool::WorkerPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

bool WorkerPool::TakeTask(int* task) {
  if (!fn_ || next_ >= tasks_) return false;
  *task = next_++;
  return true;
}

void WorkerPool::Run(int tasks, const std::function<void(int)>& fn) {
  if (tasks <= 0) return;
  if (workers_.empty() || tasks == 1) {
    for (int t = 0; t < tasks; ++t) fn(t);
    return;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  fn_ = &fn;
  tasks_ = tasks;
  next_ = finished_ = 0;
  ++generation_;
  wake_.notify_all();
  int task;
  while (TakeTask(&task)) {  // the caller works too
    lock.unlock();
    fn(task);
    lock.lock();
    ++finished_;
  }
  done_.wait(lock, [this] { return finished_ == tasks_; });
  fn_ = nullptr;
}

void WorkerPool::WorkerLoop() {
  long seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return quit_ || (fn_ && generation_ != seen); });
    if (quit_) return;
    seen = generation_;
    int task;
    while (TakeTask(&task)) {
      const std::function<void(int)>* fn = fn_;
      lock.unlock();
      (*fn)(task);
      lock.lock();
      if (++finished_ == tasks_) done_.notify_all();
    }
  }
}

}  // namespace seq2seq
}  // namespace attnviz
