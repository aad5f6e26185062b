// attnviz load worker (the browser): the worker module (attnviz-train.wasm, run by
// web/attnviz-load-worker.js in its own Web Worker) reads and validates an eager attention file
// (JSON, NPZ, NPY) with the viewer's readers, off the page's thread, and hands the document over
// (io/attention_handover.h): the page's viewer only copies floats into matrices it allocated. A bare
// .npy is handed over as it streams in: its skeleton once its header is in, each head once it is
// decoded and validated, the warnings at the end; a little-endian float32 one (the usual) is not even
// kept here: its bytes are the handover's floats, so the worker passes the file's own pieces on
// (attnviz_parse_raw_offset) and only checks each head.
//
//   attnviz_parse_begin(total) / attnviz_parse_feed(p, n)... / attnviz_parse_finish()   "" or the error
//   attnviz_handover_ready()   how many parts of the stream can be sent now (0: none yet); part 0 is the
//                              skeleton, then one per matrix, then (once finished) the trailer
//   attnviz_handover_done()    1 once every part is ready (after attnviz_parse_finish)
//   attnviz_handover_part(i), attnviz_handover_part_size(i)   where part i is and its bytes
//   attnviz_handover_estimate()   the stream's bytes but the trailer's (for the progress)
//   attnviz_parse_raw_offset()  >= 0: the file's bytes from there on are the floats, to pass on as they
//                              are between part 0 and the trailer (the heads are not parts then)
//   attnviz_parse_reset()      frees everything
#include <emscripten/emscripten.h>

#include <string>
#include <vector>

#include "io/attention_handover.h"
#include "io/attention_loader.h"

namespace {
attnviz::AttentionLoader g_loader;
attnviz::AttentionDocument g_doc;
std::string g_head;                            // part 0 ("" until known)
std::vector<attnviz::HandoverBlock> g_blocks;  // parts 1..n
std::string g_trailer;                         // the last part, once finished
bool g_streaming = false;                      // g_blocks point into the loader's matrices as they fill
double g_raw_offset = -1;                      // >= 0: the file's floats are passed on as they are
double g_raw_bytes = 0;                        // how many bytes of floats that is
std::string g_error;

const char* Result(const attnviz::Status& st) {
  g_error = st.ok ? "" : st.message;
  return g_error.c_str();
}

// A bare .npy streaming in: its skeleton and its heads' addresses, as soon as its header is in.
void StartStreamingHandover() {
  if (!g_head.empty() || !g_loader.streaming()) return;
  g_head = g_loader.StreamHandoverHead();
  const size_t n = (size_t)g_loader.StreamHeadSize();
  g_streaming = true;
  if (g_loader.RawDataOffset() >= 0) {
    g_raw_offset = (double)g_loader.RawDataOffset();
    g_raw_bytes = (double)g_loader.StreamHeadCount() * (double)n * sizeof(float);
    return;
  }
  for (int64_t i = 0; i < g_loader.StreamHeadCount(); ++i) g_blocks.push_back({g_loader.StreamedHead(i), n});
}
}  // namespace

extern "C" EMSCRIPTEN_KEEPALIVE void attnviz_parse_reset() {
  g_loader = attnviz::AttentionLoader();
  g_doc = attnviz::AttentionDocument();
  std::string().swap(g_head);
  std::string().swap(g_trailer);
  std::vector<attnviz::HandoverBlock>().swap(g_blocks);
  g_streaming = false;
  g_raw_offset = -1;
  g_raw_bytes = 0;
}

extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_parse_begin(double total) {
  attnviz_parse_reset();
  g_loader.ForwardRawFloats();
  return Result(g_loader.Begin(total > 0 ? (uint64_t)total : 0));
}

extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_parse_feed(const uint8_t* data, int n) {
  const attnviz::Status st = g_loader.Feed(data, n > 0 ? (size_t)n : 0);
  if (st) StartStreamingHandover();
  return Result(st);
}

extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_parse_finish() {
  const std::vector<int64_t> clamped = g_loader.ClampedHeads();
  const attnviz::Status st = g_loader.Finish(&g_doc);  // streamed matrices move in, at the same addresses
  g_loader = attnviz::AttentionLoader();
  if (!st) return Result(st);
  if (!g_streaming) {
    g_head = attnviz::HandoverHead(g_doc);
    g_blocks = attnviz::HandoverBlocks(g_doc);
  }
  // Kept heads were clamped where they are; passed-on bytes were not: the receiver clamps those.
  g_trailer = attnviz::HandoverTrailer(g_doc, g_raw_offset >= 0 ? clamped : std::vector<int64_t>());
  return Result(st);
}

extern "C" EMSCRIPTEN_KEEPALIVE int attnviz_handover_done() {
  return g_trailer.empty() ? 0 : 1;
}

extern "C" EMSCRIPTEN_KEEPALIVE int attnviz_handover_ready() {
  if (g_head.empty()) return 0;
  if (!g_trailer.empty()) return 2 + (int)g_blocks.size();
  return 1 + (int)(g_streaming && g_raw_offset < 0 ? g_loader.StreamedHeads() : 0);
}

extern "C" EMSCRIPTEN_KEEPALIVE const void* attnviz_handover_part(int i) {
  if (i == 0) return g_head.data();
  if (i > 0 && i <= (int)g_blocks.size()) return g_blocks[(size_t)i - 1].data;
  return i == (int)g_blocks.size() + 1 ? g_trailer.data() : nullptr;
}

extern "C" EMSCRIPTEN_KEEPALIVE double attnviz_handover_part_size(int i) {
  if (i == 0) return (double)g_head.size();
  if (i > 0 && i <= (int)g_blocks.size()) return (double)g_blocks[(size_t)i - 1].count * sizeof(float);
  return i == (int)g_blocks.size() + 1 ? (double)g_trailer.size() : 0.0;
}

extern "C" EMSCRIPTEN_KEEPALIVE double attnviz_handover_estimate() {
  double n = (double)g_head.size() + g_raw_bytes;
  for (const attnviz::HandoverBlock& b : g_blocks) n += (double)b.count * sizeof(float);
  return n;
}

extern "C" EMSCRIPTEN_KEEPALIVE double attnviz_parse_raw_offset() {
  return g_raw_offset;
}
