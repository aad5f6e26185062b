// attnviz render: token labels in any script, as textures. The embedded UI font covers Latin,
// Greek and Cyrillic; every other label (CJK, emoji, Arabic, Hebrew, Devanagari, Thai, combining
// marks) is rasterised whole by the platform (a 2D canvas in the browser, FreeType + HarfBuzz +
// fontconfig natively), so shaping, right-to-left order and font fallback come from the system.
//
//   LabelBitmap      straight-alpha RGBA8 pixels of one label, rows top to bottom
//   LabelRasterizer  the platform's back end: text -> LabelBitmap (one per platform, src/platform/)
//   LabelTexture     a cached label on the GPU: GL texture and its size in pixels
//   LabelCache       LRU of LabelTextures keyed by (text, size, colour, rotation), bounded in bytes
//                    and entries; at most a few new labels are rasterised per frame (every one in
//                    the frame a PNG export draws)
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnviz {

struct LabelBitmap {
  int width = 0, height = 0;  // pixels
  float baseline = 0;         // pixels from the top to the baseline
  std::vector<uint8_t> rgba;  // width * height * 4, straight (not premultiplied) alpha
};

class LabelRasterizer {
 public:
  virtual ~LabelRasterizer() = default;
  // Draws utf8 on one line, px pixels per em, in colour rgba (ImU32 order: 0xAABBGGRR), onto a
  // transparent bitmap just large enough. False when it cannot (nothing is drawn then).
  virtual bool Rasterize(const std::string& utf8, float px, uint32_t rgba, LabelBitmap* out) = 0;
  virtual const char* Name() const = 0;  // "canvas", "freetype": for describe()
};

// Rotates a bitmap a quarter turn counter-clockwise (text then reads bottom to top).
void RotateQuarterCcw(const LabelBitmap& in, LabelBitmap* out);

struct LabelTexture {
  unsigned int tex = 0;       // GL texture (RGBA8, linear)
  int width = 0, height = 0;  // pixels, after rotation
  float baseline = 0;         // horizontal labels: pixels from the top to the baseline
};

struct LabelCacheStats {
  int entries = 0;          // labels on the GPU
  size_t bytes = 0;         // their RGBA bytes
  int rasterised = 0;       // labels rasterised since Init
  int evicted = 0;          // labels dropped by the LRU bound
  int failed = 0;           // labels the back end could not draw
  int deferred = 0;         // labels the latest frame asked for beyond its rasterising budget
  double frame_ms_max = 0;  // the most rasterising time one frame spent (budget: kFrameMs)
  double label_ms_max = 0;  // the slowest single label (a frame may overrun by one label)
};

class LabelCache {
 public:
  // rasterizer may be null (headless): Get then always returns null. No GL calls when null.
  void Init(LabelRasterizer* rasterizer, size_t max_bytes = 24u << 20, int max_entries = 4096, int per_frame = 24);
  void Shutdown();  // frees every texture
  // Once per frame, before any Get: resets the per-frame budget. whole: no budget this frame (a
  // figure exported at another scale needs all its labels anew, and a later frame would be too late).
  void BeginFrame(bool whole = false);
  // The label, rasterised on first use (within this frame's budget: otherwise null, and Pending()
  // says a later frame will do it). quarter_turns: 0 horizontal, 1 rotated counter-clockwise.
  const LabelTexture* Get(const std::string& text, float px, uint32_t rgba, int quarter_turns);
  bool Pending() const { return deferred_ > 0; }  // labels waited for a budget this frame
  bool Available() const { return rasterizer_ != nullptr; }
  const char* BackendName() const { return rasterizer_ ? rasterizer_->Name() : "none"; }
  LabelCacheStats Stats() const;

 private:
  struct Entry {
    std::string key;
    LabelTexture tex;
    size_t bytes = 0;
    long last_frame = 0;
  };
  void Evict();
  LabelRasterizer* rasterizer_ = nullptr;
  std::list<Entry> lru_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  std::unordered_map<std::string, int> failed_;  // keys the back end refused (not retried)
  size_t max_bytes_ = 0, bytes_ = 0;
  int max_entries_ = 0, per_frame_ = 0, budget_ = 0, deferred_ = 0;
  static constexpr double kFrameMs = 4.0;  // rasterising time a frame may spend on new labels
  double spent_ms_ = 0;                    // spent so far this frame
  bool whole_ = false;                     // no budget this frame (BeginFrame)
  long frame_ = 0;
  LabelCacheStats stats_;
  LabelBitmap scratch_, rotated_;  // reused: no allocation per label once they have grown
  std::string key_;                // reused key buffer
};

}  // namespace attnviz
