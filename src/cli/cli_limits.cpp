#include "cli/cli_limits.h"

#include "io/memory_budget.h"
#include "io/utf8.h"

namespace attnviz {

void DeclareLimitFlags(ArgParser* args, CliLimits* limits) {
  args->String("--max-memory", &limits->max_memory, "SIZE",
               "memory budget for reading files, e.g. 512M, 4G (default 1G)");
}

int ApplyLimitFlags(const ArgParser& args, const CliLimits& limits) {
  if (limits.max_memory.empty()) return -1;
  uint64_t bytes = 0;
  if (!ParseByteSize(limits.max_memory, &bytes))
    return args.UsageError("bad --max-memory '" + limits.max_memory + "' (expected a size such as 512M or 4G)");
  SetDefaultMemoryBudget(bytes);
  return -1;
}

std::string Printable(const std::string& text) {
  return PrintableText(text, 4000);
}

std::string PrintableName(const std::string& text) {
  return PrintableText(text, 80);
}

}  // namespace attnviz
