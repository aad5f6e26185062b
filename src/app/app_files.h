// attnviz app: files in and out. Opening turns an attention file into an example; exporting
// queues a download that the platform layer saves (native) or hands to the browser (web).
#pragma once
#include <cstddef>
#include <string>

#include "core/status.h"

namespace attnviz {

struct AppState;

// Opens an attention file (JSON or NPZ, docs/FORMATS.md) as a new example and shows it (the grid
// for several maps). On failure the open example stays and the error is returned.
Status OpenAttentionFile(AppState* s, const std::string& name, const unsigned char* data, size_t size);
Status QueueSvgDownload(AppState* s);   // the current map as a standalone SVG heatmap
Status QueueJsonDownload(AppState* s);  // the current example as an attnviz attention JSON file

}  // namespace attnviz
