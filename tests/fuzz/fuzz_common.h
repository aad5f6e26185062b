// attnviz fuzz targets: shared setup. Every target runs under a 256 MiB memory budget, so that an
// input taking more than the budget promises (libFuzzer's -rss_limit_mb / -malloc_limit_mb) is a
// finding, not noise.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "io/memory_budget.h"

#define ATTNVIZ_FUZZ_CHECK(cond)                                                          \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      __builtin_printf("fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                       \
    }                                                                                     \
  } while (0)

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  attnviz::SetDefaultMemoryBudget(uint64_t(256) << 20);
  return 0;
}
