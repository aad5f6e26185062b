// attnviz platform: the label rasteriser of this platform (render/label_cache.h's back end).
//   browser: label_raster_web.cpp, a 2D canvas (the browser's fonts, shaping and bidi)
//   native:  label_raster_native.cpp, fontconfig + FreeType + HarfBuzz
#pragma once
#include <memory>

#include "render/label_cache.h"

namespace attnviz {

// Null when the platform has nothing to rasterise with (labels then use the UI font only).
std::unique_ptr<LabelRasterizer> MakeLabelRasterizer();

}  // namespace attnviz
