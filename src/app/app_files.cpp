// Files in and out: attention files become examples; SVG and JSON exports become downloads.
#include "app/app_files.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "app/app_state.h"
#include "app/lazy_maps.h"
#include "imgui.h"
#include "io/attention_file.h"
#include "io/attention_sets.h"
#include "io/csv.h"
#include "io/json.h"
#include "io/lazy_attention.h"
#include "io/memory_budget.h"
#include "io/ndarray.h"
#include "io/npy.h"
#include "io/svg.h"
#include "io/utf8.h"

namespace attnviz {

namespace {

// Long names (a hostile file may give megabytes) are cut for the UI: every map and warning
// shows at most this much of them.
// Text from a file as the UI shows it: control characters (ESC, BEL, C1), bidirectional
// overrides and invalid UTF-8 become visible escapes (\x1b, \u202e, \xff), never nothing and
// never a terminal or layout trick; longer than max_chars code points is cut with an ellipsis.
std::string DisplayText(const std::string& text, size_t max_chars) {
  std::string out;
  size_t pos = 0, chars = 0;
  char esc[16];
  while (pos < text.size()) {
    if (chars++ == max_chars) return out + "\xe2\x80\xa6";
    const size_t start = pos;
    uint32_t cp = 0;
    if (!DecodeUtf8(text.data(), text.size(), &pos, &cp)) {
      std::snprintf(esc, sizeof(esc), "\\x%02x", (unsigned char)text[start]);
      out += esc;
    } else if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) {
      std::snprintf(esc, sizeof(esc), "\\x%02x", (unsigned)cp);
      out += esc;
    } else if ((cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F) {
      std::snprintf(esc, sizeof(esc), "\\u%04x", (unsigned)cp);
      out += esc;
    } else {
      out.append(text, start, pos - start);
    }
  }
  return out;
}

std::string Shorten(const std::string& text, size_t max_chars = 96) {
  return DisplayText(text, max_chars);
}

std::string Description(const std::string& name, const AttentionSet& set, const Example& ex, size_t n_sets) {
  const AttentionMap& m = ex.maps[0];
  std::string d = std::to_string(ex.layers) + " layer(s) x " + std::to_string(ex.heads) + " head(s), " +
                  std::to_string(m.target_tokens.size()) + " x " + std::to_string(m.source_tokens.size()) +
                  " tokens, from " + Shorten(name) + ".";
  if (n_sets > 1)
    d += " Attention set '" + Shorten(set.name) + "' (" + AttentionKindName(set.kind) + ") of " +
         std::to_string(n_sets) + ".";
  return d;
}

// Tokens as the viewer shows them: a tokenizer's word-start marker ("▁" in SentencePiece, "Ġ" in
// GPT-2's BPE) becomes a leading "·", which the labels draw as a dim mark or leave out (the
// "markers" command, app/labels.h). "▁" is taken as the marker even when the file does not name
// one (it is no letter of any script); "Ġ" only when named. The file keeps them.
std::vector<std::string> DisplayTokens(std::vector<std::string> tokens, const TokenizerInfo& t) {
  const std::string marker = t.space_marker.empty() ? std::string("\xe2\x96\x81") : t.space_marker;
  for (std::string& tok : tokens) {
    if (tok.compare(0, marker.size(), marker) == 0) tok = "\xc2\xb7" + tok.substr(marker.size());
    tok = DisplayText(tok, 64);
  }
  return tokens;
}

// One attention set as an example. The weights are moved, not copied; the tokens are shared by
// every map; layers with fewer heads are not padded.
// What every example from a file has: its file, set, kind, id and title.
static Example FileExample(const std::string& name, const std::string& set_name, AttentionKind kind, size_t n_sets,
                           const TokenizerInfo& tokenizer) {
  Example ex;
  ex.file = name;
  ex.set_name = n_sets > 1 ? set_name : "";
  ex.kind = AttentionKindName(kind);
  ex.special_tokens = tokenizer.special_tokens;
  ex.id = "file:" + name + (n_sets > 1 ? "#" + set_name : "");
  ex.title = Shorten(name) + (n_sets > 1 ? ": " + Shorten(set_name) : "");
  for (size_t p = ex.title.find("##"); p != std::string::npos; p = ex.title.find("##", p + 2))
    ex.title.replace(p, 2, "# #");  // "##" in an ImGui label would hide the rest of it
  return ex;
}

Example ExampleFromSet(const std::string& name, AttentionSet&& set, size_t n_sets, const TokenizerInfo& tokenizer) {
  Example ex = FileExample(name, set.name, set.kind, n_sets, tokenizer);
  AttentionFile& f = set.data;
  ex.layers = (int)f.layers.size();
  ex.heads = 1;
  bool uniform = true;
  for (const auto& l : f.layers) {
    uniform = uniform && l.heads.size() == f.layers[0].heads.size();
    ex.heads = std::max(ex.heads, (int)l.heads.size());
  }
  const TokenList source(DisplayTokens(std::move(f.source_tokens), tokenizer));
  const TokenList target(DisplayTokens(std::move(f.target_tokens), tokenizer));
  for (auto& layer : f.layers) {
    if (!uniform) ex.layer_first_map.push_back((int)ex.maps.size());
    const std::string layer_name = Shorten(layer.name);
    for (auto& head : layer.heads) {
      AttentionMap m;
      m.name = layer_name + " / " + Shorten(head.name);
      m.source_tokens = source;
      m.target_tokens = target;
      m.weights = std::move(head.weights);
      m.q = std::move(head.q), m.k = std::move(head.k);
      ex.maps.push_back(std::move(m));
    }
  }
  ex.description = Description(name, set, ex, n_sets);
  return ex;
}

// The set to show first: a cross-attention set plays as the translation figures do.
size_t FirstSet(const AttentionDocument& doc) {
  if (doc.sets.size() < 2) return 0;
  for (size_t i = 0; i < doc.sets.size(); ++i)
    if (doc.sets[i].kind == AttentionKind::Cross) return i;
  return 0;
}

void AppendWarnings(const std::vector<std::string>& warnings, std::string* description) {
  const size_t shown = std::min<size_t>(warnings.size(), 8);
  for (size_t i = 0; i < shown; ++i) *description += "\nWarning: " + Shorten(warnings[i], 200);
  if (warnings.size() > shown)
    *description += "\n... and " + std::to_string(warnings.size() - shown) + " more warnings";
}

// A file name made of the example id, safe on every file system (ExportStem).
std::string DownloadName(const std::string& id, const char* extension) {
  return ExportStem(id) + extension;
}

void QueueDownload(AppState* s, const std::string& name, const char* mime, const std::string& text) {
  PendingDownload d;
  d.name = name;
  d.mime = mime;
  d.bytes.assign(text.begin(), text.end());
  s->downloads.push_back(std::move(d));
  s->Notify("saved " + name, false);
}

void QueueDownload(AppState* s, const std::string& name, const char* mime, std::vector<uint8_t> bytes) {
  PendingDownload d;
  d.name = name;
  d.mime = mime;
  d.bytes = std::move(bytes);
  s->downloads.push_back(std::move(d));
  s->Notify("saved " + name, false);
}

}  // namespace

std::string ExportStem(const std::string& id) {
  std::string file = id.rfind("file:", 0) == 0 ? id.substr(5) : id, set;
  const size_t hash = file.find('#');
  if (hash != std::string::npos) set = file.substr(hash + 1), file.resize(hash);
  const size_t dot = file.rfind('.');
  if (dot != std::string::npos && dot > 0 && file.size() - dot <= 13 &&
      file.find_first_of("/\\", dot) == std::string::npos)
    file.resize(dot);  // attention.npz -> attention
  std::string stem = set.empty() ? file : file + "-" + set;
  for (char& c : stem)
    if ((unsigned char)c < 0x20 || c == 0x7f || std::strchr(":/\\ #?*<>|\"", c)) c = '_';
  size_t end = std::min<size_t>(stem.size(), 120);
  while (end > 0 && end < stem.size() && ((unsigned char)stem[end] & 0xC0) == 0x80) --end;  // a whole UTF-8 character
  stem.resize(end);
  return stem.empty() ? "attention" : stem;
}

// Opening a file again replaces it, and only the last kMaxOpenFiles files stay open: repeated
// opens leave memory flat. Returns the example to come back to (its new index).
constexpr int kMaxOpenFiles = 8;

int ForgetOldFiles(AppState* s, const std::string& name) {
  std::vector<std::string> files;  // distinct opened files, oldest first
  for (const Example& e : s->examples)
    if (!e.file.empty() && std::find(files.begin(), files.end(), e.file) == files.end()) files.push_back(e.file);
  std::vector<std::string> drop;
  if (std::find(files.begin(), files.end(), name) != files.end()) drop.push_back(name);
  const int keep_others = kMaxOpenFiles - 1;
  const int others = (int)files.size() - (int)drop.size();
  for (int i = 0, n = others - keep_others; i < (int)files.size() && n > 0; ++i)
    if (files[(size_t)i] != name) drop.push_back(files[(size_t)i]), --n;
  if (drop.empty()) return s->current;
  for (auto& v : s->views) v->ReleaseTextures(s);  // the views' textures may hold maps about to go
  const std::string current_id = s->Current().id;
  s->examples.erase(
      std::remove_if(s->examples.begin(), s->examples.end(),
                     [&](const Example& e) { return std::find(drop.begin(), drop.end(), e.file) != drop.end(); }),
      s->examples.end());
  int back = 0;
  for (int i = 0; i < (int)s->examples.size(); ++i)
    if (s->examples[(size_t)i].id == current_id) back = i;
  s->current = back;
  return back;
}

Status OpenAttentionFile(AppState* s, const std::string& name, const unsigned char* data, size_t size) {
  AttentionDocument doc;
  const Status st = LoadAttentionDocument(data, size, &doc);
  if (!st) return Status::Error("could not open " + Shorten(name) + ": " + st.message);
  return OpenAttentionDocument(s, name, &doc);
}

Status OpenAttentionDocument(AppState* s, const std::string& name, AttentionDocument* document) {
  AttentionDocument& doc = *document;
  const int previous = ForgetOldFiles(s, name);
  const size_t first_new = s->examples.size(), n_sets = doc.sets.size(), first = FirstSet(doc);
  const bool plays = n_sets > 1 && doc.sets[first].kind == AttentionKind::Cross;
  for (AttentionSet& set : doc.sets) s->examples.push_back(ExampleFromSet(name, std::move(set), n_sets, doc.tokenizer));
  AppendWarnings(doc.warnings, &s->examples[first_new].description);
  const Status selected = SelectExample(s, (int)(first_new + first));
  if (!selected) {
    s->examples.resize(first_new);
    (void)SelectExample(s, std::min(previous, (int)s->examples.size() - 1));  // an example that opened before
    return Status::Error("could not open " + Shorten(name) + ": " + selected.message);
  }
  if (plays) {  // the decoder's words appear one by one while their rows fill in
    (void)SelectView(s, "heatmap");
    s->timeline.Home();
    s->timeline.Play();
  } else if (s->Current().maps.size() > 1) {
    (void)SelectView(s, "grid");  // the registry always has both views
  }
  const std::string sets = n_sets > 1 ? " (" + std::to_string(n_sets) + " attention sets)" : "";
  s->Notify("opened " + Shorten(name) + sets + (doc.warnings.empty() ? "" : ", with warnings (see the sidebar)"),
            false);
  return Status::Ok();
}

// ---- lazily read files (safetensors) -------------------------------------------------------------

namespace {

// A set without stored overviews whose heads are bigger than a screen copy: the grid would read
// every head it shows whole to pool one (a .npy of an LLM's attention: GBs before the first screen
// fills), so such a file opens on its first head, and its description says how to get overviews.
bool PoolsBigHeads(const LazySet& set) {
  return !set.Has(LazyPool::Overview) && set.n_q * set.n_k > int64_t(kScreenSide) * kScreenSide;
}

// One set of a lazily read file as an example: maps of the right shape without weights.
Example ExampleFromLazySet(const std::string& name, const std::shared_ptr<LazyMaps>& lazy, int s,
                           const TokenizerInfo& tokenizer) {
  const LazyAttentionIndex& ix = lazy->index();
  const LazySet& set = ix.sets[(size_t)s];
  const size_t n_sets = ix.sets.size();
  Example ex = FileExample(name, set.name, set.kind, n_sets, tokenizer);
  ex.lazy = lazy;
  ex.lazy_set = s;
  ex.layers = (int)set.layers.size();
  ex.heads = set.MaxHeads();
  bool uniform = true;
  for (const LazyLayer& l : set.layers) uniform = uniform && l.heads == set.layers[0].heads;
  const TokenList source(DisplayTokens(set.key_tokens, tokenizer));
  const TokenList target(DisplayTokens(set.query_tokens, tokenizer));
  for (const LazyLayer& layer : set.layers) {
    if (!uniform) ex.layer_first_map.push_back((int)ex.maps.size());
    const std::string layer_name = Shorten(layer.name);
    for (int h = 0; h < layer.heads; ++h) {
      AttentionMap m;
      m.name = layer_name + " / " +
               Shorten(h < (int)set.head_names.size() ? set.head_names[(size_t)h] : "head " + std::to_string(h));
      m.source_tokens = source;
      m.target_tokens = target;
      m.lazy_rows = (int)set.n_q;
      m.lazy_cols = (int)set.n_k;
      ex.maps.push_back(std::move(m));
    }
  }
  ex.description = std::to_string(ex.layers) + " layer(s) x " + std::to_string(ex.heads) + " head(s), " +
                   std::to_string(set.n_q) + " x " + std::to_string(set.n_k) + " tokens, read lazily from " +
                   Shorten(name) + " (" + FormatApproxByteSize(ix.header.file_size) +
                   "): heads are read when you look at them and kept within a cache budget (CACHE, below).";
  if (n_sets > 1)
    ex.description += " Attention set '" + Shorten(set.name) + "' (" + AttentionKindName(set.kind) + ") of " +
                      std::to_string(n_sets) + ".";
  bool indices = false;  // the file gave no tokens (a .npy)
  for (const std::string& w : ix.warnings) indices = indices || w.find("using indices") != std::string::npos;
  if (PoolsBigHeads(set))
    ex.description +=
        " The file stores no overviews, so the grid reads each head it shows whole; 'attnviz-cli convert " +
        Shorten(name) + " out.safetensors' writes them" + (indices ? " (with --tokens FILE, the tokens too)." : ".");
  return ex;
}

}  // namespace

Status OpenLazyAttention(AppState* s, const std::string& name, std::unique_ptr<ByteSource> source,
                         const uint8_t* prefix, size_t n) {
  std::vector<uint8_t> own;
  if (!prefix) {  // a synchronous source: read the header through it
    const Status st = ReadLazyPrefix(source.get(), &own);
    if (!st) return Status::Error("could not open " + Shorten(name) + ": " + st.message);
    prefix = own.data();
    n = own.size();
  }
  auto lazy = std::make_shared<LazyMaps>();
  const Status st = lazy->Open(name, std::move(source), prefix, n);
  if (!st) return Status::Error("could not open " + Shorten(name) + ": " + st.message);
  const LazyAttentionIndex& ix = lazy->index();
  const int previous = ForgetOldFiles(s, name);
  const size_t first_new = s->examples.size();
  for (int i = 0; i < (int)ix.sets.size(); ++i) s->examples.push_back(ExampleFromLazySet(name, lazy, i, ix.tokenizer));
  AppendWarnings(ix.warnings, &s->examples[first_new].description);
  size_t first = 0;  // a cross set first, as for eager files
  for (size_t i = 0; i < ix.sets.size() && ix.sets.size() > 1; ++i)
    if (ix.sets[i].kind == AttentionKind::Cross) {
      first = i;
      break;
    }
  const Status selected = SelectExample(s, (int)(first_new + first));
  if (!selected) {
    s->examples.resize(first_new);
    (void)SelectExample(s, std::min(previous, (int)s->examples.size() - 1));
    return Status::Error("could not open " + Shorten(name) + ": " + selected.message);
  }
  const bool pools_big_heads = PoolsBigHeads(ix.sets[first]);
  (void)SelectView(s, s->Current().maps.size() > 1 && !pools_big_heads ? "grid" : "heatmap");
  s->Notify("opened " + Shorten(name) + " (" + FormatApproxByteSize(ix.header.file_size) + ")" +
                (pools_big_heads ? " on its first head: the file stores no overviews for the grid (see its description)"
                                 : ": heads are read as you look at them"),
            false);
  return Status::Ok();
}

// ---- files read in pieces: progress, cancel ----------------------------------------------------

namespace {
Status CancelledLoad(AppState* s) {
  const std::string name = s->load.name;
  s->load = FileLoad();
  return Status::Error("cancelled: " + Shorten(name) + " was not opened");
}
}  // namespace

Status BeginFileLoad(AppState* s, const std::string& name, uint64_t total) {
  FileLoad& L = s->load;
  L = FileLoad();
  L.name = name;
  L.total = total;
  L.active = true;
  L.in_app = true;
  const Status st = L.loader.Begin(total);
  if (!st) {
    L = FileLoad();
    return Status::Error("could not open " + Shorten(name) + ": " + st.message);
  }
  return Status::Ok();
}

Status FeedFileLoad(AppState* s, const unsigned char* data, size_t n) {
  FileLoad& L = s->load;
  if (!L.active || !L.in_app) return Status::Error("no file is being loaded");
  if (L.cancel) return CancelledLoad(s);
  const Status st = L.loader.Feed(data, n);
  if (!L.HandingOver())
    L.received = L.loader.received();
  else if (L.stage == LoadStage::kHandOver)  // the worker read it all: the bar shows the handover
    L.received = std::min(L.loader.received(), L.total);
  if (!st) {
    const std::string name = L.name;
    L = FileLoad();
    return Status::Error("could not open " + Shorten(name) + ": " + st.message);
  }
  return Status::Ok();
}

namespace {
// What the progress window shows while the load worker reads and hands over (ProgressFileLoad).
void ShowWorkerProgress(FileLoad* L, uint64_t file_bytes) {
  if (L->stage == LoadStage::kHandOver) {
    L->total = L->handover_total;
    L->received = std::min(L->loader.received(), L->total);
  } else {
    L->received = std::min(file_bytes, L->total);
  }
}
}  // namespace

Status ProgressFileLoad(AppState* s, uint64_t received) {
  FileLoad& L = s->load;
  if (!L.active || !L.in_app) return Status::Error("no file is being loaded");
  if (L.cancel) return CancelledLoad(s);
  if (L.stage == LoadStage::kHandOver) return Status::Ok();  // already showing the handover
  if (L.stage == LoadStage::kHere) L.stage = LoadStage::kWorkerReads;
  if (received >= L.total)  // read all: a handover under way now shows
    L.stage = L.stage == LoadStage::kWorkerReadsAndHandsOver ? LoadStage::kHandOver : LoadStage::kWorkerRead;
  ShowWorkerProgress(&L, received);
  return Status::Ok();
}

Status HandOverFileLoad(AppState* s, uint64_t total) {
  FileLoad& L = s->load;
  if (!L.active || !L.in_app) return Status::Error("no file is being loaded");
  if (L.cancel) return CancelledLoad(s);
  const Status st = L.loader.BeginHandover();
  if (!st) {
    const std::string name = L.name;
    L = FileLoad();
    return Status::Error("could not open " + Shorten(name) + ": " + st.message);
  }
  const bool read_all = L.stage == LoadStage::kWorkerRead || L.stage == LoadStage::kHandOver;
  L.stage = read_all ? LoadStage::kHandOver : LoadStage::kWorkerReadsAndHandsOver;
  L.handover_total = total;
  ShowWorkerProgress(&L, L.received);
  return Status::Ok();
}

size_t FileLoadRoom(AppState* s, uint8_t** dst) {
  FileLoad& L = s->load;
  return L.active && L.in_app && L.HandingOver() && !L.cancel ? L.loader.HandoverRoom(dst) : 0;
}

Status AdvanceFileLoad(AppState* s, size_t n) {
  FileLoad& L = s->load;
  if (!L.active || !L.in_app || !L.HandingOver()) return Status::Error("no file is being handed over");
  const Status st = L.loader.HandoverAdvance(n);
  if (L.stage == LoadStage::kHandOver) L.received = std::min(L.loader.received(), L.total);
  if (!st) {
    const std::string name = L.name;
    L = FileLoad();
    return Status::Error("could not open " + Shorten(name) + ": " + st.message);
  }
  return Status::Ok();
}

Status FinishFileLoad(AppState* s) {
  FileLoad& L = s->load;
  if (!L.active || !L.in_app) return Status::Error("no file is being loaded");
  AttentionDocument doc;
  const std::string name = L.name;
  const Status st = L.cancel ? Status::Error("cancelled") : L.loader.Finish(&doc);
  L = FileLoad();
  if (!st)
    return Status::Error((st.message == "cancelled" ? "cancelled: " : "could not open ") + Shorten(name) +
                         (st.message == "cancelled" ? " was not opened" : ": " + st.message));
  return OpenAttentionDocument(s, name, &doc);
}

void DescribeFileLoads(AppState* s, JsonWriter* w) {
  const FileLoad& L = s->load;
  w->Key("loading");
  if (!L.active) {
    w->Null();
    return;
  }
  w->BeginObject();
  w->Key("name");
  w->String(L.name);
  w->Key("received");
  w->Number((double)L.received);
  w->Key("total");
  w->Number((double)L.total);
  w->Key("cancel");
  w->Bool(L.cancel);
  w->Key("stage");  // loading: read here; reading: by the load worker; opening: its document handed over
  w->String(L.WorkerReading() ? "reading" : L.HandingOver() ? "opening" : "loading");
  w->Key("cancel_rect");
  w->BeginArray(true);
  for (float x : L.cancel_rect) w->NumberF(x);
  w->EndArray();
  w->EndObject();
}

void DrawLoadProgress(AppState* s) {
  FileLoad& L = s->load;
  if (!L.active) return;
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float w = std::min(460.0f, display.x - 40.0f);
  ImGui::SetNextWindowPos(ImVec2(display.x * 0.5f, display.y * 0.5f), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(ImVec2(w, 0));
  ImGui::Begin("##loading", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings);
  // The load worker reads the file, then the rest of its handover comes in: said apart (describe's
  // "stage" says the same).
  ImGui::Text("%s %s",
              L.WorkerReading() ? "Reading"
              : L.HandingOver() ? "Opening"
                                : "Loading",
              Shorten(L.name, 48).c_str());
  const float f = L.total ? (float)((double)L.received / (double)L.total) : 0.0f;
  char text[64];
  std::snprintf(text, sizeof(text), "%.0f%%  (%.1f of %.1f MB)", 100.0f * f, (double)L.received / 1048576.0,
                (double)L.total / 1048576.0);
  ImGui::ProgressBar(f, ImVec2(-1, 0), text);
  if (L.cancel) {
    ImGui::TextDisabled("cancelling...");
  } else {
    if (ImGui::Button("Cancel")) L.cancel = true;
    const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
    L.cancel_rect[0] = a.x, L.cancel_rect[1] = a.y, L.cancel_rect[2] = b.x, L.cancel_rect[3] = b.y;
  }
  ImGui::End();
}

std::vector<int> SiblingSets(AppState* s) {
  std::vector<int> out;
  const Example& cur = s->Current();
  if (cur.file.empty() || cur.set_name.empty()) return out;
  for (int i = 0; i < (int)s->examples.size(); ++i) {
    const Example& e = s->examples[(size_t)i];
    // The sets of one opening of the file: contiguous, same file, all named.
    if (e.file == cur.file && !e.set_name.empty() && std::abs(i - s->current) < 1024) out.push_back(i);
  }
  return out;
}

Status SelectSet(AppState* s, const std::string& which) {
  const std::vector<int> sets = SiblingSets(s);
  if (sets.empty()) return Status::Error("the current example has no attention sets to choose from");
  for (int i : sets)
    if (s->examples[(size_t)i].set_name == which) return SelectExample(s, i);
  char* end = nullptr;
  const long k = std::strtol(which.c_str(), &end, 10);
  if (!which.empty() && *end == 0 && k >= 0 && k < (long)sets.size()) return SelectExample(s, sets[(size_t)k]);
  std::string names;
  for (int i : sets) names += (names.empty() ? "" : ", ") + s->examples[(size_t)i].set_name;
  return Status::Error("unknown attention set '" + which + "' (" + names + ")");
}

namespace {

constexpr const char* kSaveNpyAdvice = "save-npy saves the map shown in 4 bytes a weight";

// Room for an export of about `bytes` (built, then copied into the download): asked of the allocator
// first, so a CSV of a big lazily read head that the heap cannot hold is said, not an abort. advice:
// what to do instead.
Status ExportRoom(const char* what, const std::string& thing, uint64_t bytes, const char* advice = kSaveNpyAdvice) {
  if (bytes < (uint64_t(64) << 20) || (bytes <= SIZE_MAX / 2 && TryAllocate((size_t)(bytes * 2)))) return Status::Ok();
  return Status::Error(std::string(what) + ": not enough memory for " + thing + " (about " +
                       FormatApproxByteSize(bytes) + ", held twice while saved); " + advice);
}
std::string MapSize(const AttentionMap& m) {
  return "this " + std::to_string(m.weights.rows()) + " x " + std::to_string(m.weights.cols()) + " map";
}

}  // namespace

// Exports need the whole map m in memory (a lazily read head may be on its way, or only a band of
// it); a view's own map (the translation) must exist.
Status NeedWholeMap(AppState* s, const AttentionMap& m) {
  if (&m != &s->CurrentMap()) return m.weights.size() > 0 ? Status::Ok() : Status::Error("there is no map to save yet");
  if (m.Complete()) return Status::Ok();
  return Status::Error(m.name + " is not all in memory yet; wait for it, or zoom out");
}

std::string LayerSuffix(int layer) {
  return "-layer" + std::to_string(layer);
}

std::string MapSuffix(const AppState* s) {
  const Example& ex = s->examples[(size_t)s->current];
  if (ex.maps.size() <= 1) return "";
  int layer = 0, head = 0;
  ex.LayerHeadOf(s->current_map, &layer, &head);
  return LayerSuffix(layer) + "-head" + std::to_string(head);
}

// A file name (without its extension) for exports of map m: the example's stem and the map's layer
// and head (MapSuffix); the view's name for a map of its own (the translation).
std::string MapFileStem(AppState* s, const AttentionMap& m) {
  if (&m != &s->CurrentMap()) return ViewInfoAt(s->view).name;
  return ExportStem(s->Current().id) + MapSuffix(s);
}

Status QueueSvgDownload(AppState* s) {
  HeatmapStyle style;
  std::string title;
  const AttentionMap& m = s->ColouredMap(&style, &title);  // the translation in Translate, ...
  if (Status st = NeedWholeMap(s, m); !st) return st;
  std::string view_svg;
  Status view_status;
  if (s->ActiveView().ExportSvg(s, &view_svg, &view_status)) {  // the lines view draws its own
    if (view_status)  // named after the head or the layer it shows, as its PNG (FigureSuffix)
      QueueDownload(s, DownloadName(s->Current().id, (s->ActiveView().FigureSuffix(s) + "-lines.svg").c_str()),
                    "image/svg+xml", view_svg);
    return view_status;
  }
  SvgHeatmapOptions opt;
  opt.vmin = style.vmin;
  opt.vmax = style.vmax;
  opt.scale = (ColourScale)style.scale;  // the scale the view shows (log, per row), not always linear
  opt.show_values = s->style.show_numbers && m.weights.size() <= 400;
  opt.title = title;
  // A 4096 x 4096 head would be ~1.4 GiB of SVG (HeatmapSvg gave "" over the limit, and the viewer
  // downloaded that empty file without a word).
  if (Status st = CheckSvgHeatmapSize(m.weights.rows(), m.weights.cols(), opt); !st)
    return Status::Error("save-" + st.message + ": save a PNG (save-png, Ctrl+Shift+S) or .npy (save-npy)");
  if (Status st = ExportRoom("save-svg", MapSize(m), (uint64_t)m.weights.size() * 90); !st) return st;
  std::string svg;
  const Status st = HeatmapSvgString(m.weights, m.source_tokens.vec(), m.target_tokens.vec(),
                                     ColormapName(s->style.colormap), opt, &svg);
  if (!st) return st;
  QueueDownload(s, MapFileStem(s, m) + ".svg", "image/svg+xml", std::move(svg));
  return Status::Ok();
}

Status QueueJsonDownload(AppState* s) {
  const Example& ex = s->Current();
  if (ex.lazy)
    return Status::Error(std::string("a lazily read file is not saved as JSON (it may not fit in memory); ") +
                         kSaveNpyAdvice);
  uint64_t weights = 0;
  for (const AttentionMap& m : ex.maps) weights += (uint64_t)m.weights.size();
  if (Status st = ExportRoom("save-json", "this file's " + std::to_string(ex.maps.size()) + " maps", weights * 12); !st)
    return st;
  AttentionFile file;
  file.source_tokens = ex.maps[0].source_tokens.vec();
  file.target_tokens = ex.maps[0].target_tokens.vec();
  for (int i = 0; i < (int)ex.maps.size(); ++i) {
    int l, h;
    ex.LayerHeadOf(i, &l, &h);
    while ((int)file.layers.size() <= l) file.layers.push_back({"layer " + std::to_string(file.layers.size()), {}});
    const AttentionMap& m = ex.maps[(size_t)i];
    file.layers[(size_t)l].heads.push_back(
        {m.name.empty() ? "head " + std::to_string(h) : m.name, m.weights, m.q, m.k});
  }
  const std::string json = SaveAttentionJson(file);
  QueueDownload(s, DownloadName(ex.id, ".json"), "application/json", json);
  return Status::Ok();
}

Status QueueCsvDownload(AppState* s) {
  const AttentionMap& m = s->ColouredMap(nullptr);  // the map shown
  if (Status st = NeedWholeMap(s, m); !st) return st;
  if (Status st = ExportRoom("save-csv", MapSize(m), (uint64_t)m.weights.size() * 10); !st) return st;
  const std::string csv = MatrixCsv(m.weights, m.source_tokens.vec(), m.target_tokens.vec());
  QueueDownload(s, MapFileStem(s, m) + ".csv", "text/csv", csv);
  return Status::Ok();
}

Status QueueNpyDownload(AppState* s) {
  const AttentionMap& m = s->ColouredMap(nullptr);  // the map shown
  if (Status st = NeedWholeMap(s, m); !st) return st;
  if (Status st = ExportRoom("save-npy", MapSize(m), (uint64_t)m.weights.size() * 4,
                             "save a PNG of the view instead (save-png, Ctrl+Shift+S)");
      !st)
    return st;
  std::vector<uint8_t> bytes;
  const Status st = WriteNpyMatrix(m.weights, &bytes);  // one copy of the weights (a 4096^2 head: 64 MB)
  if (!st) return st;
  QueueDownload(s, MapFileStem(s, m) + ".npy", "application/octet-stream", std::move(bytes));
  return Status::Ok();
}

}  // namespace attnviz
