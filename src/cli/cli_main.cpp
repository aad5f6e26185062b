// attnviz-cli: the registry and main(). Commands live in cmd_*.cpp and register themselves.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cli/commands.h"

namespace attnviz {
namespace {

std::vector<CliCommand>& Registry() {
  static std::vector<CliCommand> commands;  // function-local: safe from any static initializer
  return commands;
}

void PrintUsage(FILE* f) {
  std::fprintf(f,
               "attnviz-cli: attention from the command line (same core as the attnviz viewer)\n\n"
               "usage: attnviz-cli COMMAND [ARGS...]\n"
               "       attnviz-cli COMMAND --help   (usage of one command)\n\ncommands:\n");
  for (int i = 0; i < CliCommandCount(); ++i)
    std::fprintf(f, "  %-12s %s\n", CliCommandAt(i).name, CliCommandAt(i).summary);
  std::fprintf(f, "\nexit codes: 0 ok, 1 error, 2 usage error\n");
}

}  // namespace

bool RegisterCliCommand(const CliCommand& command) {
  std::vector<CliCommand>& reg = Registry();
  for (const CliCommand& c : reg) {
    if (std::strcmp(c.name, command.name) == 0) {
      std::fprintf(stderr, "attnviz-cli: command '%s' registered twice\n", command.name);
      return false;
    }
  }
  reg.push_back(command);
  std::sort(reg.begin(), reg.end(),
            [](const CliCommand& a, const CliCommand& b) { return std::strcmp(a.name, b.name) < 0; });
  return true;
}

const CliCommand* FindCliCommand(const char* name) {
  for (const CliCommand& c : Registry())
    if (std::strcmp(c.name, name) == 0) return &c;
  return nullptr;
}

int CliCommandCount() {
  return (int)Registry().size();
}
const CliCommand& CliCommandAt(int i) {
  return Registry()[(size_t)i];
}

}  // namespace attnviz

int main(int argc, char** argv) {
  using namespace attnviz;
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    if (argc >= 3 && std::strcmp(argv[1], "help") == 0) {  // `attnviz-cli help attend`
      const CliCommand* c = FindCliCommand(argv[2]);
      if (c) {
        char* sub[] = {argv[2], (char*)"--help", nullptr};
        return c->run(2, sub);
      }
    }
    PrintUsage(stdout);
    return argc < 2 ? kExitUsage : kExitOk;
  }
  const CliCommand* command = FindCliCommand(argv[1]);
  if (!command) {
    std::fprintf(stderr, "attnviz-cli: unknown command '%s'\n\n", argv[1]);
    PrintUsage(stderr);
    return kExitUsage;
  }
  return command->run(argc - 1, argv + 1);
}
