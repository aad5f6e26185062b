// attnviz-cli render: one head of an attention file as a standalone SVG heatmap.
#include <cmath>
#include <cstdio>
#include <string>

#include "cli/cli_args.h"
#include "cli/commands.h"
#include "core/colormap.h"
#include "io/attention_file.h"
#include "io/file_util.h"
#include "io/svg.h"

namespace attnviz {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "attnviz-cli render: %s\n", message.c_str());
  return kExitError;
}

int RunRender(int argc, char** argv) {
  std::string in_path, svg_path, colormap = "greys", title;
  int layer = 0, head = 0;
  float cell = 24.0f, vmax = NAN;
  bool values = false, no_colorbar = false;
  ArgParser args("render",
                 "Writes one head (or the mean of a layer's heads) of an attention file as an SVG heatmap:\n"
                 "source tokens along the top, target tokens down the left.");
  args.String("--in", &in_path, "FILE", "attention file (.json, .npz, .npy, or attend output)", true);
  args.String("--svg", &svg_path, "OUT.svg", "where to write the SVG", true);
  args.Int("--layer", &layer, "L", "layer index (default 0)");
  args.Int("--head", &head, "H", "head index (default 0; -1 = mean of the layer's heads)");
  args.String("--colormap", &colormap, "NAME", "greys (default) | viridis | magma | diverging");
  args.Flag("--values", &values, "print each weight in its cell");
  args.Float("--cell", &cell, "PX", "cell size in px (default 24)");
  args.Float("--vmax", &vmax, "V", "value drawn at the top of the colormap (default: the matrix maximum)");
  args.String("--title", &title, "TEXT", "caption above the heatmap");
  args.Flag("--no-colorbar", &no_colorbar, "leave out the colour bar");
  int rc = args.Parse(argc, argv);
  if (rc >= 0) return rc;
  if (!FindColormap(colormap.c_str()))
    return args.UsageError("unknown --colormap '" + colormap + "' (greys, viridis, magma, diverging)");
  if (!(cell >= 2.0f && cell <= 512.0f)) return args.UsageError("--cell must be between 2 and 512");

  std::vector<uint8_t> bytes;
  Status st = ReadFileBytes(in_path, &bytes);
  if (!st) return Fail(st.message);
  AttentionFile f;
  if (!(st = LoadAttentionFile(bytes.data(), bytes.size(), &f))) return Fail(in_path + ": " + st.message);
  for (const std::string& w : f.warnings) std::fprintf(stderr, "attnviz-cli render: warning: %s\n", w.c_str());
  if (layer < 0 || layer >= (int)f.layers.size())
    return Fail("--layer " + std::to_string(layer) + " is out of range (the file has " +
                std::to_string(f.layers.size()) + " layers)");
  const AttentionFile::Layer& L = f.layers[(size_t)layer];
  if (head < -1 || head >= (int)L.heads.size())
    return Fail("--head " + std::to_string(head) + " is out of range (layer " + std::to_string(layer) + " has " +
                std::to_string(L.heads.size()) + " heads; -1 = mean)");
  MatrixRM w;
  if (head >= 0) {
    w = L.heads[(size_t)head].weights;
  } else {
    w = MatrixRM::Zero(L.heads[0].weights.rows(), L.heads[0].weights.cols());
    for (const auto& h : L.heads) w += h.weights;
    w /= (float)L.heads.size();
  }
  SvgHeatmapOptions o;
  o.cell_size = cell;
  o.vmax = vmax;
  o.show_values = values;
  o.colorbar = !no_colorbar;
  o.title = title;
  const std::string svg = HeatmapSvg(w, f.source_tokens, f.target_tokens, colormap, o);
  if (!(st = WriteFileString(svg_path, svg))) return Fail(st.message);
  std::printf("render: layer %d \"%s\", %s, %dx%d, %s -> %s (%zu bytes)\n", layer, L.name.c_str(),
              head >= 0 ? ("head " + std::to_string(head) + " \"" + L.heads[(size_t)head].name + "\"").c_str()
                        : "mean of heads",
              (int)w.rows(), (int)w.cols(), colormap.c_str(), svg_path.c_str(), svg.size());
  return kExitOk;
}

}  // namespace
}  // namespace attnviz

ATTNVIZ_CLI_COMMAND(render, "one head of an attention file as a standalone SVG heatmap", attnviz::RunRender)
