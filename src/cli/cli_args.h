// attnviz-cli: a small flag parser shared by every command.
//
//   ArgParser args("attend", "compute attention from Q, K, V in an .npz");
//   args.String("--in", &in_path, "FILE", "input .npz", /*required=*/true);
//   args.Flag("--causal", &causal, "mask keys after each query");
//   if (int rc = args.Parse(argc, argv); rc >= 0) return rc;   // --help -> 0, usage error -> 2
//
// Accepted spellings: --name VALUE, --name=VALUE, boolean --name; "--" ends the flags. A List flag
// may be given several times (--hide a --hide b): each value is appended.
// Unknown flags, missing values, malformed numbers and missing required arguments print a
// message and the usage on stderr and make Parse return kExitUsage (2).
#pragma once
#include <cstdio>
#include <string>
#include <vector>

namespace attnviz {

class ArgParser {
 public:
  ArgParser(const char* command, const char* description);  // both are shown by --help

  void Flag(const char* name, bool* out, const char* help);  // boolean switch: presence sets true
  void String(const char* name, std::string* out, const char* metavar, const char* help, bool required = false);
  void Int(const char* name, int* out, const char* metavar, const char* help);                        // decimal integer
  void Float(const char* name, float* out, const char* metavar, const char* help);                    // finite float
  void List(const char* name, std::vector<std::string>* out, const char* metavar, const char* help);  // repeatable
  void Positional(const char* name, std::string* out, const char* help, bool required = true);        // in order

  // argv[0] is the command name. Returns -1 when the command should go on, otherwise the exit
  // code to return right away (0 after --help/-h, kExitUsage after a usage error).
  int Parse(int argc, char** argv);
  bool Seen(const char* name) const;                 // true if the flag/positional was given on the command line
  void PrintHelp(FILE* f) const;                     // usage line, description and one line per option
  int UsageError(const std::string& message) const;  // prints "attnviz-cli CMD: message" + hint; returns 2

 private:
  enum class Kind { Flag, String, Int, Float, List, Positional };
  struct Option {
    std::string name, metavar, help;
    Kind kind;
    void* out;
    bool required;
    bool seen;
  };
  Option* FindOption(const std::string& name);
  bool Assign(Option* o, const std::string& value);
  std::string command_, description_;
  std::vector<Option> options_;
};

}  // namespace attnviz
