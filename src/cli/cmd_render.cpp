// attnviz-cli render: one head of an attention file as a figure: SVG (streamed), PNG or an
// animated GIF of the decoding (drawn on the CPU: no GPU, no display).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "cli/cli_args.h"
#include "cli/cli_lazy.h"
#include "cli/cli_limits.h"
#include "cli/commands.h"
#include "core/colormap.h"
#include "core/token_select.h"
#include "embedded_font.h"
#include "figure/gif_codec.h"
#include "figure/heatmap_figure.h"
#include "figure/lines_figure.h"
#include "figure/png_codec.h"
#include "figure/system_fallback_fonts.h"
#include "io/attention_sets.h"
#include "io/file_util.h"
#include "io/svg.h"
#include "io/svg_lines.h"

namespace attnviz {
namespace {

constexpr double kMaxGifBytes = 512.0 * 1024 * 1024;  // RGBA of every frame, before encoding

int Fail(const std::string& message) {
  std::fprintf(stderr, "attnviz-cli render: %s\n", Printable(message).c_str());
  return kExitError;
}

struct RenderOptions {
  std::string format;     // "svg", "png" or "gif": --svg, else the extension of --out
  std::string font_path;  // --font: a TrueType/OpenType file instead of the embedded UI font
  std::string file, in_path, out_path, svg_path, colormap = "greys", title, set, scale = "auto", labels = "auto";
  std::vector<std::string> hide;  // --hide: special, punctuation or a token
  float threshold = 0.01f;        // --lines: weights below are not drawn
  int layer = 0, head = 0, max_cells = 1 << 20, decimals = 2, step_ms = 700;
  float cell = 24.0f, vmax = NAN, dpi = 96.0f;
  bool values = false, no_colorbar = false, renormalize = false, lines = false, all_heads = false;
  bool queries_left = false;  // --lines: BertViz's orientation
  CliLimits limits;
};

void DeclareFlags(ArgParser* args, RenderOptions* o) {
  args->Positional("FILE", &o->file, "attention file (.json, .npz, .npy, or attend output)", false);
  args->String("--in", &o->in_path, "FILE", "the same as FILE");
  args->String("--out", &o->out_path, "OUT", "fig.png, fig.svg or fig.gif (the extension picks the format)");
  args->String("--svg", &o->svg_path, "OUT.svg", "the same as --out OUT.svg");
  args->String("--set", &o->set, "S",
               "attention set, by name or index (default: the first; a GIF: the first cross set)");
  args->Int("--layer", &o->layer, "L", "layer index (default 0)");
  args->Int("--head", &o->head, "H", "head index (default 0; -1 = mean of the layer's heads)");
  args->List("--hide", &o->hide, "WHAT",
             "leave tokens out: special ([CLS], </s>, the file's own), punctuation, or a token; repeatable");
  args->Flag("--renormalize", &o->renormalize, "divide each row by the sum of the weights left after --hide");
  args->Flag("--lines", &o->lines,
             "draw the lines view (BertViz style: keys left, queries right, one line per weight); SVG or PNG");
  args->Flag("--all-heads", &o->all_heads, "with --lines: every head of the layer, one colour each (head view)");
  args->Flag("--queries-left", &o->queries_left,
             "with --lines: queries (targets) down the left, keys down the right, as BertViz draws them");
  args->Float("--threshold", &o->threshold, "W", "with --lines: weights below W get no line (default 0.01)");
  args->String("--colormap", &o->colormap, "NAME", "greys (default) | viridis | magma | diverging");
  args->String("--scale", &o->scale, "MODE",
               "colour range: auto (0..max, default) | fixed (0..1) | row | log | p99 | p99.9");
  args->Float("--dpi", &o->dpi, "N", "PNG/GIF resolution (--lines PNG too): 96 = 1x (default), 192 = 2x, 384 = 4x");
  args->String("--labels", &o->labels, "MODE", "token labels: auto (thinned so none overlap, default) | all | none");
  args->Int("--decimals", &o->decimals, "N", "digits after the point of cell values (default 2; implies --values)");
  args->Flag("--values", &o->values, "print each weight in its cell");
  args->Float("--cell", &o->cell, "PX", "cell size in px at 96 dpi (default 24)");
  args->Float("--vmax", &o->vmax, "V", "SVG: value drawn at the top of the colormap (default: by --scale)");
  args->Int("--step-ms", &o->step_ms, "MS", "GIF: how long each decoding step is shown (default 700)");
  args->String("--title", &o->title, "TEXT", "caption above the heatmap");
  args->String("--font", &o->font_path, "FILE.ttf",
               "PNG/GIF label font, --lines PNG too (default: the embedded DejaVu Sans subset; e.g. Noto for CJK)");
  args->Flag("--no-colorbar", &o->no_colorbar, "leave out the colour bar");
  args->Int("--max-cells", &o->max_cells, "N", "refuse maps with more cells (default 1048576)");
  DeclareLimitFlags(args, &o->limits);
}

// The chosen set of the document: by name, or by index.
Status PickSet(const AttentionDocument& doc, const RenderOptions& o, bool prefer_cross, const AttentionSet** out) {
  *out = &doc.sets[0];
  if (o.set.empty()) {
    for (const AttentionSet& s : doc.sets)
      if (prefer_cross && s.kind == AttentionKind::Cross) return *out = &s, Status::Ok();
    return Status::Ok();
  }
  std::string names;
  for (size_t i = 0; i < doc.sets.size(); ++i) {
    if (doc.sets[i].name == o.set || std::to_string(i) == o.set) return *out = &doc.sets[i], Status::Ok();
    names += (i ? ", " : "") + doc.sets[i].name;
  }
  return Status::Error("--set '" + o.set + "' is not in the file (its sets: " + names + ")");
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

// The figure's weights and tokens: the chosen head's, or what --hide and --renormalize leave of them.
struct Shown {
  const MatrixRM* w = nullptr;
  std::vector<std::string> source, target;  // keys (columns), queries (rows)
  std::vector<int> rows, cols;              // what --hide kept of the head's (empty: all of them)
};

Status WriteSvg(const Shown& f, const RenderOptions& o, size_t* written) {
  const MatrixRM& w = *f.w;
  FigureScale scale = FigureScale::Auto;
  ParseFigureScale(o.scale, &scale);
  SvgHeatmapOptions so;
  so.cell_size = o.cell;
  so.scale = scale == FigureScale::Row   ? ColourScale::PerRow
             : scale == FigureScale::Log ? ColourScale::Log
                                         : ColourScale::Linear;
  if (scale != FigureScale::Auto) {  // the range the PNG would use
    HeatmapFigureOptions fo;
    fo.scale = scale;
    HeatmapFigureLayout L;
    ResolveFigureRange(w, fo, &L);
    so.vmin = L.vmin, so.vmax = L.vmax;
  }
  if (!std::isnan(o.vmax)) so.vmax = o.vmax;
  so.show_values = o.values;
  so.decimals = o.decimals;
  so.colorbar = !o.no_colorbar;
  so.title = o.title;
  so.max_cells = o.max_cells;
  FileSink out;
  Status st = out.Open(o.out_path);
  if (!st) return st;
  st = WriteHeatmapSvg(w, f.source, f.target, o.colormap, so, [&](const char* d, size_t n) {
    *written += n;
    return out.Write(d, n);
  });
  if (!st) return st;  // out's destructor removes the partial file
  return out.Close();
}

// --lines: the lines view's options; with --all-heads every head of the layer (as --hide left it) in
// its colour (*kept holds those heads' weights).
SvgLinesOptions LinesOptions(const Shown& f, const AttentionFile::Layer& layer, const RenderOptions& o,
                             std::vector<MatrixRM>* kept) {
  SvgLinesOptions so;
  ParseColormap(o.colormap.c_str(), &so.colormap);
  so.threshold = o.threshold;
  so.queries_left = o.queries_left;
  so.title = o.title;
  kept->assign(o.all_heads ? layer.heads.size() : 0, MatrixRM());  // the heads without hidden tokens
  for (size_t h = 0; h < kept->size(); ++h) {
    SvgLinesHead head;
    head.w = &layer.heads[h].weights;
    if (!f.rows.empty())
      SelectRowsCols(layer.heads[h].weights, f.rows, f.cols, o.renormalize, &(*kept)[h]), head.w = &(*kept)[h];
    head.head = (int)h;
    CategoryColour((int)h, head.rgb);
    so.heads.push_back(head);
  }
  return so;
}

// The figure font: the embedded one or --font, with system fonts for glyphs it lacks in `texts`.
// font_bytes keeps --font's bytes alive while the font is used.
Status LoadFigureFont(const RenderOptions& o, const std::vector<std::string>& texts, std::vector<uint8_t>* font_bytes,
                      FigureFont* font) {
  const EmbeddedFile* ttf = attnviz_embedded_font_find("DejaVuSans.ttf");
  Status st;
  if (!o.font_path.empty() && !(st = ReadFileBytes(o.font_path, font_bytes))) return st;
  st = font_bytes->empty() ? font->Init(ttf ? ttf->data : nullptr, ttf ? ttf->size : 0)
                           : font->Init(font_bytes->data(), font_bytes->size());
  if (!st)
    return Status::Error((o.font_path.empty() ? std::string("the embedded font") : o.font_path) + ": " + st.message);
  AddSystemFallbacks(font, texts);
  return Status::Ok();
}

std::vector<std::string> FigureTexts(const Shown& f, const RenderOptions& o) {
  std::vector<std::string> texts(f.source);
  texts.insert(texts.end(), f.target.begin(), f.target.end());
  texts.push_back(o.title);
  return texts;
}

// --lines: the lines view as SVG, or as PNG drawn on the CPU (the same figure).
Status WriteLines(const Shown& f, const AttentionFile::Layer& layer, const RenderOptions& o, size_t* written) {
  std::vector<MatrixRM> kept;
  LinesFigureOptions lo;
  lo.lines = LinesOptions(f, layer, o, &kept);
  if (o.format == "svg") {
    std::string svg;
    const Status st = LinesSvgString(*f.w, f.source, f.target, lo.lines, &svg);
    if (!st) return st;
    *written = svg.size();
    return WriteFileBytes(o.out_path, reinterpret_cast<const uint8_t*>(svg.data()), svg.size());
  }
  lo.scale_factor = o.dpi / 96.0f;
  std::vector<uint8_t> font_bytes, bytes;
  FigureFont font;
  Status st = LoadFigureFont(o, FigureTexts(f, o), &font_bytes, &font);
  RgbaImage img;
  LinesLayout L;
  if (!st || !(st = RenderLinesFigure(*f.w, f.source, f.target, lo, &font, &img, &L))) return st;
  if (!(st = EncodePng(img, o.dpi, &bytes))) return st;
  std::printf("render: %dx%d px, lines from x %.1f to %.1f px, rows from y %.1f every %.1f px (at scale %.3g)\n",
              img.width, img.height, L.line_source * lo.scale_factor, L.line_target * lo.scale_factor,
              L.YOf(0) * lo.scale_factor, L.row_px * lo.scale_factor, lo.scale_factor);
  *written = bytes.size();
  return WriteFileBytes(o.out_path, bytes.data(), bytes.size());
}

// PNG: one figure. GIF: one frame per decoding step (row), the row being emitted outlined.
Status WriteRaster(const Shown& f, const RenderOptions& o, bool gif, size_t* written) {
  const MatrixRM& w = *f.w;
  HeatmapFigureOptions fo;
  ParseColormap(o.colormap.c_str(), &fo.colormap);
  ParseFigureScale(o.scale, &fo.scale);
  ParseFigureLabels(o.labels, &fo.labels);
  fo.scale_factor = o.dpi / 96.0f, fo.cell_px = o.cell, fo.decimals = o.decimals, fo.values = o.values;
  fo.colorbar = !o.no_colorbar, fo.title = o.title;
  std::vector<uint8_t> font_bytes;  // --font, kept alive while the font is used
  FigureFont font;
  Status st = LoadFigureFont(o, FigureTexts(f, o), &font_bytes, &font);
  if (!st) return st;
  std::vector<uint8_t> bytes;
  HeatmapFigureLayout L;
  if (!gif) {
    RgbaImage img;
    if (!(st = RenderHeatmapFigure(w, f.source, f.target, fo, &font, &img, &L))) return st;
    if (!(st = EncodePng(img, o.dpi, &bytes))) return st;
    std::printf(
        "render: %dx%d px, cells at (%d, %d) of %.3f x %.3f px, range %.9g to %.9g, labels every %d rows, %d cols\n",
        img.width, img.height, L.x0, L.y0, L.cell_w, L.cell_h, L.vmin, L.vmax, L.label_step_rows, L.label_step_cols);
  } else {
    std::vector<RgbaImage> frames((size_t)w.rows());
    for (int k = 0; k < (int)w.rows(); ++k) {
      if (k == 1 && (double)frames[0].rgba.size() * (double)w.rows() > kMaxGifBytes)  // all frames stay in memory
        return Status::Error("the GIF would be " + std::to_string(w.rows()) + " frames of " +
                             std::to_string(frames[0].width) + " x " + std::to_string(frames[0].height) +
                             " px, over 512 MiB of pixels: lower --dpi or --cell, or render a PNG");
      fo.rows_shown = k + 1, fo.current_row = k;
      if (!(st = RenderHeatmapFigure(w, f.source, f.target, fo, &font, &frames[(size_t)k], &L))) return st;
    }
    std::vector<int> delays(frames.size(), std::max(2, o.step_ms / 10));
    delays.back() = std::max(delays.back(), 200);  // the finished map is held two seconds before the loop restarts
    if (!(st = EncodeGif(frames, delays, &bytes))) return st;
    std::printf("render: %zu frames of %dx%d px, cells at (%d, %d) of %.3f x %.3f px, range %.9g to %.9g\n",
                frames.size(), frames[0].width, frames[0].height, L.x0, L.y0, L.cell_w, L.cell_h, L.vmin, L.vmax);
  }
  *written = bytes.size();
  return WriteFileBytes(o.out_path, bytes.data(), bytes.size());
}

// --hide and --renormalize: the rows and columns left (into *kept when some are left out).
Status HideTokens(const AttentionDocument& doc, const AttentionFile& f, const RenderOptions& o, MatrixRM* kept,
                  Shown* shown) {
  TokenHide hide;
  for (const std::string& h : o.hide) {
    if (h == "special")
      hide.special = true;
    else if (h == "punctuation")
      hide.punctuation = true;
    else
      hide.tokens.push_back(h);
  }
  for (const std::string& h : hide.tokens) {
    auto matches = [&](const std::string& t) { return TokenMatches(t, h); };
    if (std::none_of(f.target_tokens.begin(), f.target_tokens.end(), matches) &&
        std::none_of(f.source_tokens.begin(), f.source_tokens.end(), matches))
      std::fprintf(stderr, "attnviz-cli render: warning: --hide '%s' matches no token of the set\n",
                   Printable(h).c_str());
  }
  const std::vector<int> rows = KeptTokens(f.target_tokens, hide, doc.tokenizer.special_tokens);
  const std::vector<int> cols = KeptTokens(f.source_tokens, hide, doc.tokenizer.special_tokens);
  if (rows.empty() || cols.empty())
    return Status::Error("--hide would leave no " + std::string(rows.empty() ? "query" : "key") + " token");
  if (!o.renormalize && rows.size() == (size_t)shown->w->rows() && cols.size() == (size_t)shown->w->cols())
    return Status::Ok();  // nothing hidden: the head's own weights and tokens
  SelectRowsCols(*shown->w, rows, cols, o.renormalize, kept);
  shown->w = kept;
  shown->rows = rows;
  shown->cols = cols;
  shown->target = PickTokens(f.target_tokens, rows);
  shown->source = PickTokens(f.source_tokens, cols);
  return Status::Ok();
}

// Flag checks that need no file: a usage error (exit 2) names the flag.
int CheckFlags(const ArgParser& args, RenderOptions* o) {
  if (o->file.empty()) o->file = o->in_path;
  if (o->out_path.empty() && !o->svg_path.empty()) o->out_path = o->svg_path, o->format = "svg";
  if (o->file.empty()) return args.UsageError("give the attention FILE (or --in FILE)");
  if (o->out_path.empty()) return args.UsageError("give --out fig.png|fig.svg|fig.gif");
  if (!FindColormap(o->colormap.c_str()))
    return args.UsageError("unknown --colormap '" + o->colormap + "' (greys, viridis, magma, diverging)");
  FigureScale scale;
  FigureLabels labels;
  if (!ParseFigureScale(o->scale, &scale))
    return args.UsageError("unknown --scale '" + o->scale + "' (auto, fixed, row, log, p99, p99.9)");
  if (!ParseFigureLabels(o->labels, &labels))
    return args.UsageError("unknown --labels '" + o->labels + "' (all, auto, none)");
  if (!(o->cell >= 2.0f && o->cell <= 512.0f)) return args.UsageError("--cell must be between 2 and 512");
  if (!(o->dpi >= 24.0f && o->dpi <= 1536.0f)) return args.UsageError("--dpi must be between 24 and 1536");
  if (o->decimals < 0 || o->decimals > 8) return args.UsageError("--decimals must be between 0 and 8");
  if (args.Seen("--decimals")) o->values = true;
  if (o->step_ms < 20 || o->step_ms > 60000) return args.UsageError("--step-ms must be between 20 and 60000");
  if (o->max_cells < 1) return args.UsageError("--max-cells must be >= 1");
  const std::string& p = o->out_path;
  const std::string ext = p.size() >= 4 ? p.substr(p.size() - 4) : "";
  if (o->format.empty() && ext != ".svg" && ext != ".png" && ext != ".gif")
    return args.UsageError("--out '" + p + "' must end in .png, .svg or .gif");
  if (o->format.empty()) o->format = ext.substr(1);
  if (o->lines && o->format == "gif") return args.UsageError("--lines draws SVG or PNG: give --out fig.svg or fig.png");
  if (o->lines)
    for (const char* flag :
         {"--scale", "--labels", "--decimals", "--values", "--cell", "--vmax", "--step-ms", "--no-colorbar"})
      if (args.Seen(flag)) return args.UsageError(std::string(flag) + " is for heatmap figures, not --lines");
  if (o->all_heads && !o->lines) return args.UsageError("--all-heads goes with --lines");
  if (o->queries_left && !o->lines) return args.UsageError("--queries-left goes with --lines");
  if (!(o->threshold > 0 && o->threshold <= 1)) return args.UsageError("--threshold must be in (0, 1]");
  return -1;
}

// The document to draw from. A file read lazily (safetensors, a .npy too big to read whole) gives
// only the heads the figure needs: the chosen head, or every head of the layer for the mean and
// --all-heads (charged to the memory budget); its other heads stay without weights.
Status LoadForRender(const RenderOptions& o, AttentionDocument* doc) {
  std::unique_ptr<ByteSource> source;
  Status st = OpenFileSource(o.file, &source);
  if (st && OpensLazily(source.get())) {
    LazyInput in;
    if (!(st = in.Open(std::move(source)))) return Status::Error(o.file + ": " + st.message);
    *doc = in.shape;
    const AttentionSet* set = nullptr;
    if (!(st = PickSet(*doc, o, o.format == "gif", &set))) return st;
    const int s = (int)(set - doc->sets.data());
    std::vector<AttentionFile::Layer>& layers = doc->sets[(size_t)s].data.layers;
    if (o.layer < 0 || o.layer >= (int)layers.size()) return Status::Ok();  // PickWeights says so
    std::vector<AttentionFile::Head>& heads = layers[(size_t)o.layer].heads;
    const bool whole_layer = o.head < 0 || o.all_heads;
    MemoryBudget budget;
    const LazySet& ls = in.file.index().sets[(size_t)s];
    for (int h = 0; h < (int)heads.size(); ++h) {
      if (!whole_layer && h != o.head) continue;
      if (!(st = budget.Charge((uint64_t)(ls.n_q * ls.n_k) * 4, "render: the heads the figure needs")) ||
          !(st = in.Head(s, o.layer, h, &heads[(size_t)h].weights, &doc->warnings)))
        return Status::Error(o.file + ": " + st.message);
    }
    return Status::Ok();
  }
  source.reset();
  std::vector<uint8_t> bytes;
  if (!(st = ReadFileBytes(o.file, &bytes))) return st;
  if (!(st = LoadAttentionDocument(bytes.data(), bytes.size(), doc))) return Status::Error(o.file + ": " + st.message);
  return Status::Ok();
}

int RunRender(int argc, char** argv) {
  RenderOptions o;
  ArgParser args("render",
                 "Draws one head (or the mean of a layer's heads) of an attention file as a figure: source tokens\n"
                 "along the top, target tokens down the left, a colour bar with numbers. SVG is streamed; PNG and\n"
                 "GIF are drawn on the CPU (no display needed). A GIF animates the decoding, one frame per row.");
  DeclareFlags(&args, &o);
  if (int rc = args.Parse(argc, argv); rc >= 0) return rc;
  if (int rc = ApplyLimitFlags(args, o.limits); rc >= 0) return rc;
  if (int rc = CheckFlags(args, &o); rc >= 0) return rc;

  AttentionDocument doc;
  Status st = LoadForRender(o, &doc);
  if (!st) return Fail(st.message);
  for (const std::string& w : doc.warnings)
    std::fprintf(stderr, "attnviz-cli render: warning: %s\n", Printable(w).c_str());
  const AttentionSet* set = nullptr;
  if (!(st = PickSet(doc, o, o.format == "gif", &set))) return Fail(st.message);
  const AttentionFile& f = set->data;
  MatrixRM mean, kept;
  Shown shown{nullptr, f.source_tokens, f.target_tokens, {}, {}};
  if (!(st = PickWeights(f, o, &mean, &shown.w))) return Fail(st.message);
  if (!(st = HideTokens(doc, f, o, &kept, &shown))) return Fail(st.message);
  const MatrixRM* w = shown.w;
  if (w->size() > o.max_cells)  // refused before the output file is created
    return Fail(o.file + ": layer " + std::to_string(o.layer) + " is " + std::to_string(w->rows()) + " x " +
                std::to_string(w->cols()) + " = " + std::to_string(w->size()) + " cells, over --max-cells " +
                std::to_string(o.max_cells));
  size_t written = 0;
  if (o.lines)
    st = WriteLines(shown, f.layers[(size_t)o.layer], o, &written);
  else
    st = o.format == "svg" ? WriteSvg(shown, o, &written) : WriteRaster(shown, o, o.format == "gif", &written);
  if (!st) return Fail(st.message);
  const AttentionFile::Layer& L = f.layers[(size_t)o.layer];
  const std::string what =
      o.all_heads   ? "all " + std::to_string(L.heads.size()) + " heads, as lines"
      : o.head >= 0 ? "head " + std::to_string(o.head) + " \"" + PrintableName(L.heads[(size_t)o.head].name) + "\""
                    : std::string("mean of heads");
  const std::string hidden = w == &kept
                                 ? " (" + std::to_string(f.target_tokens.size() - (size_t)w->rows()) + " query and " +
                                       std::to_string(f.source_tokens.size() - (size_t)w->cols()) +
                                       " key tokens hidden" + (o.renormalize ? ", rows renormalised)" : ")")
                                 : "";
  std::printf("render: set \"%s\", layer %d \"%s\", %s, %dx%d%s, %s -> %s (%zu bytes)\n",
              PrintableName(set->name).c_str(), o.layer, PrintableName(L.name).c_str(), what.c_str(), (int)w->rows(),
              (int)w->cols(), hidden.c_str(), o.colormap.c_str(), Printable(o.out_path).c_str(), written);
  return kExitOk;
}

}  // namespace
}  // namespace attnviz

ATTNVIZ_CLI_COMMAND(render, "one head of an attention file as a figure: SVG, PNG or an animated GIF",
                    attnviz::RunRender)
