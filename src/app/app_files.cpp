// Files in and out: attention files become examples; SVG and JSON exports become downloads.
#include "app/app_files.h"

#include <algorithm>

#include "app/app_state.h"
#include "io/attention_file.h"
#include "io/svg.h"

namespace attnviz {

namespace {

// An attention file as an example: maps[l * heads + h]; a layer with fewer heads gets zero maps.
Example ExampleFromFile(const std::string& name, const AttentionFile& file) {
  Example ex;
  ex.id = "file:" + name;
  ex.title = name;
  ex.layers = (int)file.layers.size();
  ex.heads = 1;
  for (const auto& l : file.layers) ex.heads = std::max(ex.heads, (int)l.heads.size());
  ex.description = std::to_string(ex.layers) + " layer(s) x " + std::to_string(ex.heads) + " head(s), " +
                   std::to_string(file.NumQueries()) + " x " + std::to_string(file.NumKeys()) + " tokens, from " +
                   name + ".";
  for (const std::string& w : file.warnings) ex.description += "\nWarning: " + w;
  ex.maps.resize((size_t)ex.layers * ex.heads);
  for (int l = 0; l < ex.layers; ++l) {
    for (int h = 0; h < ex.heads; ++h) {
      AttentionMap& m = ex.maps[(size_t)l * ex.heads + h];
      m.source_tokens = file.source_tokens;
      m.target_tokens = file.target_tokens;
      const auto& layer = file.layers[l];
      if (h < (int)layer.heads.size()) {
        m.name = layer.name + " / " + layer.heads[h].name;
        m.weights = layer.heads[h].weights;
      } else {
        m.name = layer.name + " / (no head " + std::to_string(h) + ")";
        m.weights = MatrixRM::Zero(file.NumQueries(), file.NumKeys());
      }
      m.version = 1;
    }
  }
  return ex;
}

// A file name made of the example id, safe on every file system.
std::string DownloadName(const std::string& id, const char* extension) {
  std::string name = id + extension;
  for (char& c : name)
    if (c == ':' || c == '/' || c == '\\' || c == ' ') c = '_';
  return name;
}

void QueueDownload(AppState* s, const std::string& name, const char* mime, const std::string& text) {
  PendingDownload d;
  d.name = name;
  d.mime = mime;
  d.bytes.assign(text.begin(), text.end());
  s->downloads.push_back(std::move(d));
  s->Notify("saved " + name, false);
}

}  // namespace

Status OpenAttentionFile(AppState* s, const std::string& name, const unsigned char* data, size_t size) {
  AttentionFile file;
  const Status st = LoadAttentionFile(data, size, &file);
  if (!st) return Status::Error("could not open " + name + ": " + st.message);
  const int previous = s->current;
  s->examples.push_back(ExampleFromFile(name, file));
  const Status selected = SelectExample(s, (int)s->examples.size() - 1);
  if (!selected) {
    s->examples.pop_back();
    s->current = std::min(previous, (int)s->examples.size() - 1);
    return Status::Error("could not open " + name + ": " + selected.message);
  }
  if (s->Current().maps.size() > 1) (void)SelectView(s, "grid");  // the registry always has it
  s->Notify("opened " + name + (file.warnings.empty() ? "" : " (with warnings, see the sidebar)"), false);
  return Status::Ok();
}

Status QueueSvgDownload(AppState* s) {
  const AttentionMap& m = s->CurrentMap();
  SvgHeatmapOptions opt;
  opt.vmin = s->style.vmin;
  opt.vmax = s->style.vmax;
  opt.show_values = s->style.show_numbers && m.weights.size() <= 400;
  opt.title = s->Current().title + (m.name.empty() ? "" : " - " + m.name);
  const std::string svg = HeatmapSvg(m.weights, m.source_tokens, m.target_tokens, ColormapName(s->style.colormap), opt);
  QueueDownload(s, DownloadName(s->Current().id, ".svg"), "image/svg+xml", svg);
  return Status::Ok();
}

Status QueueJsonDownload(AppState* s) {
  const Example& ex = s->Current();
  AttentionFile file;
  file.source_tokens = ex.maps[0].source_tokens;
  file.target_tokens = ex.maps[0].target_tokens;
  for (int l = 0; l < ex.layers; ++l) {
    AttentionFile::Layer layer;
    layer.name = "layer " + std::to_string(l);
    for (int h = 0; h < ex.heads && (size_t)(l * ex.heads + h) < ex.maps.size(); ++h) {
      const AttentionMap& m = ex.maps[(size_t)l * ex.heads + h];
      layer.heads.push_back({m.name.empty() ? "head " + std::to_string(h) : m.name, m.weights});
    }
    file.layers.push_back(std::move(layer));
  }
  const std::string json = SaveAttentionJson(file);
  QueueDownload(s, DownloadName(ex.id, ".json"), "application/json", json);
  return Status::Ok();
}

}  // namespace attnviz
