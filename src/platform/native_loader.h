// attnviz platform (native): files opened from disk are read and parsed on a loader thread
// (io/attention_loader.h), so the window keeps drawing; the app shows the progress and its Cancel
// button, and gets the document on the UI thread once it is read. One file at a time, in order.
#pragma once
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/status.h"
#include "io/attention_sets.h"

namespace attnviz {

class App;

class NativeFileLoader {
 public:
  ~NativeFileLoader();                 // cancels the file being read and waits for the thread
  void Open(const std::string& path);  // queued behind the file being read, if any
  // Every frame, on the UI thread: the progress to the app, its Cancel button to the thread, a
  // finished document (or the error) into the app, and the next queued file started.
  void Poll(App* app);
  bool Idle() const;        // nothing queued or being read
  void WaitIdle(App* app);  // polls until Idle (files named on the command line)

 private:
  void Start(const std::string& path);
  void Run();  // the thread

  std::deque<std::string> queue_;
  std::thread thread_;
  std::string path_;  // the file being read
  std::atomic<uint64_t> received_{0}, total_{0};
  std::atomic<bool> cancel_{false}, done_{true};
  std::mutex mutex_;  // guards status_ and doc_
  Status status_;
  std::unique_ptr<AttentionDocument> doc_;
};

}  // namespace attnviz
