#include "io/memory_budget.h"

#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace attnviz {
namespace {

std::atomic<uint64_t> g_default_budget{kDefaultMemoryBudget};

}  // namespace

uint64_t DefaultMemoryBudget() {
  return g_default_budget.load(std::memory_order_relaxed);
}

void SetDefaultMemoryBudget(uint64_t bytes) {
  g_default_budget.store(bytes ? bytes : kDefaultMemoryBudget, std::memory_order_relaxed);
}

bool MemoryBudget::TryCharge(uint64_t bytes) {
  if (bytes > limit_ - used_) return false;
  used_ += bytes;
  return true;
}

Status MemoryBudget::Charge(uint64_t bytes, const std::string& what) {
  if (TryCharge(bytes)) return Status::Ok();
  return Status::Error(what + " needs " + std::to_string(bytes) + " bytes, over the memory budget (" +
                       std::to_string(left()) + " of " + FormatByteSize(limit_) +
                       " left; raise it: --max-memory in the CLI, maxMemory when embedding)");
}

bool TryAllocate(size_t bytes) {
  if (bytes == 0) return true;
  void* p = std::malloc(bytes);
  if (!p) return false;
  std::free(p);
  return true;
}

bool ParseByteSize(const std::string& text, uint64_t* bytes) {
  if (text.empty()) return false;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(v > 0) || !std::isfinite(v)) return false;
  std::string unit(end);
  for (char& c : unit) c = (char)std::toupper((unsigned char)c);
  if (unit.size() >= 2 && unit.compare(unit.size() - 2, 2, "IB") == 0)
    unit.resize(unit.size() - 2);
  else if (unit.size() >= 2 && unit.back() == 'B')
    unit.pop_back();
  double scale = 1;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "K")
    scale = 1024.0;
  else if (unit == "M")
    scale = 1024.0 * 1024;
  else if (unit == "G")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "T")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else
    return false;
  const double b = std::floor(v * scale);
  if (b < 1 || b > std::ldexp(1.0, 50)) return false;
  *bytes = (uint64_t)b;
  return true;
}

std::string FormatByteSize(uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  uint64_t v = bytes;
  while (u < 4 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return std::to_string(v) + " " + units[u];
}

std::string FormatApproxByteSize(uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof(buf), u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

}  // namespace attnviz
