// The app's command dispatcher: a table of the app's own commands, then each view's commands.
#include "app/app_commands.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "app/app_chrome.h"
#include "app/app_export.h"
#include "app/app_files.h"
#include "app/app_state.h"
#include "app/lazy_maps.h"
#include "io/memory_budget.h"

namespace attnviz {

CommandArgs CommandArgs::Parse(const std::string& line) {
  CommandArgs c;
  size_t i = 0;
  while (i < line.size() && std::isspace((unsigned char)line[i])) ++i;
  const size_t verb_begin = i;
  while (i < line.size() && !std::isspace((unsigned char)line[i])) ++i;
  c.verb = line.substr(verb_begin, i - verb_begin);
  if (i < line.size()) c.rest = line.substr(i + 1);  // one separating space; the rest verbatim
  size_t j = 0;
  while (j < c.rest.size()) {
    while (j < c.rest.size() && std::isspace((unsigned char)c.rest[j])) ++j;
    const size_t begin = j;
    while (j < c.rest.size() && !std::isspace((unsigned char)c.rest[j])) ++j;
    if (j > begin) c.words.push_back(c.rest.substr(begin, j - begin));
  }
  return c;
}

const std::string& CommandArgs::Word(size_t i) const {
  static const std::string kEmpty;  // immutable: safe to share
  return i < words.size() ? words[i] : kEmpty;
}

bool CommandArgs::Int(size_t i, int* out) const {
  const std::string& w = Word(i);
  char* end = nullptr;
  const long v = std::strtol(w.c_str(), &end, 10);
  if (w.empty() || *end || v < -(1L << 30) || v > (1L << 30)) return false;
  *out = (int)v;
  return true;
}

bool CommandArgs::Float(size_t i, float* out) const {
  const std::string& w = Word(i);
  char* end = nullptr;
  const float v = std::strtof(w.c_str(), &end);
  if (w.empty() || *end) return false;
  *out = v;
  return true;
}

namespace {

// cache SIZE: the memory budget of lazily read heads and overviews (app/lazy_maps.h).
Status CmdCache(AppState*, const CommandArgs& c) {
  uint64_t bytes = 0;
  if (!ParseByteSize(c.Word(0), &bytes)) return Status::Error("cache needs a size such as 512M or 2G");
  SetLazyCacheBudget(bytes);
  return Status::Ok();
}

Status CmdExample(AppState* s, const CommandArgs& c) {
  return SelectExampleById(s, c.rest);
}
Status CmdView(AppState* s, const CommandArgs& c) {
  return SelectView(s, c.rest);
}

Status CmdSet(AppState* s, const CommandArgs& c) {
  return SelectSet(s, c.rest);
}

// hide special|punctuation|none|TOKEN ; show TOKEN ; renormalize on|off
// Applies a changed filter; on failure the previous one comes back.
Status Refilter(AppState* s, const TokenFilter& before) {
  const Status st = RefilterCurrent(s);
  if (!st) {
    s->filter = before;
    (void)RefilterCurrent(s);
  }
  return st;
}

// True when some query or key token of the example is `typed`, or is it without its word marker.
bool ExampleHasToken(const Example& ex, const std::string& typed) {
  auto matches = [&](const std::string& t) { return TokenMatches(t, typed); };
  for (const AttentionMap& m : ex.original_maps.empty() ? ex.maps : ex.original_maps)
    if (std::any_of(m.target_tokens.begin(), m.target_tokens.end(), matches) ||
        std::any_of(m.source_tokens.begin(), m.source_tokens.end(), matches))
      return true;
  return false;
}

Status CmdHide(AppState* s, const CommandArgs& c) {
  const TokenFilter before = s->filter;
  TokenFilter& f = s->filter;
  if (c.rest == "special")
    f.special = true;
  else if (c.rest == "punctuation")
    f.punctuation = true;
  else if (c.rest == "none")
    f = TokenFilter{};
  else if (!c.rest.empty() && !s->Current().lazy && !s->Current().has_inputs && !ExampleHasToken(s->Current(), c.rest))
    return Status::Error("no token '" + c.rest + "' in " + s->Current().title);
  else if (!c.rest.empty())
    f.tokens.push_back(c.rest);
  else
    return Status::Error("hide special|punctuation|none|TOKEN");
  return Refilter(s, before);
}

Status CmdShow(AppState* s, const CommandArgs& c) {
  const TokenFilter before = s->filter;
  TokenFilter& f = s->filter;
  if (c.rest == "special")
    f.special = false;
  else if (c.rest == "punctuation")
    f.punctuation = false;
  else
    f.tokens.erase(std::remove_if(f.tokens.begin(), f.tokens.end(),
                                  [&](const std::string& h) { return h == c.rest || TokenMatches(h, c.rest); }),
                   f.tokens.end());
  return Refilter(s, before);
}

Status CmdRenormalize(AppState* s, const CommandArgs& c) {
  if (c.rest != "on" && c.rest != "off") return Status::Error("renormalize on|off");
  const TokenFilter before = s->filter;
  s->filter.renormalize = c.rest == "on";
  return Refilter(s, before);
}

Status CmdTheme(AppState* s, const CommandArgs& c) {
  if (c.rest != "light" && c.rest != "dark") return Status::Error("theme light|dark");
  s->light_theme = c.rest == "light";
  ApplyStyle(s->light_theme);
  return Status::Ok();
}

// layer-head L H: the map of layer L, head H (files whose layers differ in head count too).
Status CmdLayerHead(AppState* s, const CommandArgs& c) {
  int l, h;
  const Example& ex = s->Current();
  if (!c.Int(0, &l) || !c.Int(1, &h) || l < 0 || h < 0 || l >= ex.layers || h >= ex.heads)
    return Status::Error("layer-head L H, with L < " + std::to_string(ex.layers) + " and H < " +
                         std::to_string(ex.heads));
  s->current_map = ex.MapOf(l, h);
  return Status::Ok();
}

Status CmdColormap(AppState* s, const CommandArgs& c) {
  if (!ParseColormap(c.rest.c_str(), &s->style.colormap))
    return Status::Error("unknown colormap '" + c.rest + "' (greys, viridis, magma, diverging)");
  return Status::Ok();
}

Status CmdScale(AppState* s, const CommandArgs& c) {
  if (c.rest == "global")
    s->style.scale = ScaleMode::Global;
  else if (c.rest == "row")
    s->style.scale = ScaleMode::PerRow;
  else if (c.rest == "log")
    s->style.scale = ScaleMode::Log;
  else
    return Status::Error("unknown scale '" + c.rest + "' (global, row, log)");
  return Status::Ok();
}

Status CmdStep(AppState* s, const CommandArgs& c) {
  int k;
  if (!c.Int(0, &k)) return Status::Error("step needs a number");
  Timeline& t = s->ShownTimeline();
  t.playing = false;
  t.position = std::min<float>(t.Max(), (float)std::max(0, k));
  return Status::Ok();
}

Status CmdPlay(AppState* s, const CommandArgs&) {
  s->ShownTimeline().Play();
  return Status::Ok();
}

Status CmdPause(AppState* s, const CommandArgs&) {
  s->ShownTimeline().playing = false;
  return Status::Ok();
}

Status CmdMap(AppState* s, const CommandArgs& c) {
  int k;
  const int n = (int)s->Current().maps.size();
  if (!c.Int(0, &k) || k < 0 || k >= n)
    return Status::Error("map index out of range (0.." + std::to_string(n - 1) + ")");
  s->current_map = k;
  return Status::Ok();
}

Status CmdNumbers(AppState* s, const CommandArgs& c) {
  if (c.rest != "on" && c.rest != "off") return Status::Error("numbers on|off");
  s->style.show_numbers = c.rest == "on";
  return Status::Ok();
}

Status CmdColorbar(AppState* s, const CommandArgs& c) {
  if (c.rest != "on" && c.rest != "off") return Status::Error("colorbar on|off");
  s->style.show_colorbar = c.rest == "on";
  return Status::Ok();
}

Status CmdMarkers(AppState* s, const CommandArgs& c) {
  if (c.rest != "on" && c.rest != "off") return Status::Error("markers on|off");
  s->show_markers = c.rest == "on";
  return Status::Ok();
}

Status CmdSidebar(AppState* s, const CommandArgs& c) {
  if (c.rest != "on" && c.rest != "off" && c.rest != "auto") return Status::Error("sidebar on|off|auto");
  s->sidebar = c.rest == "auto" ? -1 : c.rest == "on" ? 1 : 0;
  return Status::Ok();
}

Status CmdLabels(AppState* s, const CommandArgs& c) {
  if (!ParseLabelMode(c.rest, &s->style.labels)) return Status::Error("labels all|auto|none");
  return Status::Ok();
}

Status CmdRange(AppState* s, const CommandArgs& c) {
  if (c.words.size() == 1) {  // range auto|fixed|p99|p99.9
    if (ParseRangeMode(c.Word(0), &s->style.range)) return Status::Ok();
    return Status::Error("range auto|fixed|p99|p99.9, or range MIN MAX (fixed)");
  }
  float lo, hi;
  if (!c.Float(0, &lo) || !c.Float(1, &hi) || !std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi))
    return Status::Error("range needs two finite numbers, min < max");
  s->style.vmin = lo;
  s->style.vmax = hi;
  s->style.range = RangeMode::Fixed;
  return Status::Ok();
}

Status CmdSaveCsv(AppState* s, const CommandArgs&) {
  return QueueCsvDownload(s);
}
Status CmdSaveNpy(AppState* s, const CommandArgs&) {
  return QueueNpyDownload(s);
}
Status CmdSaveSvg(AppState* s, const CommandArgs&) {
  return QueueSvgDownload(s);
}
Status CmdSaveJson(AppState* s, const CommandArgs&) {
  return QueueJsonDownload(s);
}

struct AppCommand {
  const char* verb;                                  // first word of the command
  const char* usage;                                 // arguments, for the command list
  Status (*run)(AppState* s, const CommandArgs& c);  // does it
};

const AppCommand kAppCommands[] = {
    {"example", "example ID", CmdExample},
    {"view", "view NAME", CmdView},
    {"set", "set NAME|INDEX", CmdSet},
    {"hide", "hide special|punctuation|none|TOKEN", CmdHide},
    {"show", "show special|punctuation|TOKEN", CmdShow},
    {"renormalize", "renormalize on|off", CmdRenormalize},
    {"colormap", "colormap greys|viridis|magma|diverging", CmdColormap},
    {"scale", "scale global|row|log", CmdScale},
    {"range", "range auto|fixed|p99|p99.9 or range MIN MAX", CmdRange},
    {"numbers", "numbers on|off", CmdNumbers},
    {"colorbar", "colorbar on|off", CmdColorbar},
    {"labels", "labels all|auto|none", CmdLabels},
    {"markers", "markers on|off", CmdMarkers},
    {"sidebar", "sidebar on|off|auto", CmdSidebar},
    {"step", "step K", CmdStep},
    {"play", "play", CmdPlay},
    {"pause", "pause", CmdPause},
    {"map", "map INDEX", CmdMap},
    {"layer-head", "layer-head L H", CmdLayerHead},
    {"theme", "theme light|dark", CmdTheme},
    {"save-svg", "save-svg", CmdSaveSvg},
    {"save-json", "save-json", CmdSaveJson},
    {"save-csv", "save-csv", CmdSaveCsv},
    {"save-npy", "save-npy", CmdSaveNpy},
    {"cache", "cache SIZE (e.g. 512M): memory for the heads of lazily read files", CmdCache},
};

}  // namespace

std::string CommandUsage() {
  std::string out;
  for (const AppCommand& c : kAppCommands) out += std::string(c.usage) + "\n";
  out += ExportCommandUsage();
  return out;
}

Status RunCommand(AppState* s, const std::string& line) {
  const CommandArgs c = CommandArgs::Parse(line);
  if (c.verb.empty()) return Status::Error("empty command");
  for (const AppCommand& cmd : kAppCommands)
    if (c.verb == cmd.verb) return cmd.run(s, c);
  Status result;
  if (RunExportCommand(s, c, &result)) return result;
  for (auto& v : s->views)
    if (v->RunCommand(s, c, &result)) return result;
  return Status::Error("unknown command '" + c.verb + "'");
}

}  // namespace attnviz
