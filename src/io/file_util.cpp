#include "io/file_util.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "io/memory_budget.h"

namespace attnviz {

Status ReadFileBytes(const std::string& path, std::vector<uint8_t>* out) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::Error("cannot open '" + path + "': " + std::strerror(errno));
  out->clear();
  const uint64_t limit = std::min<uint64_t>(kMaxFileBytes, DefaultMemoryBudget());
  struct stat info;
  if (fstat(fileno(f), &info) == 0 && S_ISREG(info.st_mode)) {
    if ((uint64_t)info.st_size > limit) {
      std::fclose(f);
      return Status::Error("'" + path + "' is " + std::to_string((uint64_t)info.st_size) +
                           " bytes, over the limit of " + FormatByteSize(limit) + "; refusing to read it");
    }
    if (!TryAllocate((size_t)info.st_size)) {
      std::fclose(f);
      return Status::Error("'" + path + "': out of memory");
    }
    out->reserve((size_t)info.st_size);
  }
  uint8_t buf[1 << 16];
  size_t n;
  errno = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
    if (out->size() + n > limit) {
      std::fclose(f);
      return Status::Error("'" + path + "' is larger than " + FormatByteSize(limit) + "; refusing to read it");
    }
    out->insert(out->end(), buf, buf + n);
  }
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed)
    return Status::Error("error reading '" + path + "'" + (err ? std::string(": ") + std::strerror(err) : ""));
  return Status::Ok();
}

Status WriteFileBytes(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Status::Error("cannot create '" + path + "': " + std::strerror(errno));
  const size_t written = size ? std::fwrite(data, 1, size, f) : 0;
  const bool close_failed = std::fclose(f) != 0;
  if (written != size || close_failed) return Status::Error("error writing '" + path + "'");
  return Status::Ok();
}

Status WriteFileString(const std::string& path, const std::string& text) {
  return WriteFileBytes(path, (const uint8_t*)text.data(), text.size());
}

FileSink::~FileSink() {
  if (f_) {
    std::fclose(f_);
    std::remove(path_.c_str());
  }
}

Status FileSink::Open(const std::string& path) {
  path_ = path;
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) return Status::Error("cannot create '" + path + "': " + std::strerror(errno));
  return Status::Ok();
}

bool FileSink::Write(const char* data, size_t size) {
  if (!f_ || failed_) return false;
  if (size && std::fwrite(data, 1, size, f_) != size) failed_ = true;
  return !failed_;
}

bool FileSink::Seek(uint64_t offset) {
  if (!f_ || failed_) return false;
  if (offset > (uint64_t)std::numeric_limits<off_t>::max() || fseeko(f_, (off_t)offset, SEEK_SET) != 0) failed_ = true;
  return !failed_;
}

Status FileSink::Close() {
  if (!f_) return Status::Error("'" + path_ + "' is not open");
  const bool close_failed = std::fclose(f_) != 0;
  f_ = nullptr;
  if (failed_ || close_failed) {
    std::remove(path_.c_str());
    return Status::Error("error writing '" + path_ + "'");
  }
  return Status::Ok();
}

}  // namespace attnviz
