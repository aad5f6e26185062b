// Commands (from the embed API, tests and the URL), opened files, and the machine-readable
// description of the screen that browser tests check pixels against.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "app/app_state.h"
#include "app/views_extra.h"
#include "io/attention_file.h"
#include "io/json.h"
#include "io/svg.h"
#include "imgui.h"

namespace attnviz {
namespace {

void AppendEscaped(std::string* out, const std::string& s) { out->append(JsonEscape(s)); }

void AppendNumber(std::string* out, double v) {
  char buf[32];
  if (!std::isfinite(v)) v = 0;
  std::snprintf(buf, sizeof(buf), "%.7g", v);
  out->append(buf);
}

void AppendGeometry(std::string* out, const char* id, const HeatmapGeometry& g, const AttentionMap* map,
                    bool with_weights) {
  out->append("{\"id\":");
  AppendEscaped(out, id);
  out->append(",\"rect\":[");
  for (int i = 0; i < 4; ++i) {
    if (i) out->push_back(',');
    AppendNumber(out, g.rect[i]);
  }
  out->append("],\"view\":[");
  for (int i = 0; i < 4; ++i) {
    if (i) out->push_back(',');
    AppendNumber(out, g.view[i]);
  }
  out->append("],\"rows\":" + std::to_string(g.rows) + ",\"cols\":" + std::to_string(g.cols) +
              ",\"rows_shown\":" + std::to_string(g.rows_shown));
  if (with_weights && map && (size_t)map->weights.size() <= 4096) {
    out->append(",\"weights\":[");
    for (int i = 0; i < map->weights.size(); ++i) {
      if (i) out->push_back(',');
      AppendNumber(out, map->weights.data()[i]);
    }
    out->append("]");
  }
  out->append("}");
}

}  // namespace

void OpenAttentionFile(AppState* s, const std::string& name, const unsigned char* data, size_t size) {
  AttentionFile file;
  Status st = LoadAttentionFile(data, size, &file);
  if (!st) {
    s->Notify("could not open " + name + ": " + st.message, true);
    return;
  }
  Example ex;
  ex.id = "file:" + name;
  ex.title = name;
  ex.layers = (int)file.layers.size();
  ex.heads = 1;
  for (const auto& l : file.layers) ex.heads = std::max(ex.heads, (int)l.heads.size());
  ex.description = std::to_string(ex.layers) + " layer(s) x " + std::to_string(ex.heads) + " head(s), " +
                   std::to_string(file.NumQueries()) + " x " + std::to_string(file.NumKeys()) + " tokens, from " + name + ".";
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
  s->examples.push_back(std::move(ex));
  SelectExample(s, (int)s->examples.size() - 1);
  if (s->Current().maps.size() > 1) s->view = View::Grid;
  s->Notify("opened " + name + (file.warnings.empty() ? "" : " (with warnings, see the sidebar)"), false);
}

void QueueSvgDownload(AppState* s) {
  const AttentionMap& m = s->CurrentMap();
  SvgHeatmapOptions opt;
  opt.vmin = s->style.vmin;
  opt.vmax = s->style.vmax;
  opt.show_values = s->style.show_numbers && m.weights.size() <= 400;
  opt.title = s->Current().title + (m.name.empty() ? "" : " - " + m.name);
  const std::string svg = HeatmapSvg(m.weights, m.source_tokens, m.target_tokens, ColormapName(s->style.colormap), opt);
  PendingDownload d;
  d.name = s->Current().id + ".svg";
  for (char& c : d.name) if (c == ':' || c == '/' || c == ' ') c = '_';
  d.mime = "image/svg+xml";
  d.bytes.assign(svg.begin(), svg.end());
  s->downloads.push_back(std::move(d));
  s->Notify("saved " + s->downloads.back().name, false);
}

void QueueJsonDownload(AppState* s) {
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
  PendingDownload d;
  d.name = ex.id + ".json";
  for (char& c : d.name) if (c == ':' || c == '/' || c == ' ') c = '_';
  d.mime = "application/json";
  d.bytes.assign(json.begin(), json.end());
  s->downloads.push_back(std::move(d));
  s->Notify("saved " + s->downloads.back().name, false);
}

std::string RunCommand(AppState* s, const std::string& command) {
  std::istringstream in(command);
  std::string verb, arg;
  in >> verb;
  std::getline(in, arg);
  if (!arg.empty() && arg[0] == ' ') arg.erase(0, 1);
  if (verb == "example") {
    for (int i = 0; i < (int)s->examples.size(); ++i) {
      if (s->examples[i].id == arg) {
        SelectExample(s, i);
        return "";
      }
    }
    return "unknown example '" + arg + "'";
  }
  if (verb == "view") {
    View v;
    if (!ParseView(arg, &v)) return "unknown view '" + arg + "' (heatmap, lines, grid, steps, compare, translate, train)";
    s->view = v;
    return "";
  }
  if (verb == "colormap") {
    Colormap c;
    if (!ParseColormap(arg.c_str(), &c)) return "unknown colormap '" + arg + "' (greys, viridis, magma, diverging)";
    s->style.colormap = c;
    return "";
  }
  if (verb == "scale") {
    if (arg == "global") s->style.scale = ScaleMode::Global;
    else if (arg == "row") s->style.scale = ScaleMode::PerRow;
    else if (arg == "log") s->style.scale = ScaleMode::Log;
    else return "unknown scale '" + arg + "' (global, row, log)";
    return "";
  }
  if (verb == "step") {
    char* end = nullptr;
    const long k = std::strtol(arg.c_str(), &end, 10);
    if (arg.empty() || *end) return "step needs a number";
    s->timeline.playing = false;
    s->timeline.position = std::min<float>(s->timeline.Max(), std::max(0L, k));
    return "";
  }
  if (verb == "play") {
    s->timeline.Play();
    return "";
  }
  if (verb == "pause") {
    s->timeline.playing = false;
    return "";
  }
  if (verb == "map") {
    char* end = nullptr;
    const long k = std::strtol(arg.c_str(), &end, 10);
    if (arg.empty() || *end || k < 0 || k >= (long)s->Current().maps.size()) return "map index out of range";
    s->current_map = (int)k;
    return "";
  }
  if (verb == "save-svg") {
    QueueSvgDownload(s);
    return "";
  }
  if (verb == "save-json") {
    QueueJsonDownload(s);
    return "";
  }
  if (verb == "numbers") {
    s->style.show_numbers = arg != "off";
    return "";
  }
  bool handled = false;
  const std::string view_result = RunViewCommand(s, verb, arg, &handled);
  if (handled) return view_result;
  const std::string model_result = RunModelCommand(s, verb, arg);
  if (model_result != "?") return model_result;
  return "unknown command '" + verb + "'";
}

void DescribeState(AppState* s, std::string* out) {
  out->clear();
  out->append("{\"frame\":" + std::to_string(ImGui::GetFrameCount()));
  out->append(",\"example\":");
  AppendEscaped(out, s->Current().id);
  out->append(",\"view\":");
  AppendEscaped(out, ViewName(s->view));
  out->append(",\"map\":" + std::to_string(s->current_map));
  out->append(",\"colormap\":");
  AppendEscaped(out, ColormapName(s->style.colormap));
  out->append(",\"scale\":");
  AppendEscaped(out, s->style.scale == ScaleMode::Global ? "global" : (s->style.scale == ScaleMode::PerRow ? "row" : "log"));
  out->append(",\"vmin\":");
  AppendNumber(out, s->style.vmin);
  out->append(",\"vmax\":");
  AppendNumber(out, s->style.vmax);
  out->append(",\"dpi_scale\":");
  AppendNumber(out, s->dpi_scale);
  out->append(",\"frame_cpu_ms\":");
  AppendNumber(out, s->frame_cpu_ms_avg);
  out->append(",\"timeline\":{\"step\":" + std::to_string(s->timeline.Step()) + ",\"count\":" +
              std::to_string(s->timeline.count) + ",\"playing\":" + (s->timeline.playing ? "true" : "false") + "}");
  const AttentionMap& m = s->CurrentMap();
  out->append(",\"source_tokens\":[");
  for (size_t i = 0; i < m.source_tokens.size() && i < 512; ++i) {
    if (i) out->push_back(',');
    AppendEscaped(out, m.source_tokens[i]);
  }
  out->append("],\"target_tokens\":[");
  for (size_t i = 0; i < m.target_tokens.size() && i < 512; ++i) {
    if (i) out->push_back(',');
    AppendEscaped(out, m.target_tokens[i]);
  }
  out->append("],\"heatmaps\":[");
  bool first = true;
  auto add = [&](const char* id, const HeatmapGeometry& g, const AttentionMap* map) {
    if (!g.valid) return;
    if (!first) out->push_back(',');
    first = false;
    AppendGeometry(out, id, g, map, true);
  };
  if (s->view == View::Heatmap) add("main", s->main_view.geom, &m);
  if (s->view == View::Translate) add("translation", s->models->translate.view.geom, &s->models->translate.map);
  if (s->view == View::Train) add("probe", s->models->train.view.geom, &s->models->train.probe_a);
  if (s->view == View::Grid) {
    for (size_t i = 0; i < s->thumbs.size(); ++i) {
      const std::string id = "thumb" + std::to_string(i);
      add(id.c_str(), s->thumbs[i].geom, &s->Current().maps[i]);
    }
  }
  out->append("]");
  AppendViewDescription(s, out);
  DescribeModelPanels(s, out);
  out->append(",\"lut\":[");
  const uint8_t* lut = ColormapLut(s->style.colormap);
  for (int i = 0; i < kColormapLutSize; ++i) {
    if (i) out->push_back(',');
    out->append(std::to_string(lut[i * 4]) + "," + std::to_string(lut[i * 4 + 1]) + "," + std::to_string(lut[i * 4 + 2]));
  }
  out->append("]}");
}

}  // namespace attnviz
