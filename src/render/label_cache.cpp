#include "render/label_cache.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "render/gl.h"

namespace attnviz {

void RotateQuarterCcw(const LabelBitmap& in, LabelBitmap* out) {
  // in (x, y) -> out (y, W - 1 - x): out is H wide and W tall.
  out->width = in.height;
  out->height = in.width;
  out->baseline = in.baseline;  // now from the left edge
  out->rgba.resize((size_t)in.width * in.height * 4);
  for (int y = 0; y < in.height; ++y)
    for (int x = 0; x < in.width; ++x)
      std::memcpy(&out->rgba[((size_t)(in.width - 1 - x) * out->width + y) * 4],
                  &in.rgba[((size_t)y * in.width + x) * 4], 4);
}

void LabelCache::Init(LabelRasterizer* rasterizer, size_t max_bytes, int max_entries, int per_frame) {
  Shutdown();
  rasterizer_ = rasterizer;
  max_bytes_ = max_bytes;
  max_entries_ = max_entries;
  per_frame_ = per_frame;
  index_.reserve((size_t)max_entries + 1);
}

void LabelCache::Shutdown() {
  for (Entry& e : lru_)
    if (e.tex.tex) glDeleteTextures(1, &e.tex.tex);
  lru_.clear();
  index_.clear();
  failed_.clear();
  bytes_ = 0;
}

void LabelCache::BeginFrame(bool whole) {
  ++frame_;
  budget_ = per_frame_;
  whole_ = whole;
  spent_ms_ = 0;
  deferred_ = 0;
}

LabelCacheStats LabelCache::Stats() const {
  LabelCacheStats s = stats_;
  s.entries = (int)lru_.size();
  s.bytes = bytes_;
  s.deferred = deferred_;
  return s;
}

// Drops least recently used labels until the bounds hold; never one drawn this frame (its texture
// is still referenced by the frame's draw list), so a frame may exceed the bound by what it shows.
void LabelCache::Evict() {
  while (!lru_.empty() && (bytes_ > max_bytes_ || (int)lru_.size() > max_entries_)) {
    Entry& e = lru_.back();
    if (e.last_frame == frame_) break;
    if (e.tex.tex) glDeleteTextures(1, &e.tex.tex);
    bytes_ -= e.bytes;
    index_.erase(e.key);
    lru_.pop_back();
    stats_.evicted++;
  }
}

const LabelTexture* LabelCache::Get(const std::string& text, float px, uint32_t rgba, int quarter_turns) {
  if (!rasterizer_ || text.empty()) return nullptr;
  char head[48];
  std::snprintf(head, sizeof(head), "%.2f|%08x|%d|", px, rgba, quarter_turns & 1);
  key_.assign(head);
  key_ += text;
  auto it = index_.find(key_);
  if (it != index_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second);  // most recent first
    it->second->last_frame = frame_;
    return &it->second->tex;
  }
  if (failed_.count(key_)) return nullptr;
  // A count and a time budget: a slow rasteriser (a canvas on a software renderer, a font's first
  // use) defers the rest of the frame's new labels instead of stretching the frame.
  if (!whole_ && (budget_ <= 0 || spent_ms_ >= kFrameMs)) {
    deferred_++;
    return nullptr;
  }
  budget_--;
  const auto t0 = std::chrono::steady_clock::now();
  const bool ok = rasterizer_->Rasterize(text, px, rgba, &scratch_);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  spent_ms_ += ms;
  stats_.label_ms_max = std::max(stats_.label_ms_max, ms);
  stats_.frame_ms_max = std::max(stats_.frame_ms_max, spent_ms_);
  if (!ok || scratch_.width <= 0 || scratch_.height <= 0 ||
      scratch_.rgba.size() != (size_t)scratch_.width * scratch_.height * 4) {
    stats_.failed++;
    if (failed_.size() < 4096) failed_.emplace(key_, 1);
    return nullptr;
  }
  // Fully transparent pixels take the text colour, so that linear filtering at the label's edge
  // blends towards the text and not towards black.
  for (size_t i = 0; i + 3 < scratch_.rgba.size(); i += 4) {
    if (scratch_.rgba[i + 3] != 0) continue;
    scratch_.rgba[i] = rgba & 0xFF;
    scratch_.rgba[i + 1] = (rgba >> 8) & 0xFF;
    scratch_.rgba[i + 2] = (rgba >> 16) & 0xFF;
  }
  const LabelBitmap* bm = &scratch_;
  if (quarter_turns & 1) {
    RotateQuarterCcw(scratch_, &rotated_);
    bm = &rotated_;
  }
  Entry e;
  e.key = key_;
  e.tex.width = bm->width;
  e.tex.height = bm->height;
  e.tex.baseline = bm->baseline;
  e.bytes = bm->rgba.size();
  e.last_frame = frame_;
  glGenTextures(1, &e.tex.tex);
  glBindTexture(GL_TEXTURE_2D, e.tex.tex);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, bm->width, bm->height, 0, GL_RGBA, GL_UNSIGNED_BYTE, bm->rgba.data());
  stats_.rasterised++;
  bytes_ += e.bytes;
  lru_.push_front(std::move(e));
  index_[lru_.front().key] = lru_.begin();
  Evict();
  return &lru_.front().tex;
}

}  // namespace attnviz
