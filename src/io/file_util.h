// attnviz io: whole-file reads and writes (native and NODERAWFS builds; the browser hands
// the app bytes directly and never calls these).
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/status.h"

namespace attnviz {

constexpr uint64_t kMaxFileBytes = uint64_t(2) << 30;  // refuse to read files above 2 GiB

// Whole file. Files above kMaxFileBytes or the memory budget (io/memory_budget.h) are refused
// before reading; the buffer is sized once from the file's size.
Status ReadFileBytes(const std::string& path, std::vector<uint8_t>* out);
Status WriteFileBytes(const std::string& path, const uint8_t* data, size_t size);  // create/replace
Status WriteFileString(const std::string& path, const std::string& text);          // create/replace

// A file written piece by piece (streamed SVG). Close() reports any write error; a FileSink
// destroyed without a successful Close() removes its partial file.
class FileSink {
 public:
  FileSink() = default;
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;
  ~FileSink();
  Status Open(const std::string& path);       // create/replace
  bool Write(const char* data, size_t size);  // false after any write error
  bool Seek(uint64_t offset);                 // the next Write goes there (past the end: a hole); false on error
  Status Close();                             // flushes and closes; error if any write failed

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
  bool failed_ = false;
};

}  // namespace attnviz
