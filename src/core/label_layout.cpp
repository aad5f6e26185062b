#include "core/label_layout.h"

#include <cmath>

namespace attnviz {

const char* LabelModeName(LabelMode m) {
  switch (m) {
    case LabelMode::All:
      return "all";
    case LabelMode::None:
      return "none";
    default:
      return "auto";
  }
}

bool ParseLabelMode(const std::string& s, LabelMode* out) {
  for (int i = 0; i < (int)LabelMode::Count; ++i) {
    if (s == LabelModeName((LabelMode)i)) {
      *out = (LabelMode)i;
      return true;
    }
  }
  return false;
}

int LabelStride(LabelMode mode, float cell_extent, float label_extent, float gap) {
  if (mode == LabelMode::None) return 0;
  if (mode == LabelMode::All) return 1;
  const float need = label_extent + gap;
  if (!(cell_extent > 0) || !std::isfinite(cell_extent) || !(need > 0) || !std::isfinite(need)) return 1;
  const float k = std::ceil(need / cell_extent - 1e-4f);  // a label that exactly fits its cell keeps stride 1
  return k < 1 ? 1 : (k > 1e6f ? 1000000 : (int)k);
}

}  // namespace attnviz
