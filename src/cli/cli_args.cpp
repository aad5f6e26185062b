#include "cli/cli_args.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "cli/commands.h"

namespace attnviz {

ArgParser::ArgParser(const char* command, const char* description) : command_(command), description_(description) {}

void ArgParser::Flag(const char* name, bool* out, const char* help) {
  options_.push_back({name, "", help, Kind::Flag, out, false, false});
}
void ArgParser::String(const char* name, std::string* out, const char* metavar, const char* help, bool required) {
  options_.push_back({name, metavar, help, Kind::String, out, required, false});
}
void ArgParser::Int(const char* name, int* out, const char* metavar, const char* help) {
  options_.push_back({name, metavar, help, Kind::Int, out, false, false});
}
void ArgParser::Float(const char* name, float* out, const char* metavar, const char* help) {
  options_.push_back({name, metavar, help, Kind::Float, out, false, false});
}
void ArgParser::List(const char* name, std::vector<std::string>* out, const char* metavar, const char* help) {
  options_.push_back({name, metavar, help, Kind::List, out, false, false});
}
void ArgParser::Positional(const char* name, std::string* out, const char* help, bool required) {
  options_.push_back({name, name, help, Kind::Positional, out, required, false});
}

ArgParser::Option* ArgParser::FindOption(const std::string& name) {
  for (Option& o : options_)
    if (o.kind != Kind::Positional && o.name == name) return &o;
  return nullptr;
}

bool ArgParser::Seen(const char* name) const {
  for (const Option& o : options_)
    if (o.name == name) return o.seen;
  return false;
}

bool ArgParser::Assign(Option* o, const std::string& value) {
  switch (o->kind) {
    case Kind::String:
    case Kind::Positional:
      *(std::string*)o->out = value;
      return true;
    case Kind::List:
      ((std::vector<std::string>*)o->out)->push_back(value);
      return true;
    case Kind::Int: {
      errno = 0;
      char* end = nullptr;
      long v = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno || v < INT_MIN || v > INT_MAX) return false;
      *(int*)o->out = (int)v;
      return true;
    }
    case Kind::Float: {
      errno = 0;
      char* end = nullptr;
      float v = std::strtof(value.c_str(), &end);
      if (value.empty() || *end != '\0' || errno || !std::isfinite(v)) return false;
      *(float*)o->out = v;
      return true;
    }
    case Kind::Flag:
      return false;
  }
  return false;
}

int ArgParser::UsageError(const std::string& message) const {
  std::fprintf(stderr, "attnviz-cli %s: %s\n", command_.c_str(), message.c_str());
  std::fprintf(stderr, "run 'attnviz-cli %s --help' for usage\n", command_.c_str());
  return kExitUsage;
}

int ArgParser::Parse(int argc, char** argv) {
  size_t next_positional = 0;
  bool flags_done = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i] ? argv[i] : "";
    if (!flags_done && (arg == "--help" || arg == "-h")) {
      PrintHelp(stdout);
      return kExitOk;
    }
    if (!flags_done && arg == "--") {
      flags_done = true;
      continue;
    }
    if (!flags_done && arg.size() > 1 && arg[0] == '-' &&
        !(arg.size() > 1 && (std::isdigit((unsigned char)arg[1]) || arg[1] == '.'))) {
      std::string name = arg, value;
      bool has_value = false;
      const size_t eq = arg.find('=');
      if (eq != std::string::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
        has_value = true;
      }
      Option* o = FindOption(name);
      if (!o) return UsageError("unknown flag '" + name + "'");
      o->seen = true;
      if (o->kind == Kind::Flag) {
        if (has_value) return UsageError("flag " + name + " takes no value");
        *(bool*)o->out = true;
        continue;
      }
      if (!has_value) {
        if (i + 1 >= argc) return UsageError("flag " + name + " needs a value (" + o->metavar + ")");
        value = argv[++i];
      }
      if (!Assign(o, value))
        return UsageError("bad value '" + value + "' for " + name + " (expected " + o->metavar + ")");
      continue;
    }
    // a positional argument
    size_t seen = 0;
    Option* target = nullptr;
    for (Option& o : options_) {
      if (o.kind != Kind::Positional) continue;
      if (seen++ == next_positional) {
        target = &o;
        break;
      }
    }
    if (!target) return UsageError("unexpected argument '" + arg + "'");
    ++next_positional;
    target->seen = true;
    Assign(target, arg);
  }
  for (const Option& o : options_)
    if (o.required && !o.seen)
      return UsageError(o.kind == Kind::Positional ? "missing argument " + o.name : "missing required flag " + o.name);
  return -1;
}

void ArgParser::PrintHelp(FILE* f) const {
  std::string line = "usage: attnviz-cli " + command_;
  for (const Option& o : options_) {
    std::string part = o.kind == Kind::Positional ? o.name : o.kind == Kind::Flag ? o.name : o.name + " " + o.metavar;
    if (o.kind == Kind::List) part += " ...";
    line += o.required ? " " + part : " [" + part + "]";
  }
  std::fprintf(f, "%s\n\n%s\n\n", line.c_str(), description_.c_str());
  for (const Option& o : options_) {
    std::string left = o.kind == Kind::Flag || o.kind == Kind::Positional ? o.name : o.name + " " + o.metavar;
    std::fprintf(f, "  %-24s %s\n", left.c_str(), o.help.c_str());
  }
  std::fprintf(f, "  %-24s %s\n", "-h, --help", "show this help");
}

}  // namespace attnviz
