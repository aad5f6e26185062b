// attnviz figure: giflib encoder and reader (gif_codec.h).
#include "figure/gif_codec.h"

#include <gif_lib.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

namespace attnviz {
namespace {

uint32_t Key(const uint8_t* p) {
  return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

// The 256 most frequent colours of all frames (fewer if there are fewer).
std::vector<uint32_t> BuildPalette(const std::vector<RgbaImage>& frames) {
  std::unordered_map<uint32_t, uint64_t> count;
  for (const RgbaImage& f : frames)
    for (size_t i = 0; i < f.rgba.size(); i += 4) ++count[Key(&f.rgba[i])];
  std::vector<std::pair<uint64_t, uint32_t>> v;
  v.reserve(count.size());
  for (const auto& kv : count) v.push_back({kv.second, kv.first});
  const size_t n = std::min<size_t>(256, v.size());
  std::partial_sort(v.begin(), v.begin() + (std::ptrdiff_t)n, v.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  std::vector<uint32_t> pal;
  for (size_t i = 0; i < n; ++i) pal.push_back(v[i].second);
  return pal;
}

uint8_t Nearest(const std::vector<uint32_t>& pal, uint32_t c, std::unordered_map<uint32_t, uint8_t>* cache) {
  auto it = cache->find(c);
  if (it != cache->end()) return it->second;
  int best = 0;
  int64_t best_d = INT64_MAX;
  for (size_t i = 0; i < pal.size(); ++i) {
    const int dr = (int)(c >> 16) - (int)(pal[i] >> 16), dg = (int)((c >> 8) & 255) - (int)((pal[i] >> 8) & 255);
    const int db = (int)(c & 255) - (int)(pal[i] & 255);
    const int64_t d = (int64_t)dr * dr + (int64_t)dg * dg + (int64_t)db * db;
    if (d < best_d) best_d = d, best = (int)i;
  }
  (*cache)[c] = (uint8_t)best;
  return (uint8_t)best;
}

int WriteToVector(GifFileType* gif, const GifByteType* data, int n) {
  auto* out = static_cast<std::vector<uint8_t>*>(gif->UserData);
  out->insert(out->end(), data, data + n);
  return n;
}

struct ReadCursor {
  const uint8_t* data;
  size_t size, pos;
};
int ReadFromMemory(GifFileType* gif, GifByteType* buf, int n) {
  auto* c = static_cast<ReadCursor*>(gif->UserData);
  const size_t k = std::min((size_t)std::max(n, 0), c->size - c->pos);
  std::memcpy(buf, c->data + c->pos, k);
  c->pos += k;
  return (int)k;
}

Status GifError(const char* what, int code) {
  const char* msg = GifErrorString(code);
  return Status::Error(std::string("gif: ") + what + ": " + (msg ? msg : "unknown error"));
}

// NETSCAPE2.0 application extension: loop forever.
bool PutLoopExtension(GifFileType* gif) {
  static const GifByteType app[] = {'N', 'E', 'T', 'S', 'C', 'A', 'P', 'E', '2', '.', '0'};
  static const GifByteType loop[] = {1, 0, 0};
  return EGifPutExtensionLeader(gif, APPLICATION_EXT_FUNC_CODE) == GIF_OK &&
         EGifPutExtensionBlock(gif, sizeof app, app) == GIF_OK &&
         EGifPutExtensionBlock(gif, sizeof loop, loop) == GIF_OK && EGifPutExtensionTrailer(gif) == GIF_OK;
}

}  // namespace

Status EncodeGif(const std::vector<RgbaImage>& frames, const std::vector<int>& delays_cs, std::vector<uint8_t>* out) {
  if (frames.empty()) return Status::Error("gif: no frames");
  const int W = frames[0].width, H = frames[0].height;
  for (const RgbaImage& f : frames)
    if (f.width != W || f.height != H || W < 1 || H < 1 || W > 65535 || H > 65535)
      return Status::Error("gif: frames must share one size of 1..65535 pixels");
  std::vector<uint32_t> pal = BuildPalette(frames);
  while (pal.size() < 2) pal.push_back(0);
  int bits = 1;
  while ((1 << bits) < (int)pal.size()) ++bits;
  ColorMapObject* cmap = GifMakeMapObject(1 << bits, nullptr);
  if (!cmap) return Status::Error("gif: out of memory");
  for (int i = 0; i < (1 << bits); ++i) {
    const uint32_t c = i < (int)pal.size() ? pal[(size_t)i] : 0;
    cmap->Colors[i] = GifColorType{(GifByteType)(c >> 16), (GifByteType)((c >> 8) & 255), (GifByteType)(c & 255)};
  }
  out->clear();
  int err = 0;
  GifFileType* gif = EGifOpen(out, WriteToVector, &err);
  if (!gif) {
    GifFreeMapObject(cmap);
    return GifError("cannot start", err);
  }
  EGifSetGifVersion(gif, true);
  bool ok = EGifPutScreenDesc(gif, W, H, bits, 0, cmap) == GIF_OK && PutLoopExtension(gif);
  std::unordered_map<uint32_t, uint8_t> cache;
  std::vector<GifPixelType> line((size_t)W);
  for (size_t k = 0; ok && k < frames.size(); ++k) {
    GraphicsControlBlock gcb{DISPOSAL_UNSPECIFIED, false, k < delays_cs.size() ? delays_cs[k] : 10,
                             NO_TRANSPARENT_COLOR};
    GifByteType ext[4];
    const size_t n = EGifGCBToExtension(&gcb, ext);
    ok = EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, (int)n, ext) == GIF_OK &&
         EGifPutImageDesc(gif, 0, 0, W, H, false, nullptr) == GIF_OK;
    for (int y = 0; ok && y < H; ++y) {
      for (int x = 0; x < W; ++x) line[(size_t)x] = Nearest(pal, Key(frames[k].At(x, y)), &cache);
      ok = EGifPutLine(gif, line.data(), W) == GIF_OK;
    }
  }
  const int write_error = gif->Error;
  int close_error = 0;
  const bool closed = EGifCloseFile(gif, &close_error) == GIF_OK;
  GifFreeMapObject(cmap);
  if (!ok) return GifError("cannot encode", write_error);
  if (!closed) return GifError("cannot finish", close_error);
  return Status::Ok();
}

Status ReadGifInfo(const uint8_t* data, size_t size, GifInfo* out) {
  ReadCursor cur{data, size, 0};
  int err = 0;
  GifFileType* gif = DGifOpen(&cur, ReadFromMemory, &err);
  if (!gif) return GifError("cannot open", err);
  if (DGifSlurp(gif) != GIF_OK) {
    const int e = gif->Error;
    DGifCloseFile(gif, &err);
    return GifError("cannot read", e);
  }
  *out = GifInfo();
  out->width = gif->SWidth, out->height = gif->SHeight, out->frames = gif->ImageCount;
  for (int i = 0; i < gif->ImageCount; ++i) {
    GraphicsControlBlock gcb;
    out->delays_cs.push_back(DGifSavedExtensionToGCB(gif, i, &gcb) == GIF_OK ? gcb.DelayTime : 0);
    const SavedImage& im = gif->SavedImages[i];
    const ColorMapObject* cm = im.ImageDesc.ColorMap ? im.ImageDesc.ColorMap : gif->SColorMap;
    RgbaImage img;
    img.Resize(gif->SWidth, gif->SHeight, Rgb8{0, 0, 0});
    for (int y = 0; cm && y < im.ImageDesc.Height; ++y)
      for (int x = 0; x < im.ImageDesc.Width; ++x) {
        const int px = im.ImageDesc.Left + x, py = im.ImageDesc.Top + y;
        const int idx = im.RasterBits[(size_t)y * (size_t)im.ImageDesc.Width + (size_t)x];
        if (px >= img.width || py >= img.height || idx >= cm->ColorCount) continue;
        uint8_t* p = img.At(px, py);
        p[0] = cm->Colors[idx].Red, p[1] = cm->Colors[idx].Green, p[2] = cm->Colors[idx].Blue;
      }
    out->images.push_back(std::move(img));
  }
  DGifCloseFile(gif, &err);
  return Status::Ok();
}

}  // namespace attnviz
