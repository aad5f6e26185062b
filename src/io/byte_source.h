// attnviz io: where the bytes of a lazily read file come from (docs/FORMATS.md, safetensors).
//
//   ByteSource       a file's size and reads of byte ranges; synchronous or asynchronous
//   MemorySource     bytes held in memory (tests, small files)
//   OpenFileSource   a file on disk: mmap'ed natively (pread when mmap is refused)
//
// A lazy reader never holds the whole file: it asks for the ranges it needs. Synchronous sources
// (memory, mmap) answer Read() at once. Asynchronous ones (the browser's HTTP Range requests and
// File.slice(), src/platform) return from StartRead() at once and report the end of the read later,
// through the owner's completion call (LazyAttentionFile::CompleteRead) or TakeCompletion, with the
// same ticket.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace attnviz {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t Size() const = 0;                   // bytes in the file
  virtual bool Asynchronous() const { return false; }  // reads end later (StartRead), not in Read
  // Synchronous sources: [offset, offset + size) into dst, or an error that says what went wrong
  // (beyond the end, the file changed, an I/O error).
  virtual Status Read(uint64_t offset, uint64_t size, uint8_t* dst) = 0;
  // Asynchronous sources: starts reading [offset, offset + size) into dst; dst stays valid until the
  // owner is told the read ended, or until CancelRead(ticket) returns. bulk: a part of a whole head,
  // which may wait behind the reads a view is waiting for (the browser reads the two kinds in two
  // workers, so that one busy taking in a head does not hold back the next head's first request).
  virtual void StartRead(uint64_t ticket, uint64_t offset, uint64_t size, uint8_t* dst, bool bulk) {
    (void)ticket, (void)offset, (void)size, (void)dst, (void)bulk;
  }
  virtual void CancelRead(uint64_t ticket) { (void)ticket; }  // the owner no longer wants it (dst may go)
  // A read that ended since the last call (its ticket and how), for owners that poll: the browser's
  // reads end in JavaScript callbacks that queue here (src/platform). False when none did.
  virtual bool TakeCompletion(uint64_t* ticket, Status* st) {
    (void)ticket, (void)st;
    return false;
  }
};

// Bytes in memory (a copy, or a view of bytes the caller keeps alive).
class MemorySource : public ByteSource {
 public:
  explicit MemorySource(std::vector<uint8_t> bytes) : own_(std::move(bytes)), data_(own_.data()), size_(own_.size()) {}
  MemorySource(const uint8_t* data, size_t size) : data_(data), size_(size) {}  // a view: data must outlive it
  uint64_t Size() const override { return size_; }
  Status Read(uint64_t offset, uint64_t size, uint8_t* dst) override;

 private:
  std::vector<uint8_t> own_;
  const uint8_t* data_;
  size_t size_;
};

// A file on disk, read in place: mmap'ed (pread when the system refuses the mapping). Every read
// first checks that the file still has the size and modification time it had when opened, so a
// file truncated or rewritten while open gives "the file changed since it was opened" instead of
// a SIGBUS on the mapping.
Status OpenFileSource(const std::string& path, std::unique_ptr<ByteSource>* out);

// The first min(size, max_bytes) bytes of a source (synchronous sources only).
Status ReadPrefix(ByteSource* source, uint64_t max_bytes, std::vector<uint8_t>* out);

}  // namespace attnviz
