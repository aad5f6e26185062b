// Lazily read files in the browser (docs/PERFORMANCE.md, "Big files"): a ByteSource whose reads are
// HTTP Range requests or File.slice() calls made by web/attnviz-lazy.js. StartRead asks the page for a
// range; the page writes the bytes into the WASM heap at dst (unless the read was cancelled or the
// source closed meanwhile) and reports through attnviz_lazy_done; LazyAttentionFile::Pump collects
// the completions (TakeCompletion).
#include <emscripten.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/app.h"
#include "io/byte_source.h"
#include "io/file_util.h"
#include "io/lazy_attention.h"
#include "io/memory_budget.h"
#include "platform/web_exports.h"

// clang-format off
// The page's reader `source` (Module.attnvizReaders[source], attnviz-lazy.js).
EM_JS(void, attnviz_js_read, (int source, double ticket, double offset, double size, unsigned char* dst, int bulk), {
  Module["attnvizRead"](source, ticket, offset, size, dst, !!bulk);
});
EM_JS(void, attnviz_js_cancel, (int source, double ticket), {
  Module["attnvizCancel"](source, ticket);
});
EM_JS(void, attnviz_js_close, (int source), {
  Module["attnvizClose"](source);
});
// clang-format on

namespace {

class JsSource;
std::map<int, JsSource*> g_sources;  // the page's readers by id, while their file is open

class JsSource : public attnviz::ByteSource {
 public:
  JsSource(int id, uint64_t size) : id_(id), size_(size) { g_sources[id] = this; }
  ~JsSource() override {
    g_sources.erase(id_);
    attnviz_js_close(id_);  // reads still under way must not write into memory freed now
  }
  uint64_t Size() const override { return size_; }
  bool Asynchronous() const override { return true; }
  attnviz::Status Read(uint64_t, uint64_t, uint8_t*) override {
    return attnviz::Status::Error("the browser reads this file asynchronously");
  }
  void StartRead(uint64_t ticket, uint64_t offset, uint64_t size, uint8_t* dst, bool bulk) override {
    attnviz_js_read(id_, (double)ticket, (double)offset, (double)size, dst, bulk ? 1 : 0);
  }
  void CancelRead(uint64_t ticket) override { attnviz_js_cancel(id_, (double)ticket); }
  bool TakeCompletion(uint64_t* ticket, attnviz::Status* st) override {
    if (done_.empty()) return false;
    *ticket = done_.front().first;
    *st = std::move(done_.front().second);
    done_.pop_front();
    return true;
  }
  void Done(uint64_t ticket, attnviz::Status st) { done_.emplace_back(ticket, std::move(st)); }

 private:
  int id_;
  uint64_t size_;
  std::deque<std::pair<uint64_t, attnviz::Status>> done_;
};

// A synchronous source over the ranges of a file the page has read so far (attnviz_npz_prefix): a
// read within them is answered, one outside them fails and says which range it needed.
class RangesSource : public attnviz::ByteSource {
 public:
  RangesSource(uint64_t size, int count, const double* table, const unsigned char* data) : size_(size) {
    for (int i = 0; i < count; ++i) {
      const uint64_t offset = (uint64_t)table[2 * i], n = (uint64_t)table[2 * i + 1];
      ranges_.push_back({offset, n, data});
      data += n;
    }
  }
  uint64_t Size() const override { return size_; }
  attnviz::Status Read(uint64_t offset, uint64_t n, uint8_t* dst) override {
    for (const Range& r : ranges_)
      if (offset >= r.offset && offset - r.offset <= r.size && n <= r.size - (offset - r.offset)) {
        std::memcpy(dst, r.data + (offset - r.offset), (size_t)n);
        return attnviz::Status::Ok();
      }
    if (!need_size_) need_offset_ = offset, need_size_ = n;
    return attnviz::Status::Error("the page has not read these bytes yet");
  }
  uint64_t need_offset_ = 0, need_size_ = 0;  // the first range asked for and not there

