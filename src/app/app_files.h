// attnviz app: files in and out. Opening turns an attention file into an example; exporting
// queues a download that the platform layer saves (native) or hands to the browser (web).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "core/status.h"

namespace attnviz {

struct AppState;

// Opens an attention file (JSON or NPZ, version 1 or 2, or BertViz data; docs/FORMATS.md): one new
// example per attention set. It shows a cross-attention set first, playing its rows as the decoder
// emits them; else the grid for several maps. On failure the open example stays and the error is returned.
Status OpenAttentionFile(AppState* s, const std::string& name, const unsigned char* data, size_t size);
// The other attention sets of the current example's file (indices into examples, in file order),
// empty when the file had one set.
std::vector<int> SiblingSets(AppState* s);
Status SelectSet(AppState* s, const std::string& which);  // by set name or index among its siblings
Status QueueSvgDownload(AppState* s);                     // the current map as a standalone SVG heatmap
Status QueueJsonDownload(AppState* s);
Status QueueCsvDownload(AppState* s);  // the current map as CSV, tokens as the header row and column
Status QueueNpyDownload(AppState* s);  // the current map as a float32 .npy [n_q, n_k]                    // the current
                                       // example as an attnviz attention JSON file

}  // namespace attnviz
