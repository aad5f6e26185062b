// attnviz-cli render: one head of an attention file as a standalone SVG heatmap.
#include <cmath>
#include <cstdio>
#include <string>

#include "cli/cli_args.h"
#include "cli/cli_limits.h"
#include "cli/commands.h"
#include "core/colormap.h"
#include "io/attention_file.h"
#include "io/file_util.h"
#include "io/svg.h"

namespace attnviz {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "attnviz-cli render: %s\n", Printable(message).c_str());
  return kExitError;
}

struct RenderOptions {
  std::string in_path, svg_path, colormap = "greys", title;
  int layer = 0, head = 0, max_cells = 1 << 20;
  float cell = 24.0f, vmax = NAN;
  bool values = false, no_colorbar = false;
  CliLimits limits;
};

void DeclareFlags(ArgParser* args, RenderOptions* o) {
  args->String("--in", &o->in_path, "FILE", "attention file (.json, .npz, .npy, or attend output)", true);
  args->String("--svg", &o->svg_path, "OUT.svg", "where to write the SVG", true);
  args->Int("--layer", &o->layer, "L", "layer index (default 0)");
  args->Int("--head", &o->head, "H", "head index (default 0; -1 = mean of the layer's heads)");
  args->String("--colormap", &o->colormap, "NAME", "greys (default) | viridis | magma | diverging");
  args->Flag("--values", &o->values, "print each weight in its cell");
  args->Float("--cell", &o->cell, "PX", "cell size in px (default 24)");
  args->Float("--vmax", &o->vmax, "V", "value drawn at the top of the colormap (default: the matrix maximum)");
  args->String("--title", &o->title, "TEXT", "caption above the heatmap");
  args->Flag("--no-colorbar", &o->no_colorbar, "leave out the colour bar");
  args->Int("--max-cells", &o->max_cells, "N", "refuse maps with more cells (default 1048576, ~90 MiB of SVG)");
  DeclareLimitFlags(args, &o->limits);
}

// The chosen head's weights, or the mean of the layer's heads in *mean.
Status PickWeights(const AttentionFile& f, const RenderOptions& o, MatrixRM* mean, const MatrixRM** w) {
  if (o.layer < 0 || o.layer >= (int)f.layers.size())
    return Status::Error("--layer " + std::to_string(o.layer) + " is out of range (the file has " +
                         std::to_string(f.layers.size()) + " layers)");
  const AttentionFile::Layer& L = f.layers[(size_t)o.layer];
  if (o.head < -1 || o.head >= (int)L.heads.size())
    return Status::Error("--head " + std::to_string(o.head) + " is out of range (layer " + std::to_string(o.layer) +
                         " has " + std::to_string(L.heads.size()) + " heads; -1 = mean)");
  if (o.head >= 0) {
    *w = &L.heads[(size_t)o.head].weights;  // no copy
    return Status::Ok();
  }
  *mean = MatrixRM::Zero(L.heads[0].weights.rows(), L.heads[0].weights.cols());
  for (const auto& h : L.heads) *mean += h.weights;
  *mean /= (float)L.heads.size();
  *w = mean;
  return Status::Ok();
}

int RunRender(int argc, char** argv) {
  RenderOptions o;
  ArgParser args("render",
                 "Writes one head (or the mean of a layer's heads) of an attention file as an SVG heatmap:\n"
                 "source tokens along the top, target tokens down the left. The SVG is streamed to OUT.svg.");
  DeclareFlags(&args, &o);
  if (int rc = args.Parse(argc, argv); rc >= 0) return rc;
  if (int rc = ApplyLimitFlags(args, o.limits); rc >= 0) return rc;
  if (!FindColormap(o.colormap.c_str()))
    return args.UsageError("unknown --colormap '" + o.colormap + "' (greys, viridis, magma, diverging)");
  if (!(o.cell >= 2.0f && o.cell <= 512.0f)) return args.UsageError("--cell must be between 2 and 512");
  if (o.max_cells < 1) return args.UsageError("--max-cells must be >= 1");

  std::vector<uint8_t> bytes;
  Status st = ReadFileBytes(o.in_path, &bytes);
  if (!st) return Fail(st.message);
  AttentionFile f;
  if (!(st = LoadAttentionFile(bytes.data(), bytes.size(), &f))) return Fail(o.in_path + ": " + st.message);
  std::vector<uint8_t>().swap(bytes);  // the file's bytes are not needed any more
  for (const std::string& w : f.warnings)
    std::fprintf(stderr, "attnviz-cli render: warning: %s\n", Printable(w).c_str());
  MatrixRM mean;
  const MatrixRM* w = nullptr;
  if (!(st = PickWeights(f, o, &mean, &w))) return Fail(st.message);
  SvgHeatmapOptions so;
  so.cell_size = o.cell;
  so.vmax = o.vmax;
  so.show_values = o.values;
  so.colorbar = !o.no_colorbar;
  so.title = o.title;
  so.max_cells = o.max_cells;
  FileSink out;
  size_t written = 0;
  if (w->size() > o.max_cells)  // refused before the output file is created
    return Fail(o.in_path + ": layer " + std::to_string(o.layer) + " is " + std::to_string(w->rows()) + " x " +
                std::to_string(w->cols()) + " = " + std::to_string(w->size()) + " cells, over --max-cells " +
                std::to_string(o.max_cells));
  if (!(st = out.Open(o.svg_path))) return Fail(st.message);
  st = WriteHeatmapSvg(*w, f.source_tokens, f.target_tokens, o.colormap, so, [&](const char* d, size_t n) {
    written += n;
    return out.Write(d, n);
  });
  if (!st) return Fail(st.message);  // out's destructor removes the partial file
  if (!(st = out.Close())) return Fail(st.message);
  const AttentionFile::Layer& L = f.layers[(size_t)o.layer];
  const std::string what =
      o.head >= 0 ? "head " + std::to_string(o.head) + " \"" + PrintableName(L.heads[(size_t)o.head].name) + "\""
                  : std::string("mean of heads");
  std::printf("render: layer %d \"%s\", %s, %dx%d, %s -> %s (%zu bytes)\n", o.layer, PrintableName(L.name).c_str(),
              what.c_str(), (int)w->rows(), (int)w->cols(), o.colormap.c_str(), Printable(o.svg_path).c_str(), written);
  return kExitOk;
}

}  // namespace
}  // namespace attnviz

ATTNVIZ_CLI_COMMAND(render, "one head of an attention file as a standalone SVG heatmap", attnviz::RunRender)
