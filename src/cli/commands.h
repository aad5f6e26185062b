// attnviz-cli: the command registry. A command is ONE self-registering .cpp file:
//
//   static int RunFoo(int argc, char** argv) { ... }   // argv[0] is the command name
//   ATTNVIZ_CLI_COMMAND(foo, "one-line summary shown by `attnviz-cli --help`", RunFoo)
//
// The CLI sources are compiled straight into the executable (not a static library), so
// static initializers always run and no list of commands is kept anywhere else.
// Exit codes: 0 success, 1 error (message on stderr), 2 usage error (unknown command or flag).
#pragma once

namespace attnviz {

constexpr int kExitOk = 0;     // the command did its work
constexpr int kExitError = 1;  // bad input data, I/O failure, ... (message on stderr)
constexpr int kExitUsage = 2;  // unknown command, unknown flag, missing argument

struct CliCommand {
  const char* name;                   // the word after attnviz-cli, e.g. "attend"
  const char* summary;                // one line for the command list
  int (*run)(int argc, char** argv);  // argv[0] = name, argv[1..] = the command's arguments
};

bool RegisterCliCommand(const CliCommand& command);  // false (and a message) on a duplicate name
const CliCommand* FindCliCommand(const char* name);  // nullptr if unknown
int CliCommandCount();                               // number of registered commands
const CliCommand& CliCommandAt(int i);               // sorted by name

}  // namespace attnviz

#define ATTNVIZ_CLI_CONCAT_(a, b) a##b
#define ATTNVIZ_CLI_CONCAT(a, b) ATTNVIZ_CLI_CONCAT_(a, b)
// Registers `fn` as command `name` (an identifier, e.g. attend) from a static initializer.
#define ATTNVIZ_CLI_COMMAND(name, summary, fn)                          \
  static const bool ATTNVIZ_CLI_CONCAT(attnviz_cli_registered_, name) = \
      ::attnviz::RegisterCliCommand(::attnviz::CliCommand{#name, summary, fn});
