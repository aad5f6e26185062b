// attnviz core: Status, the error type of every fallible core/io call.
// Errors are values, never exceptions (the WASM build has exceptions off).
#pragma once
#include <string>
#include <utility>

namespace attnviz {

struct [[nodiscard]] Status {  // a Status that is ignored is a compiler warning
  bool ok = true;              // true when the call succeeded
  std::string message;         // human-readable reason when !ok, shown in the UI or on stderr

  static Status Ok() { return Status{}; }                                         // success
  static Status Error(std::string msg) { return Status{false, std::move(msg)}; }  // failure with a message
  explicit operator bool() const { return ok; }                                   // if (status) ...
};

}  // namespace attnviz
