#include "io/byte_source.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace attnviz {

namespace {

Status BeyondEnd(uint64_t offset, uint64_t size, uint64_t file_size) {
  return Status::Error("read of " + std::to_string(size) + " bytes at offset " + std::to_string(offset) +
                       " is beyond the end of the file (" + std::to_string(file_size) + " bytes)");
}

bool InRange(uint64_t offset, uint64_t size, uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

// mmap (64-bit address spaces) or pread, after checking the file is what it was when opened.
class FileSource : public ByteSource {
 public:
  ~FileSource() override {
    if (map_) munmap(map_, (size_t)size_);
    if (fd_ >= 0) close(fd_);
  }
  Status Open(const std::string& path) {
    path_ = path;
    fd_ = open(path.c_str(), O_RDONLY);
    if (fd_ < 0) return Status::Error("cannot open '" + path + "': " + std::strerror(errno));
    struct stat st;
    if (fstat(fd_, &st) != 0) return Status::Error("cannot stat '" + path + "': " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) return Status::Error("'" + path + "' is not a regular file");
    size_ = (uint64_t)st.st_size;
    mtime_ = (int64_t)st.st_mtime;
    // A 32-bit address space (WASM) cannot map a large file; pread needs none.
    if (sizeof(size_t) >= 8 && size_ > 0) {
      void* p = mmap(nullptr, (size_t)size_, PROT_READ, MAP_SHARED, fd_, 0);
      if (p != MAP_FAILED) map_ = p;
    }
    return Status::Ok();
  }
  uint64_t Size() const override { return size_; }
  Status Read(uint64_t offset, uint64_t size, uint8_t* dst) override {
    if (!InRange(offset, size, size_)) return BeyondEnd(offset, size, size_);
    struct stat st;
    if (fstat(fd_, &st) != 0 || (uint64_t)st.st_size != size_ || (int64_t)st.st_mtime != mtime_)
      return Status::Error("'" + path_ + "' changed since it was opened (now " + std::to_string((uint64_t)st.st_size) +
                           " bytes, was " + std::to_string(size_) + "); open it again");
    if (map_) {
      std::memcpy(dst, (const uint8_t*)map_ + offset, (size_t)size);
      // The bytes are copied: unmap their pages again (they stay in the page cache), or the process
      // would count every page it ever read as its own (RSS 1 GB after converting a 1 GiB file).
      const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), first = offset / page * page;
      if (size >= page) madvise((uint8_t*)map_ + first, (size_t)(offset + size - first), MADV_DONTNEED);
      return Status::Ok();
    }
    // 32-bit builds (WASM under node): Emscripten's file system drops the high bits of 64-bit offsets.
    if (sizeof(size_t) < 8 && offset + size > (uint64_t(1) << 31))
      return Status::Error("'" + path_ + "': this build reads files up to 2 GiB (read at byte " +
                           std::to_string(offset) + "); use the native build, or open it in the browser");
    while (size > 0) {
      const size_t chunk = (size_t)std::min<uint64_t>(size, uint64_t(1) << 30);
      const ssize_t n = pread(fd_, dst, chunk, (off_t)offset);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Status::Error("error reading '" + path_ + "': " + std::strerror(errno));
      if (n == 0) return Status::Error("'" + path_ + "' ended early (changed since it was opened?)");
      dst += n;
      offset += (uint64_t)n;
      size -= (uint64_t)n;
    }
    return Status::Ok();
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  int64_t mtime_ = 0;
  void* map_ = nullptr;
};

}  // namespace

Status MemorySource::Read(uint64_t offset, uint64_t size, uint8_t* dst) {
  if (!InRange(offset, size, size_)) return BeyondEnd(offset, size, size_);
  if (size) std::memcpy(dst, data_ + offset, (size_t)size);
  return Status::Ok();
}

Status OpenFileSource(const std::string& path, std::unique_ptr<ByteSource>* out) {
  std::unique_ptr<FileSource> f(new FileSource);
  const Status st = f->Open(path);
  if (!st) return st;
  *out = std::move(f);
  return Status::Ok();
}

Status ReadPrefix(ByteSource* source, uint64_t max_bytes, std::vector<uint8_t>* out) {
  if (source->Asynchronous()) return Status::Error("ReadPrefix needs a synchronous source");
  const uint64_t n = std::min(source->Size(), max_bytes);
  out->resize((size_t)n);
  return source->Read(0, n, out->data());
}

}  // namespace attnviz
