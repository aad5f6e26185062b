#include "app/views/translate.h"

#include <algorithm>
#include <cstdio>

#include "app/app_state.h"
#include "app/help_tip.h"
#include "imgui.h"
#include "io/json.h"

namespace attnviz {
namespace {

const ImVec4 kErrorColour(1.0f, 0.45f, 0.4f, 1);

// Rebuilds the shown map from the translation (mean, or one layer/head).
void BuildTranslateMap(TranslateViewState* t) {
  const seq2seq::Translation& r = t->result;
  AttentionMap& m = t->map;
  std::vector<std::string> source = r.source_tokens, target = r.target_tokens;
  for (int pos : r.unknown_positions)
    if (pos >= 0 && pos < (int)source.size()) source[(size_t)pos] += " (?)";
  target.push_back("</s>");
  m.source_tokens = std::move(source);
  m.target_tokens = std::move(target);
  // -1: the alignment matrix (the supervised head of a Transformer trained with one, else the
  // mean); -2: the mean over layers and heads; else one layer/head.
  const MatrixRM* w = t->layer_head == -2 ? &r.attention : &seq2seq::AlignmentMatrix(r);
  const int heads = r.layer_heads.empty() ? 0 : (int)r.layer_heads[0].size();
  if (t->layer_head >= 0 && heads > 0) {
    const int l = t->layer_head / heads, h = t->layer_head % heads;
    if (l < (int)r.layer_heads.size() && h < (int)r.layer_heads[(size_t)l].size())
      w = &r.layer_heads[(size_t)l][(size_t)h];
  }
  m.weights = *w;
  m.has_steps = false;
  const std::string supervised = seq2seq::SupervisedHeadName(r);
  m.name = t->layer_head >= 0
               ? "layer/head " + std::to_string(t->layer_head)
               : (t->layer_head == -1 && !supervised.empty() ? supervised : "mean over layers and heads");
  m.Touch();
}

// Every occurrence of the (unknown) word `from` in the sentence becomes `to`, if it still fits.
void ReplaceWord(TranslateViewState* t, const std::string& from, const std::string& to) {
  std::vector<std::string> toks = seq2seq::Tokenize(t->input);
  for (std::string& tok : toks)
    if (tok == from) tok = to;
  const std::string joined = seq2seq::Join(toks);
  if (joined.size() < sizeof(t->input)) std::snprintf(t->input, sizeof(t->input), "%s", joined.c_str());
}

std::string HeadLabel(const seq2seq::Translation& r, int i, int heads) {
  if (i == -2) return "mean of all heads";
  if (i == -1) return r.supervised_layer >= 0 ? "supervised head" : "mean of all heads";
  const bool sup = i / heads == r.supervised_layer && i % heads == r.supervised_head;
  return "layer " + std::to_string(i / heads + 1) + ", head " + std::to_string(i % heads + 1) +
         (sup ? " (supervised)" : "");
}

// Layer / head choice for multi-head models; returns true when it changed.
bool DrawHeadChoice(TranslateViewState* t) {
  const int layers = (int)t->result.layer_heads.size();
  const int heads = layers ? (int)t->result.layer_heads[0].size() : 0;
  if (layers * heads <= 1) return false;
  const float font = ImGui::GetFontSize();
  ImGui::SameLine(ImGui::GetContentRegionAvail().x - font * 12);
  ImGui::SetNextItemWidth(font * 12);
  bool changed = false;
  const seq2seq::Translation& r = t->result;
  if (ImGui::BeginCombo("##lh", HeadLabel(r, t->layer_head, heads).c_str())) {
    for (int i = r.supervised_layer >= 0 ? -2 : -1; i < layers * heads; ++i)
      if (ImGui::Selectable(HeadLabel(r, i, heads).c_str(), i == t->layer_head)) t->layer_head = i, changed = true;
    ImGui::EndCombo();
  }
  HelpTip(
      "The Transformer's supervised head (trained on gold alignments, Garg et al. 2019), the mean over every "
      "layer and head, or one cross-attention head.");
  return changed;
}

}  // namespace

const char* TranslateView::SidebarAbout() const {
  return "A sequence-to-sequence model trained by attnviz on a small English-French grammar. Type a sentence and "
         "press Enter: the words appear one by one while the alignment matrix fills in, row by row, as in the "
         "figures of Bahdanau et al. (2015).";
}

void TranslateView::ReleaseTextures(AppState* s) {
  s->ReleaseTextures(&state.widget);
}

Status TranslateView::Translate(AppState* s) {
  TranslateViewState& t = state;
  t.error.clear();
  t.has_result = false;
  t.suggestions.clear();
  ModelSlot* slot = s->models.Chosen();
  Status st = slot ? s->models.EnsureLoaded(slot) : Status::Error("no model: train one in the Train tab");
  if (!st && slot && slot->fetching) {  // the web build fetches the model first: translate when it arrives
    t.loading = st.message;
    t.retry_when_loaded = true;
    return Status::Ok();
  }
  t.loading.clear();
  if (st) st = seq2seq::Translate(slot->model, t.input, seq2seq::TranslateOptions(), &t.result);
  if (!st) {
    t.error = st.message;
    return st;
  }
  for (int pos : t.result.unknown_positions)
    t.suggestions.push_back(slot->model.source_vocab.Suggest(t.result.source_tokens[(size_t)pos], 3, 3));
  t.has_result = true;
  BuildTranslateMap(&t);
  const seq2seq::FigureSentence* fig = seq2seq::FindFigure(t.figure);
  if (fig && fig->text != t.input) t.figure.clear();  // the user typed another sentence
  ScoreFigure(s);
  s->ReleaseTextures(&t.widget);
  t.widget = HeatmapViewState{};
  t.timeline.Reset(TimelineMode::Decoding, (int)t.map.weights.rows());
  t.timeline.speed = 2.5f;
  t.timeline.Home();
  t.timeline.Play();
  return Status::Ok();
}

void TranslateView::DrawFigurePicker(AppState* s) {
  const float font = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(font * 6);
  if (ImGui::BeginCombo("##figures", "Figures", ImGuiComboFlags_HeightLarge)) {
    for (const seq2seq::FigureSentence& f : seq2seq::FigureSentences()) {
      if (!ImGui::Selectable(f.label.c_str(), f.id == state.figure)) continue;
      const Status st = PlayFigure(s, f.id);
      if (!st) s->Notify(st.message, true);
    }
    ImGui::EndCombo();
  }
  HelpTip(
      "The sentences of the translation figures people know: Figure 3 of Bahdanau, Cho and Bengio (2015) "
      "and the Spanish examples of TensorFlow's attention tutorial, with hand-made gold alignments.");
  ImGui::SameLine();
}

Status TranslateView::PlayFigure(AppState* s, const std::string& id) {
  const seq2seq::FigureSentence* f = seq2seq::FindFigure(id);
  if (!f) return Status::Error("unknown figure '" + id + "' (a, b, c, d, es1, es2, es3, es4)");
  const bool es = f->task == seq2seq::Task::EsEn;
  ModelLibrary& lib = s->models;
  const ModelSlot* cur = lib.Chosen();
  const bool cur_es = cur && cur->file.find("es-en") != std::string::npos;
  if (!cur || cur_es != es || cur->file.empty()) {  // a pretrained model of the figure's task
    int pick = -1;
    for (int i = 0; i < (int)lib.slots.size() && pick < 0; ++i)
      if (!lib.slots[(size_t)i].file.empty() && (lib.slots[(size_t)i].file.find("es-en") != std::string::npos) == es)
        pick = i;
    if (pick < 0) return Status::Error("no model translates " + std::string(seq2seq::TaskName(f->task)));
    lib.slot = pick;
    state.layer_head = -1;
  }
  std::snprintf(state.input, sizeof(state.input), "%s", f->text.c_str());
  state.figure = id;
  state.auto_translate = false;
  return Translate(s);
}

// The figure's gold alignment as a map with the decoded rows (sure links 1, possible 0.5), and the
// model's verdict: exact translation?, AER of its alignment.
void TranslateView::ScoreFigure(AppState* s) {
  TranslateViewState& t = state;
  t.figure_scored = false;
  const seq2seq::FigureSentence* f = seq2seq::FindFigure(t.figure);
  const ModelSlot* slot = s->models.Chosen();
  if (!f || !slot || !slot->loaded) return;
  seq2seq::FigureResult r;
  if (!seq2seq::EvaluateFigure(slot->model, *f, &r)) return;
  t.figure_scored = true;
  t.figure_exact = r.exact;
  t.figure_aer = r.aer;
  std::vector<std::string> rows = f->gold.target;
  rows.push_back("</s>");
  t.gold.name = "gold alignment";
  t.gold.source_tokens = t.map.source_tokens;
  t.gold.target_tokens = rows;
  t.gold.weights = MatrixRM::Zero((Eigen::Index)rows.size(), (Eigen::Index)f->gold.source.size());
  for (const seq2seq::Link& l : f->gold.links)
    t.gold.weights(l.target, l.source) = std::max(t.gold.weights(l.target, l.source), l.sure ? 1.0f : 0.5f);
  t.gold.weights((Eigen::Index)rows.size() - 1, (Eigen::Index)f->gold.source.size() - 1) =
      1.0f;  // </s> on the last token
  t.gold.Touch();
  s->ReleaseTextures(&t.gold_widget);
  t.gold_widget = HeatmapViewState{};
}

void TranslateView::DrawInputBar(AppState* s) {
  DrawFigurePicker(s);
  const float font = ImGui::GetFontSize();
  ModelLibrary& lib = s->models;
  // A narrow viewer (a phone, a small embed) puts the sentence on a row of its own: beside the
  // pickers it was pushed past the right edge, where it could not be typed in.
  const bool narrow = ImGui::GetContentRegionAvail().x < font * 40;
  ImGui::SetNextItemWidth(narrow ? std::max(font * 6, ImGui::GetContentRegionAvail().x) : font * 19);
  const ModelSlot* chosen = lib.Chosen();
  if (ImGui::BeginCombo("##model", chosen ? chosen->label.c_str() : "(no model)")) {
    for (int i = 0; i < (int)lib.slots.size(); ++i)
      if (ImGui::Selectable(lib.slots[(size_t)i].label.c_str(), i == lib.slot)) {
        lib.slot = i;
        state.layer_head = -1;
        (void)Translate(s);  // a failure is shown under the bar
      }
    ImGui::EndCombo();
  }
  HelpTip(
      "Which model translates. The pretrained en-fr and es-en models were trained by attnviz-cli train "
      "(docs/MODELS.md) with guided alignment: a small extra loss pulls their attention towards hand-made gold "
      "links, so it is partly taught, not only learned from translating. A model you train in the Train tab "
      "appears here too.");
  if (!narrow) ImGui::SameLine();
  ImGui::SetNextItemWidth(std::max(font * 6, ImGui::GetContentRegionAvail().x - font * 7));
  const bool enter = ImGui::InputTextWithHint("##sentence", "an English sentence, e.g. the european economic area",
                                              state.input, sizeof(state.input), ImGuiInputTextFlags_EnterReturnsTrue);
  const ImVec2 lo = ImGui::GetItemRectMin(), hi = ImGui::GetItemRectMax();
  state.input_rect[0] = lo.x, state.input_rect[1] = lo.y, state.input_rect[2] = hi.x, state.input_rect[3] = hi.y;
  HelpTip(
      "Type an English sentence within the model's vocabulary and press Enter. Unknown words are marked (?) "
      "and get suggestions.");
  ImGui::SameLine();
  if (ImGui::Button("Translate", ImVec2(-1, 0)) || enter) (void)Translate(s);
}

// Each unknown word once (with how often it occurs), its suggestions as buttons that replace every
// occurrence; at most kUnknownLines lines, the rest named on hover, so a long sentence of unknown
// words leaves room for the figure.
bool TranslateView::DrawUnknownWords(AppState* s) {
  TranslateViewState& t = state;
  const ImVec4 warn(1.0f, 0.75f, 0.3f, 1);
  constexpr int kUnknownLines = 4;
  std::vector<std::string> seen;
  std::string more;
  t.unknown_lines = 0;
  for (size_t i = 0; i < t.result.unknown_positions.size(); ++i) {
    const std::string& word = t.result.source_tokens[(size_t)t.result.unknown_positions[i]];
    if (std::find(seen.begin(), seen.end(), word) != seen.end()) continue;
    seen.push_back(word);
    if ((int)seen.size() > kUnknownLines) {
      more += (more.empty() ? "" : ", ") + word;
      continue;
    }
    int times = 0;
    for (int pos : t.result.unknown_positions) times += t.result.source_tokens[(size_t)pos] == word;
    ++t.unknown_lines;
    if (times > 1)
      ImGui::TextColored(warn, "unknown word \"%s\" (%d times)", word.c_str(), times);
    else
      ImGui::TextColored(warn, "unknown word \"%s\"", word.c_str());
    ImGui::SameLine();
    if (i >= t.suggestions.size() || t.suggestions[i].empty()) {
      ImGui::TextDisabled("(no close word in the vocabulary)");
      continue;
    }
    ImGui::TextDisabled("did you mean");
    for (const auto& sug : t.suggestions[i]) {
      ImGui::SameLine();
      ImGui::PushID(&sug);
      const bool take = ImGui::SmallButton(sug.token.c_str());
      ImGui::PopID();
      if (!take) continue;
      ReplaceWord(&t, word, sug.token);
      (void)Translate(s);
      return true;
    }
  }
  if (!more.empty()) {
    ImGui::TextColored(warn, "and %d more unknown words", (int)seen.size() - kUnknownLines);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", more.c_str());
    ++t.unknown_lines;
  }
  return false;
}

// The translation so far: words appear as the decoder emits them.
void TranslateView::DrawOutputLine() {
  TranslateViewState& t = state;
  const int shown = std::min(t.timeline.Step(), (int)t.result.target_tokens.size());
  t.shown_words.clear();
  for (int i = 0; i < shown; ++i) t.shown_words += (i ? " " : "") + t.result.target_tokens[(size_t)i];
  ImGui::TextWrapped("\xe2\x86\x92  %s%s", t.shown_words.c_str(),  // a long translation wraps, not cut off
                     shown < (int)t.result.target_tokens.size() ? " \xe2\x80\xa6" : "");
}

void TranslateView::Draw(AppState* s) {
  TranslateViewState& t = state;
  t.shown_words.clear();
  t.widget.geom.valid = false;
  if (t.auto_translate) {
    t.auto_translate = false;
    (void)Translate(s);  // a failure is shown below
  }
  DrawInputBar(s);
  if (!t.loading.empty()) {
    ImGui::TextDisabled("%s\xe2\x80\xa6", t.loading.c_str());
    return;
  }
  if (!t.error.empty()) {
    ImGui::TextColored(kErrorColour, "%s", t.error.c_str());
    return;
  }
  if (!t.has_result || DrawUnknownWords(s)) return;
  DrawOutputLine();
  if (DrawHeadChoice(&t)) BuildTranslateMap(&t);
  DrawTimelineControls(&t.timeline, "emitted");
  t.widget.rows_shown = t.timeline.Step();
  t.widget.current_row = t.timeline.Step() < t.timeline.count || t.timeline.playing ? t.timeline.Step() - 1 : -1;
  DrawHeatmaps(s);
}

void TranslateView::DrawHeatmaps(AppState* s) {
  TranslateViewState& t = state;
  const seq2seq::FigureSentence* f = seq2seq::FindFigure(t.figure);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (!f || !t.figure_scored) {
    t.widget.colour_bar = s->style.show_colorbar;
    HeatmapWidget("translation", t.map, s->style, &t.widget, s->env, ImVec2(avail.x, std::max(50.0f, avail.y)));
    return;
  }
  const bool done = t.timeline.Step() >= t.timeline.count && !t.timeline.playing;
  ImGui::TextDisabled("%s", f->citation.c_str());
  ImGui::TextDisabled("reference: %s", f->reference.c_str());
  if (done) {
    ImGui::SameLine();
    ImGui::TextColored(t.figure_exact ? ImVec4(0.6f, 0.9f, 0.6f, 1) : ImVec4(1.0f, 0.75f, 0.3f, 1), "%s, AER %.1f%%",
                       t.figure_exact ? "exact" : "differs from the reference", 100.0 * t.figure_aer);
    HelpTip("Alignment error rate of the model's alignment (its argmax per word) against the hand-made gold links.");
  }
  const float w = (ImGui::GetContentRegionAvail().x - 12) * 0.5f, h = std::max(50.0f, ImGui::GetContentRegionAvail().y);
  t.widget.colour_bar = false;  // beside its gold alignment (0..1): the sidebar's bar is the key
  HeatmapWidget("translation", t.map, s->style, &t.widget, s->env, ImVec2(w, h));
  ImGui::SameLine(0, 12);
  HeatmapStyle gold = s->style;
  gold.range = RangeMode::Fixed, gold.vmin = 0, gold.vmax = 1, gold.scale = ScaleMode::Global;
  t.gold_widget.rows_shown = 1 << 30;
  HeatmapWidget("gold", t.gold, gold, &t.gold_widget, s->env, ImVec2(w, h));
}

bool TranslateView::ShownMap(AppState*, const AttentionMap** map, HeatmapStyle*, std::string* name) {
  if (!state.has_result || state.map.weights.size() == 0) return false;
  *map = &state.map;
  if (!name) return true;      // the colour bar, every frame: no strings
  std::string source, output;  // the sentence translated (the input box may hold a newer one)
  for (const std::string& w : state.result.source_tokens) source += (source.empty() ? "" : " ") + w;
  for (const std::string& w : state.result.target_tokens) output += (output.empty() ? "" : " ") + w;
  *name = source + " -> " + output + " - " + state.map.name;
  return true;
}

void TranslateView::Advance(AppState* s, float dt) {
  state.timeline.Advance(dt);
  if (!state.retry_when_loaded) return;
  const ModelSlot* slot = s->models.Chosen();
  if (slot && slot->fetching) return;
  state.retry_when_loaded = false;
  (void)Translate(s);  // a failure is shown in the view
}

void TranslateView::Describe(AppState* s, JsonWriter* w) {
  const TranslateViewState& t = state;
  w->Key("models");
  w->Number((double)s->models.slots.size());
  w->Key("ok");
  w->Bool(t.has_result);
  w->Key("error");
  w->String(t.error);
  w->Key("loading");
  w->String(t.loading);
  w->Key("emitted");
  w->Number(t.timeline.Step());
  std::string output;
  for (size_t i = 0; t.has_result && i < t.result.target_tokens.size(); ++i)
    output += (i ? " " : "") + t.result.target_tokens[i];
  w->Key("output");
  w->String(output);
  w->Key("shown_words");  // what the output line showed last frame
  w->String(t.shown_words);
  w->Key("input");  // the sentence box, as typed, and where it was drawn (CSS px)
  w->String(t.input);
  w->Key("input_rect");
  w->BeginArray();
  for (float v : t.input_rect) w->NumberF(v);
  w->EndArray();
  w->Key("unknown");
  w->Number((double)t.result.unknown_positions.size());
  w->Key("unknown_lines");  // lines the unknown words took last frame (each word once, at most 5)
  w->Number(t.unknown_lines);
  w->Key("figure");
  w->String(t.figure);
  if (t.figure_scored) {
    w->Key("figure_exact");
    w->Bool(t.figure_exact);
    w->Key("figure_aer");
    w->Number(t.figure_aer);
  }
}

void TranslateView::DescribeHeatmaps(AppState*, JsonWriter* w) {
  DescribeHeatmap(w, "translation", state.widget.geom, &state.map);
  if (state.figure_scored) DescribeHeatmap(w, "gold", state.gold_widget.geom, &state.gold);
}

bool TranslateView::RunCommand(AppState* s, const CommandArgs& c, Status* result) {
  if (c.verb == "translate") {
    if (c.rest.size() >= sizeof(state.input)) {  // cut, it would translate the half of a word
      *result = Status::Error("translate: the sentence is " + std::to_string(c.rest.size()) + " bytes, over the " +
                              std::to_string(sizeof(state.input) - 1) + " the box holds");
      return true;
    }
    if (!c.rest.empty()) std::snprintf(state.input, sizeof(state.input), "%s", c.rest.c_str());
    state.auto_translate = false;
    *result = Translate(s);
    return true;
  }
  if (c.verb == "figure") {
    *result = PlayFigure(s, c.rest);
    return true;
  }
  if (c.verb == "model") {
    int k;
    if (!c.Int(0, &k) || k < 0 || k >= (int)s->models.slots.size()) {
      *result = Status::Error("model index out of range (" + std::to_string(s->models.slots.size()) + " models)");
      return true;
    }
    s->models.slot = k;
    *result = Status::Ok();
    return true;
  }
  return false;
}

}  // namespace attnviz
