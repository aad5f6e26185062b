// attnviz io: the memory budget every reader works under (docs/SECURITY.md).
//
// Index of this header
//   - DefaultMemoryBudget   process-wide default (1 GiB) that readers' options start from
//   - MemoryBudget          bytes a reader may still take; Charge before allocating
//   - TryAllocate           asks the allocator first, so a failing allocation is a Status
//   - ChargeAndCheck        budget + allocator check (what the two below share)
//   - CheckedResize         budget + allocator check, then std::vector::resize
//   - CheckedAssign         budget + allocator check, then a copy of n bytes (no resize: web -Os instances)
//   - ParseByteSize         "512M", "2G", "1073741824" -> bytes (the CLI's --max-memory)
//
// Files come from strangers. With exceptions off (-fno-exceptions), a failed `new` is an abort
// (exit 134 natively, `RuntimeError: Aborted()` that kills the whole WASM module), so readers
// never allocate on a size they read from a file before charging it here. Charges are checked
// from declared sizes first (zip headers, npy shapes) and again while inflating and parsing.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace attnviz {

constexpr uint64_t kDefaultMemoryBudget = uint64_t(1) << 30;  // 1 GiB unless the user sets another

// The budget that default-constructed reader options (ZipReadOptions, JsonParseOptions, NpyReadOptions)
// start from. The CLI's --max-memory and the embed option set it once at start-up.
uint64_t DefaultMemoryBudget();
void SetDefaultMemoryBudget(uint64_t bytes);  // 0 restores kDefaultMemoryBudget

// Bytes one read may still take. Not thread-safe: one budget per read.
class MemoryBudget {
 public:
  explicit MemoryBudget(uint64_t limit = DefaultMemoryBudget()) : limit_(limit) {}
  // Takes `bytes` or fails with "<what> needs N bytes, over the memory budget (N of M bytes left)".
  Status Charge(uint64_t bytes, const std::string& what);
  bool TryCharge(uint64_t bytes);                                          // like Charge, without a message
  void Refund(uint64_t bytes) { used_ -= bytes < used_ ? bytes : used_; }  // gives bytes back
  uint64_t limit() const { return limit_; }                                // the budget
  uint64_t used() const { return used_; }                                  // charged so far
  uint64_t left() const { return limit_ - used_; }                         // still available

 private:
  uint64_t limit_;
  uint64_t used_ = 0;
};

// Asks the allocator for `bytes` and gives them back at once: false when malloc would fail
// (address-space limit, WASM heap that cannot grow). Run before any allocation of a size that
// came from a file, so that failure becomes a Status instead of std::bad_alloc -> abort.
bool TryAllocate(size_t bytes);

// Charges bytes to *budget (may be null) and, when they are more than the vector holds already
// (grow), checks TryAllocate; on failure nothing stays charged.
inline Status ChargeAndCheck(size_t bytes, bool grow, MemoryBudget* budget, const std::string& what) {
  if (budget) {
    Status st = budget->Charge(bytes, what);
    if (!st) return st;
  }
  if (grow && !TryAllocate(bytes)) {
    if (budget) budget->Refund(bytes);
    return Status::Error(what + ": out of memory allocating " + std::to_string(bytes) + " bytes");
  }
  return Status::Ok();
}

// v->resize(n) after charging n * sizeof(T) to *budget (may be null) and checking TryAllocate.
template <typename T>
Status CheckedResize(std::vector<T>* v, size_t n, MemoryBudget* budget, const std::string& what) {
  if (n > SIZE_MAX / sizeof(T)) return Status::Error(what + ": size overflows");
  const Status st = ChargeAndCheck(n * sizeof(T), n > v->capacity(), budget, what);
  if (st) v->resize(n);
  return st;
}

// *v = the n bytes at src, charged to *budget like CheckedResize. A copy from a range (memcpy in
// libc++), never resize(): in the web build the link keeps the vector<uint8_t> instances of an -Os
// object, whose resize() fills and frees a byte at a time (~1 ns a byte, 30x memcpy; tests/hostile:
// a 256 MiB Fortran-order member spent 2.7 s of its 8.8 s there).
inline Status CheckedAssign(std::vector<uint8_t>* v, const uint8_t* src, size_t n, MemoryBudget* budget,
                            const std::string& what) {
  const Status st = ChargeAndCheck(n, n > v->capacity(), budget, what);
  if (st) v->assign(src, src + n);
  return st;
}

// "1073741824", "512K", "512M", "1G", "1.5G" (binary units, case-insensitive, optional "iB"/"B").
// Returns false on anything else, on 0 and on values above 2^50.
bool ParseByteSize(const std::string& text, uint64_t* bytes);
std::string FormatByteSize(uint64_t bytes);        // "1 GiB", "256 MiB", "1536 bytes": exact
std::string FormatApproxByteSize(uint64_t bytes);  // "1.5 GiB", "38.6 MiB", "900 bytes": at a glance

}  // namespace attnviz
