// Fuzz target: JSON (io/json.h). A document that parses serializes to text that parses again to
// the same text (the writer's output is a fixed point).
#include <string>

#include "fuzz_common.h"
#include "io/json.h"
#include "io/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attnviz::JsonValue v;
  if (!attnviz::ParseJson((const char*)data, size, &v)) return 0;
  const std::string once = attnviz::SerializeJson(v, size % 3);
  attnviz::JsonValue w;
  ATTNVIZ_FUZZ_CHECK(attnviz::ParseJson(once, &w).ok);
  ATTNVIZ_FUZZ_CHECK(attnviz::SerializeJson(w, size % 3) == once);
  ATTNVIZ_FUZZ_CHECK(attnviz::IsValidUtf8(once));
  return 0;
}
