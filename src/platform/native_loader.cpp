#include "platform/native_loader.h"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "app/app.h"
#include "io/attention_loader.h"
#include "io/byte_source.h"
#include "io/lazy_attention.h"

namespace attnviz {

NativeFileLoader::~NativeFileLoader() {
  cancel_ = true;
  if (thread_.joinable()) thread_.join();
}

void NativeFileLoader::Open(const std::string& path) {
  queue_.push_back(path);
}

bool NativeFileLoader::Idle() const {
  return queue_.empty() && done_ && !thread_.joinable();
}

void NativeFileLoader::Start(const std::string& path) {
  path_ = path;
  received_ = 0;
  total_ = 0;
  cancel_ = false;
  done_ = false;
  doc_.reset();
  status_ = Status::Ok();
  thread_ = std::thread(&NativeFileLoader::Run, this);
}

// Reads the file in 8 MiB pieces into the loader (which decodes a .npy straight into its matrices).
void NativeFileLoader::Run() {
  Status st;
  std::unique_ptr<AttentionDocument> doc(new AttentionDocument);
  std::FILE* f = std::fopen(path_.c_str(), "rb");
  struct stat info;
  if (!f) {
    st = Status::Error("cannot open '" + path_ + "': " + std::strerror(errno));
  } else if (fstat(fileno(f), &info) != 0 || !S_ISREG(info.st_mode)) {
    st = Status::Error("'" + path_ + "' is not a regular file");
  } else {
    total_ = (uint64_t)info.st_size;
    AttentionLoader loader;
    st = loader.Begin(total_);
    std::vector<uint8_t> piece(size_t(8) << 20);
    while (st && !cancel_) {
      const size_t n = std::fread(piece.data(), 1, piece.size(), f);
      if (n == 0) break;
      st = loader.Feed(piece.data(), n);
      received_ = loader.received();
    }
    if (st && std::ferror(f)) st = Status::Error("error reading '" + path_ + "'");
    if (st && cancel_) st = Status::Error("cancelled: '" + path_ + "' was not opened");
    if (st) st = loader.Finish(doc.get());
    if (!st && st.message.compare(0, 10, "cancelled:") != 0)
      st = Status::Error("could not open " + path_ + ": " + st.message);
  }
  if (f) std::fclose(f);
  std::lock_guard<std::mutex> lock(mutex_);
  status_ = st;
  if (st) doc_ = std::move(doc);
  done_ = true;
}

void NativeFileLoader::Poll(App* app) {
  if (thread_.joinable()) {
    if (!done_) {
      if (app->LoadCancelRequested()) cancel_ = true;
      app->ShowLoadProgress(path_, received_, total_ ? total_.load() : 1);
      return;
    }
    thread_.join();
    app->ShowLoadProgress(path_, 0, 0);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!status_) {
      std::fprintf(stderr, "attnviz: %s\n", status_.message.c_str());
      app->ShowError(status_.message);
    } else if (doc_) {
      const Status st = app->OpenDocument(path_, doc_.get());
      if (!st) std::fprintf(stderr, "attnviz: %s\n", st.message.c_str());
    }
    doc_.reset();
  }
  while (!queue_.empty() && !thread_.joinable()) {
    const std::string next = queue_.front();
    queue_.pop_front();
    // A safetensors file (or a .npy too big to read whole) is not read: it is mapped, and its heads
    // are read as the views draw them.
    std::unique_ptr<ByteSource> source;
    if (OpenFileSource(next, &source) && OpensLazily(source.get())) {
      const Status st = app->OpenLazy(next, std::move(source));
      if (!st) std::fprintf(stderr, "attnviz: %s\n", st.message.c_str());
      continue;
    }
    Start(next);
  }
}

void NativeFileLoader::WaitIdle(App* app) {
  while (!Idle()) {
    Poll(app);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace attnviz
