// What a frame draws, as 64 bits (frame_fingerprint.h).
#include "app/frame_fingerprint.h"

#include <cstring>

#include "imgui.h"

namespace attnviz {

namespace {

// A running 64-bit hash (multiply and xor-shift over 8-byte words): a fingerprint, not a checksum
// against an adversary; the frame's inputs come from the app itself.
struct FrameHash {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  void Word(uint64_t w) {
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  void Bytes(const void* p, size_t n) {
    const unsigned char* b = static_cast<const unsigned char*>(p);
    for (; n >= 8; b += 8, n -= 8) {
      uint64_t w;
      std::memcpy(&w, b, 8);
      Word(w);
    }
    uint64_t tail = 0;
    if (n) std::memcpy(&tail, b, n);
    Word(tail ^ ((uint64_t)n << 56));
  }
  void Floats(const float* f, int n) { Bytes(f, sizeof(float) * (size_t)n); }
  void Texture(const HeatmapTexture* t) {
    Word(t ? t->weights : 0);
    Word(t ? t->version : 0);
    Word(t ? ((uint64_t)(uint32_t)t->rows << 32 | (uint32_t)t->cols) : 0);
  }
  void DrawData(const ImDrawData& dd) {
    const float frame[6] = {dd.DisplayPos.x,  dd.DisplayPos.y,       dd.DisplaySize.x,
                            dd.DisplaySize.y, dd.FramebufferScale.x, dd.FramebufferScale.y};
    Floats(frame, 6);
    Word((uint64_t)dd.CmdListsCount);
    for (int i = 0; i < dd.CmdListsCount; ++i) {
      const ImDrawList* l = dd.CmdLists[i];
      Bytes(l->VtxBuffer.Data, sizeof(ImDrawVert) * (size_t)l->VtxBuffer.Size);
      Bytes(l->IdxBuffer.Data, sizeof(ImDrawIdx) * (size_t)l->IdxBuffer.Size);
      for (const ImDrawCmd& c : l->CmdBuffer) {
        Floats(&c.ClipRect.x, 4);
        Word((uint64_t)(uintptr_t)c.TextureId);
        Word((uint64_t)c.VtxOffset << 32 | c.IdxOffset);
        Word(c.ElemCount);
        Word((uint64_t) reinterpret_cast<uintptr_t>(c.UserCallback));
        Word((uint64_t)(uintptr_t)c.UserCallbackData);
      }
    }
  }
};

}  // namespace

uint64_t FingerprintFrame(const ImDrawData* draw_data, const std::vector<HeatmapCallbackData>& heatmaps,
                          uint64_t extra) {
  FrameHash f;
  if (draw_data) f.DrawData(*draw_data);
  // A heatmap is drawn by a callback from its parameters and textures, which the draw data only
  // points at (the callback data's address is the same frame after frame).
  for (const HeatmapCallbackData& cb : heatmaps) {
    const HeatmapDraw& d = cb.draw;
    f.Texture(d.tex);
    f.Texture(d.tex_b);
    const float params[] = {d.frame_mix, d.vmin, d.vmax};
    f.Floats(params, 3);
    f.Word((uint64_t)d.scale << 32 | (uint32_t)d.colormap);
    f.Word((uint64_t)(uint32_t)d.rows_shown);
    f.Floats(d.view, 4);
    f.Floats(d.empty_rgba, 4);
    f.Floats(d.grid_rgba, 4);
    f.Floats(cb.rect_imgui, 4);
    f.Floats(cb.clip_imgui, 4);
    f.Word((uint64_t)(uint32_t)d.layer << 32 | (uint32_t)d.layer_rows << 16 | (uint32_t)d.layer_cols);
    f.Word(d.layer_version);
  }
  f.Word(extra);
  return f.h;
}

}  // namespace attnviz
