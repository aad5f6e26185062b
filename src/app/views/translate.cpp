#include "app/views/translate.h"

#include <algorithm>
#include <cstdio>

#include "app/app_state.h"
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
  const MatrixRM* w = &r.attention;
  const int heads = r.layer_heads.empty() ? 0 : (int)r.layer_heads[0].size();
  if (t->layer_head >= 0 && heads > 0) {
    const int l = t->layer_head / heads, h = t->layer_head % heads;
    if (l < (int)r.layer_heads.size() && h < (int)r.layer_heads[(size_t)l].size())
      w = &r.layer_heads[(size_t)l][(size_t)h];
  }
  m.weights = *w;
  m.has_steps = false;
  m.name = t->layer_head < 0 ? "mean over layers and heads" : "layer/head " + std::to_string(t->layer_head);
  m.version++;
}

// Replaces word number `pos` of the input sentence (tokenized) by `word`.
void ReplaceWord(TranslateViewState* t, int pos, const std::string& word) {
  std::vector<std::string> toks = seq2seq::Tokenize(t->input);
  if (pos < 0 || pos >= (int)toks.size()) return;
  toks[(size_t)pos] = word;
  std::snprintf(t->input, sizeof(t->input), "%s", seq2seq::Join(toks).c_str());
}

void HelpTip(const char* text) {
  if (!ImGui::IsItemHovered()) return;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28);
  ImGui::TextUnformatted(text);
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

std::string HeadLabel(int i, int heads) {
  if (i < 0) return "mean of all heads";
  return "layer " + std::to_string(i / heads + 1) + ", head " + std::to_string(i % heads + 1);
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
  if (ImGui::BeginCombo("##lh", HeadLabel(t->layer_head, heads).c_str())) {
    for (int i = -1; i < layers * heads; ++i)
      if (ImGui::Selectable(HeadLabel(i, heads).c_str(), i == t->layer_head)) t->layer_head = i, changed = true;
    ImGui::EndCombo();
  }
  HelpTip("The mean over every layer and head, or one cross-attention head of the Transformer.");
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
  s->ReleaseTextures(&t.widget);
  t.widget = HeatmapViewState{};
  t.timeline.Reset(TimelineMode::Decoding, (int)t.map.weights.rows());
  t.timeline.speed = 2.5f;
  t.timeline.Home();
  t.timeline.Play();
  return Status::Ok();
}

void TranslateView::DrawInputBar(AppState* s) {
  const float font = ImGui::GetFontSize();
  ModelLibrary& lib = s->models;
  ImGui::SetNextItemWidth(font * 19);
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
      "Which model translates. The pretrained ones were trained by attnviz-cli train (docs/MODELS.md); "
      "a model you train in the Train tab appears here too.");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::max(font * 10, ImGui::GetContentRegionAvail().x - font * 7));
  const bool enter = ImGui::InputTextWithHint("##sentence", "an English sentence, e.g. the european economic area",
                                              state.input, sizeof(state.input), ImGuiInputTextFlags_EnterReturnsTrue);
  HelpTip(
      "Type an English sentence within the model's vocabulary and press Enter. Unknown words are marked (?) "
      "and get suggestions.");
  ImGui::SameLine();
  if (ImGui::Button("Translate", ImVec2(-1, 0)) || enter) (void)Translate(s);
}

bool TranslateView::DrawUnknownWords(AppState* s) {
  TranslateViewState& t = state;
  for (size_t i = 0; i < t.result.unknown_positions.size(); ++i) {
    const int pos = t.result.unknown_positions[i];
    ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1), "unknown word \"%s\"",
                       t.result.source_tokens[(size_t)pos].c_str());
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
      ReplaceWord(&t, pos, sug.token);
      (void)Translate(s);
      return true;
    }
  }
  return false;
}

// The translation so far: words appear as the decoder emits them.
void TranslateView::DrawOutputLine() {
  TranslateViewState& t = state;
  const int shown = std::min(t.timeline.Step(), (int)t.result.target_tokens.size());
  t.shown_words.clear();
  for (int i = 0; i < shown; ++i) t.shown_words += (i ? " " : "") + t.result.target_tokens[(size_t)i];
  ImGui::Text("\xe2\x86\x92  %s%s", t.shown_words.c_str(),
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
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  HeatmapWidget("translation", t.map, s->style, &t.widget, s->env, ImVec2(avail.x, std::max(50.0f, avail.y)));
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
  w->Key("unknown");
  w->Number((double)t.result.unknown_positions.size());
}

void TranslateView::DescribeHeatmaps(AppState*, JsonWriter* w) {
  DescribeHeatmap(w, "translation", state.widget.geom, &state.map);
}

bool TranslateView::RunCommand(AppState* s, const CommandArgs& c, Status* result) {
  if (c.verb == "translate") {
    if (!c.rest.empty()) std::snprintf(state.input, sizeof(state.input), "%s", c.rest.c_str());
    state.auto_translate = false;
    *result = Translate(s);
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
