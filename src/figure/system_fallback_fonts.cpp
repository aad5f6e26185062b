// attnviz figure: fontconfig fallback faces (system_fallback_fonts.h).
#include "figure/system_fallback_fonts.h"

#include <fontconfig/fontconfig.h>

#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "io/utf8.h"

namespace attnviz {
namespace {

constexpr int kMaxFallbacks = 24;                       // faces added per font
constexpr long kMaxFontFileBytes = 256L * 1024 * 1024;  // a font file read whole into memory

std::shared_ptr<const std::vector<uint8_t>> ReadFontFile(const char* path) {
  std::FILE* f = std::fopen(path, "rb");
  if (!f) return nullptr;
  std::shared_ptr<std::vector<uint8_t>> bytes;
  if (std::fseek(f, 0, SEEK_END) == 0) {
    const long n = std::ftell(f);
    if (n > 12 && n <= kMaxFontFileBytes && std::fseek(f, 0, SEEK_SET) == 0) {
      bytes = std::make_shared<std::vector<uint8_t>>((size_t)n);
      if (std::fread(bytes->data(), 1, (size_t)n, f) != (size_t)n) bytes.reset();
    }
  }
  std::fclose(f);
  return bytes;
}

bool IsColorFont(FcPattern* p) {
  FcBool color = FcFalse;
  return FcPatternGetBool(p, FC_COLOR, 0, &color) == FcResultMatch && color;
}

// The codepoints of `texts` that no face of `font` has yet.
std::set<uint32_t> MissingCodepoints(const FigureFont& font, const std::vector<std::string>& texts) {
  std::set<uint32_t> missing;
  std::vector<uint32_t> cps;
  for (const std::string& t : texts) {
    DecodeUtf8Lossy(t, &cps);
    for (uint32_t cp : cps)
      if (cp > 0x20 && cp != 0xFFFD && !missing.count(cp) && font.FaceFor(cp) < 0) missing.insert(cp);
  }
  return missing;
}

// Fonts in fontconfig's fallback order for sans-serif text covering `missing`; null when none.
FcFontSet* SortedFonts(const std::set<uint32_t>& missing) {
  FcPattern* pat = FcNameParse(reinterpret_cast<const FcChar8*>("sans-serif"));
  if (!pat) return nullptr;
  FcCharSet* cs = FcCharSetCreate();
  for (uint32_t cp : missing) FcCharSetAddChar(cs, cp);
  FcPatternAddCharSet(pat, FC_CHARSET, cs);
  FcCharSetDestroy(cs);
  FcConfigSubstitute(nullptr, pat, FcMatchPattern);
  FcDefaultSubstitute(pat);
  FcResult result = FcResultNoMatch;
  FcFontSet* set = FcFontSort(nullptr, pat, FcTrue, nullptr, &result);
  FcPatternDestroy(pat);
  return set;
}

}  // namespace

int AddSystemFallbacks(FigureFont* font, const std::vector<std::string>& texts) {
  std::set<uint32_t> missing = MissingCodepoints(*font, texts);
  if (missing.empty() || !FcInit()) return 0;
  FcFontSet* set = SortedFonts(missing);
  if (!set) return 0;
  int added = 0;
  std::set<std::pair<std::string, int>> tried;  // (file, face index) loaded or rejected
  for (int i = 0; i < set->nfont && !missing.empty() && added < kMaxFallbacks; ++i) {
    FcPattern* p = set->fonts[i];
    FcChar8* file = nullptr;
    FcCharSet* cs = nullptr;
    int index = 0;
    if (FcPatternGetString(p, FC_FILE, 0, &file) != FcResultMatch || IsColorFont(p)) continue;
    if (FcPatternGetCharSet(p, FC_CHARSET, 0, &cs) != FcResultMatch) continue;
    FcPatternGetInteger(p, FC_INDEX, 0, &index);
    bool useful = false;
    for (uint32_t cp : missing) useful = useful || FcCharSetHasChar(cs, cp);
    const auto key = std::make_pair(std::string(reinterpret_cast<const char*>(file)), index & 0xFFFF);
    if (!useful || !tried.insert(key).second) continue;
    auto bytes = ReadFontFile(key.first.c_str());
    if (!bytes || !font->AddFallback(bytes, key.second)) continue;  // e.g. a bitmap-only font
    ++added;
    for (auto it = missing.begin(); it != missing.end();) it = font->FaceFor(*it) >= 0 ? missing.erase(it) : ++it;
  }
  FcFontSetDestroy(set);
  return added;
}

}  // namespace attnviz
