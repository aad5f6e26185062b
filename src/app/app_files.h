// attnviz app: files in and out. Opening turns an attention file into an example; exporting
// queues a download that the platform layer saves (native) or hands to the browser (web).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "io/attention_loader.h"
#include "io/byte_source.h"

namespace attnviz {

struct AppState;
class JsonWriter;

// Where a load fed to the app is; the progress window says the word in brackets (describe's "stage"
// says "loading", "reading" or "opening").
enum class LoadStage {
  kHere,                     // the page feeds the file's bytes ["Loading"]
  kWorkerReads,              // the browser's load worker reads the file, progress only ["Reading"]
  kWorkerReadsAndHandsOver,  // ... and hands its document over while it reads (a bare .npy) ["Reading"]
  kWorkerRead,               // the worker has read every byte; its handover has not begun ["Reading"]
  kHandOver,                 // the worker's document is copied in; the bar shows its bytes ["Opening"]
};

// A file being read in pieces (docs/PERFORMANCE.md, "Big files"): the browser feeds it to the app
// (BeginFileLoad/FeedFileLoad/FinishFileLoad), the native loader thread only reports progress. The
// progress window shows while `active`; its Cancel button sets `cancel`.
struct FileLoad {
  std::string name;                    // shown in the progress window
  uint64_t received = 0;               // bytes read so far
  uint64_t total = 0;                  // the file's size (0: unknown)
  bool active = false;                 // the progress window shows
  bool in_app = false;                 // parsed here, piece by piece (else elsewhere: the native loader thread)
  bool cancel = false;                 // the user pressed Cancel
  LoadStage stage = LoadStage::kHere;  // in_app: who reads, and whether a handover is under way
  uint64_t handover_total = 0;         // about how many bytes that is
  float cancel_rect[4] = {};  // where the Cancel button was drawn (x0, y0, x1, y1 in CSS pixels), for describe()
  AttentionLoader loader;     // in_app: the parser the pieces go to

  bool WorkerReading() const {  // the progress shows the file's bytes as the worker reads them
    return stage == LoadStage::kWorkerReads || stage == LoadStage::kWorkerReadsAndHandsOver ||
           stage == LoadStage::kWorkerRead;
  }
  bool HandingOver() const { return stage == LoadStage::kWorkerReadsAndHandsOver || stage == LoadStage::kHandOver; }
};

// Opens an attention file (JSON or NPZ, version 1 or 2, or BertViz data; docs/FORMATS.md): one new
// example per attention set. It shows a cross-attention set first, playing its rows as the decoder
// emits them; else the grid for several maps. On failure the open example stays and the error is returned.
Status OpenAttentionFile(AppState* s, const std::string& name, const unsigned char* data, size_t size);
// The same for a document already read (the loader thread, or FinishFileLoad); its sets are moved.
Status OpenAttentionDocument(AppState* s, const std::string& name, AttentionDocument* doc);
// A safetensors file read lazily (docs/FORMATS.md): heads come into memory as the views draw them
// (app/lazy_maps.h). prefix: the file's header when the source is asynchronous (the browser's reads),
// else null (read through the source).
Status OpenLazyAttention(AppState* s, const std::string& name, std::unique_ptr<ByteSource> source,
                         const uint8_t* prefix, size_t n);
Status BeginFileLoad(AppState* s, const std::string& name, uint64_t total);  // replaces a load under way
// The next bytes; fails with the reader's message, or "cancelled: ..." after the user pressed Cancel.
Status FeedFileLoad(AppState* s, const unsigned char* data, size_t n);
Status FinishFileLoad(AppState* s);  // every byte is in: opens the document
// The browser's load worker reads the file (web/attnviz-load-worker.js): after BeginFileLoad, its
// progress (bytes read); fails with "cancelled: ..." once the user pressed Cancel. The progress
// window shows "Reading" and the file's bytes until the worker read them all, then "Opening" and
// the bytes handed over (a .npy is handed over while it is read: both at once).
Status ProgressFileLoad(AppState* s, uint64_t received);
// The worker hands its document over as a stream of about `total` bytes (the progress shows them),
// through FeedFileLoad and FinishFileLoad (io/attention_handover.h).
Status HandOverFileLoad(AppState* s, uint64_t total);
// During a handover: where the next bytes go when they belong to a matrix (0: feed them instead),
// and, once the caller copied n bytes there, the same bookkeeping as FeedFileLoad.
size_t FileLoadRoom(AppState* s, uint8_t** dst);
Status AdvanceFileLoad(AppState* s, size_t n);
void DrawLoadProgress(AppState* s);
// describe()'s "loading": {name, received, total, cancel} while a load is active, else null.
void DescribeFileLoads(AppState* s,
                       JsonWriter* w);  // the progress window with its Cancel button, while a load is active
// The other attention sets of the current example's file (indices into examples, in file order),
// empty when the file had one set.
std::vector<int> SiblingSets(AppState* s);
Status SelectSet(AppState* s, const std::string& which);  // by set name or index among its siblings
// A file name stem for exports of example `id`, safe on every file system: "file:attention.npz#
// decoder.self_attn" gives "attention-decoder.self_attn" (the opened file's name without its
// extension, then the set); characters file systems refuse become '_'; at most 120 bytes.
std::string ExportStem(const std::string& id);
// "-layer2-head5" for the map shown when the example has several, else "" (in export names: each
// head's figure gets a name of its own, and says which head it is).
std::string MapSuffix(const AppState* s);
std::string LayerSuffix(int layer);     // "-layer2": a figure of all of a layer's heads (MapSuffix's first part)
Status QueueSvgDownload(AppState* s);   // the current map as a standalone SVG heatmap
Status QueueJsonDownload(AppState* s);  // the current example as an attnviz attention JSON file
Status QueueCsvDownload(AppState* s);   // the current map as CSV, tokens as the header row and column
Status QueueNpyDownload(AppState* s);   // the current map as a float32 .npy [n_q, n_k]

}  // namespace attnviz
