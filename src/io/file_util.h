// attnviz io: whole-file reads and writes (native and NODERAWFS builds; the browser hands
// the app bytes directly and never calls these).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace attnviz {

constexpr uint64_t kMaxFileBytes = uint64_t(2) << 30;  // refuse to read files above 2 GiB

Status ReadFileBytes(const std::string& path, std::vector<uint8_t>* out);          // whole file
Status WriteFileBytes(const std::string& path, const uint8_t* data, size_t size);  // create/replace
Status WriteFileString(const std::string& path, const std::string& text);          // create/replace

}  // namespace attnviz
