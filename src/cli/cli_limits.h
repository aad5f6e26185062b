// attnviz-cli: the limits every command that reads files shares (docs/SECURITY.md).
//
//   CliLimits limits;
//   DeclareLimitFlags(&args, &limits);              // --max-memory SIZE
//   if (int rc = ApplyLimitFlags(args, limits); rc >= 0) return rc;
//
// Text that came from a file (names, tokens, error messages quoting them) goes through
// Printable() before it reaches the terminal: escapes such as ESC ] 0 ; ... BEL are shown, not run.
#pragma once
#include <string>

#include "cli/cli_args.h"

namespace attnviz {

struct CliLimits {
  std::string max_memory;  // --max-memory as given ("" = the default budget, 1 GiB)
};

void DeclareLimitFlags(ArgParser* args, CliLimits* limits);  // adds --max-memory
// Sets the process-wide memory budget. Returns -1 to go on, else the exit code (usage error).
int ApplyLimitFlags(const ArgParser& args, const CliLimits& limits);
// PrintableText with a generous length: for whole messages and warnings.
std::string Printable(const std::string& text);
// PrintableText cut short: for names and tokens in listings.
std::string PrintableName(const std::string& text);

}  // namespace attnviz