 private:
  struct Range {
    uint64_t offset, size;
    const unsigned char* data;
  };
  uint64_t size_;
  std::vector<Range> ranges_;
};

std::vector<uint8_t> g_npz_prefix;  // attnviz_npz_prefix's descriptor

}  // namespace

extern "C" {

// An .npz of `size` bytes the page may read lazily (io/lazy_npz.cpp), from the ranges of it read so
// far: count of them, table[2 i] their offsets and table[2 i + 1] their sizes, their bytes one after
// another at data. Returns "need OFFSET SIZE" (read that range too and ask again), "whole" (read it
// whole: small enough, or not an attention file the lazy reader takes, whose reader then says why),
// "ok" (the descriptor for attnviz_lazy_open is at attnviz_npz_prefix_data, _size bytes), or why not.
EMSCRIPTEN_KEEPALIVE const char* attnviz_npz_prefix(double size, int count, const double* table,
                                                    const unsigned char* data) {
  static std::string result;
  RangesSource source(size > 0 ? (uint64_t)size : 0, count, table, data);
  const bool big = source.Size() > std::min<uint64_t>(attnviz::kMaxFileBytes, attnviz::DefaultMemoryBudget());
  const attnviz::Status st = attnviz::ReadLazyNpzPrefix(&source, &g_npz_prefix);
  if (source.need_size_)
    result = "need " + std::to_string(source.need_offset_) + " " + std::to_string(source.need_size_);
  else if (!st)
    result = big ? st.message : "whole";
  else
    result = big || attnviz::NpzOpensLazily(&source) ? "ok" : "whole";
  return result.c_str();
}
EMSCRIPTEN_KEEPALIVE const unsigned char* attnviz_npz_prefix_data() {
  return g_npz_prefix.data();
}
EMSCRIPTEN_KEEPALIVE int attnviz_npz_prefix_size() {
  return (int)g_npz_prefix.size();
}

// Opens a safetensors file the page reads for the viewer: its reader `source` (attnviz-lazy.js), its
// size, and its first bytes (at least the header). Returns "" or why not.
EMSCRIPTEN_KEEPALIVE const char* attnviz_lazy_open(const char* name, int source, double size,
                                                   const unsigned char* prefix, int n) {
  static std::string result;
  attnviz::App* app = attnviz::WebApp();
  if (!app) return "app not started";
  std::unique_ptr<attnviz::ByteSource> src(new JsSource(source, size > 0 ? (uint64_t)size : 0));
  result = app->OpenLazy(name ? name : "file", std::move(src), prefix, n > 0 ? (size_t)n : 0).message;
  return result.c_str();
}

// 1 when a file of `size` bytes whose first n bytes are `prefix` (at least a .npy file's header) is
// read lazily: a safetensors file, or a .npy too big to read whole (attnviz-lazy.js asks before it
// streams a .npy into the loader).
EMSCRIPTEN_KEEPALIVE int attnviz_opens_lazily(const unsigned char* prefix, int n, double size) {
  const uint64_t file_size = size > 0 ? (uint64_t)size : 0;
  if (!prefix || n <= 0) return 0;
  return attnviz::LooksLikeSafetensors(prefix, (size_t)n, file_size) ||
                 attnviz::NpyOpensLazily(prefix, (size_t)n, file_size)
             ? 1
             : 0;
}

// A read of reader `source` ended: error "" when its bytes are in place, else why not.
EMSCRIPTEN_KEEPALIVE void attnviz_lazy_done(int source, double ticket, const char* error) {
  const auto it = g_sources.find(source);
  if (it == g_sources.end()) return;  // its file was closed meanwhile
  it->second->Done((uint64_t)ticket, error && *error ? attnviz::Status::Error(error) : attnviz::Status::Ok());
}

// Decodes and installs what finished reading, for about budget_ms, between frames. 1 while there is more.
EMSCRIPTEN_KEEPALIVE int attnviz_lazy_work(double budget_ms) {
  attnviz::App* app = attnviz::WebApp();
  return app && app->WorkLazy(budget_ms) ? 1 : 0;
}

}  // extern "C"
