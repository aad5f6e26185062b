// attnviz seq2seq: a small pool of std::threads for the data-parallel trainer (native only: the
// browser's training worker has one thread and never starts one).
//
// Run(tasks, fn) calls fn(0) ... fn(tasks - 1), spread over the pool's threads and the caller,
// and returns when all are done. Which thread runs a task is up to timing, so a task must write
// only to its own outputs (the trainer gives each one its own tape and gradient buffers and
// reduces them in task order afterwards: the result does not depend on the thread count).
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace attnviz {
namespace seq2seq {

int HardwareThreads();  // std::thread::hardware_concurrency(), at least 1

class WorkerPool {
 public:
  explicit WorkerPool(int threads);  // threads in all, the caller included (1: no thread is started)
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  int threads() const { return static_cast<int>(workers_.size()) + 1; }  // the caller included
  void Run(int tasks, const std::function<void(int task)>& fn);          // blocks until every task is done

 private:
  void WorkerLoop();
  bool TakeTask(int* task);  // the next task of the current run, if any (mutex_ held)

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* fn_ = nullptr;  // the current run (guarded by mutex_)
  int tasks_ = 0, next_ = 0, finished_ = 0;       // guarded by mutex_
  long generation_ = 0;                           // bumped per run
  bool quit_ = false;
};

}  // namespace seq2seq
}  // namespace attnviz
