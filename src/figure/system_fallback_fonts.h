// attnviz figure: fallback faces for FigureFont from the system's fonts, found with fontconfig
// (native only, as is the whole figure library).
//
//   AddSystemFallbacks  for every codepoint of `texts` that no face of `font` has, adds the first
//                       font of fontconfig's "sans-serif" fallback order that covers it (files
//                       loaded once, TrueType collections by face index). Colour-bitmap fonts
//                       (Noto Color Emoji) are skipped: stb_truetype draws outlines only, so
//                       emoji come from a monochrome font if one covers them, else stay boxes.
// Codepoints no system font covers stay boxes; finding none is not an error. Returns how many
// faces were added.
#pragma once
#include <string>
#include <vector>

#include "figure/figure_font.h"

namespace attnviz {

int AddSystemFallbacks(FigureFont* font, const std::vector<std::string>& texts);

}  // namespace attnviz
