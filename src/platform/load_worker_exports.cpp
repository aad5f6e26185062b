// attnviz load worker (the browser): the worker module (attnviz-train.wasm, run by
// web/attnviz-load-worker.js in its own Web Worker) reads and validates an eager attention file
// (JSON, NPZ, NPY) with the viewer's readers, off the page's thread, then hands the document over
// (io/attention_handover.h): the page's viewer only copies its floats into matrices it allocated.
//
//   attnviz_parse_begin(total) / attnviz_parse_feed(p, n)... / attnviz_parse_finish()   "" or the error
//   attnviz_handover_parts()   the stream in parts: part 0 is the skeleton, then one per matrix
//   attnviz_handover_part(i), attnviz_handover_part_size(i)   where part i is and its bytes
//   attnviz_parse_reset()      frees the document
#include <emscripten/emscripten.h>

#include <string>
#include <vector>

#include "io/attention_handover.h"
#include "io/attention_loader.h"

namespace {
attnviz::AttentionLoader g_loader;
attnviz::AttentionDocument g_doc;
std::string g_head;  // part 0
std::vector<attnviz::HandoverBlock> g_blocks;
std::string g_error;

const char* Result(const attnviz::Status& st) {
  g_error = st.ok ? "" : st.message;
  return g_error.c_str();
}
}  // namespace

extern "C" EMSCRIPTEN_KEEPALIVE void attnviz_parse_reset() {
  g_loader = attnviz::AttentionLoader();
  g_doc = attnviz::AttentionDocument();
  std::string().swap(g_head);
  std::vector<attnviz::HandoverBlock>().swap(g_blocks);
}

extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_parse_begin(double total) {
  attnviz_parse_reset();
  return Result(g_loader.Begin(total > 0 ? (uint64_t)total : 0));
}

extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_parse_feed(const uint8_t* data, int n) {
  return Result(g_loader.Feed(data, n > 0 ? (size_t)n : 0));
}

extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_parse_finish() {
  const attnviz::Status st = g_loader.Finish(&g_doc);
  g_loader = attnviz::AttentionLoader();
  if (st) {
    g_head = attnviz::HandoverHead(g_doc);
    g_blocks = attnviz::HandoverBlocks(g_doc);
  }
  return Result(st);
}

extern "C" EMSCRIPTEN_KEEPALIVE int attnviz_handover_parts() {
  return g_head.empty() ? 0 : 1 + (int)g_blocks.size();
}

extern "C" EMSCRIPTEN_KEEPALIVE const void* attnviz_handover_part(int i) {
  if (i == 0) return g_head.data();
  return i > 0 && i <= (int)g_blocks.size() ? (const void*)g_blocks[(size_t)i - 1].data : nullptr;
}

extern "C" EMSCRIPTEN_KEEPALIVE double attnviz_handover_part_size(int i) {
  if (i == 0) return (double)g_head.size();
  return i > 0 && i <= (int)g_blocks.size() ? (double)g_blocks[(size_t)i - 1].count * sizeof(float) : 0.0;
}
