// Fuzz target: the attention file (io/attention_file.h): LoadAttentionFile sniffs JSON (versions
// 1 and 2, BertViz data), NPZ and bare NPY. A file that loads must save as JSON and load again,
// and draw as an SVG (on each colour scale); every warning must print safely. (NPZ members are CRC-checked here, so the
// fuzzer mostly explores JSON and bare NPY; fuzz_npz covers the NPZ members without CRCs.)
#include <string>

#include "fuzz_common.h"
#include "io/attention_file.h"
#include "io/svg.h"
#include "io/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attnviz::AttentionFile f;
  if (!attnviz::LoadAttentionFile(data, size, &f)) return 0;
  ATTNVIZ_FUZZ_CHECK(!f.layers.empty());
  for (const std::string& w : f.warnings) (void)attnviz::PrintableText(w);
  const std::string json = attnviz::SaveAttentionJson(f, 0);
  attnviz::AttentionFile g;
  ATTNVIZ_FUZZ_CHECK(attnviz::LoadAttentionFile((const uint8_t*)json.data(), json.size(), &g).ok);
  const attnviz::AttentionFile::Head& head = f.layers[0].heads[0];
  std::string svg;
  attnviz::SvgHeatmapOptions o;
  o.max_cells = 1 << 16;
  o.scale = (attnviz::ColourScale)(size % 3);  // linear, per row or log, as the viewer's SVG may be
  (void)attnviz::HeatmapSvgString(head.weights, f.source_tokens, f.target_tokens, "viridis", o, &svg);
  return 0;
}
