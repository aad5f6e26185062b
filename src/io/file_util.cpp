#include "io/file_util.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace attnviz {

Status ReadFileBytes(const std::string& path, std::vector<uint8_t>* out) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::Error("cannot open '" + path + "': " + std::strerror(errno));
  out->clear();
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
    if (out->size() + n > kMaxFileBytes) {
      std::fclose(f);
      return Status::Error("'" + path + "' is larger than 2 GiB; refusing to read it");
    }
    out->insert(out->end(), buf, buf + n);
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return Status::Error("error reading '" + path + "'");
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

}  // namespace attnviz
