#include "app/model_panels.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "app/app_state.h"
#include "embedded_models.h"
#include "imgui.h"
#include "io/json.h"

namespace attnviz {
namespace {

using seq2seq::ModelKind;
using seq2seq::Task;

const char* KindLabel(const std::string& file) {
  if (file.find("bahdanau") != std::string::npos) return "Bahdanau (additive)";
  if (file.find("luong") != std::string::npos) return "Luong (general)";
  if (file.find("transformer") != std::string::npos) return "Transformer (2+2 layers)";
  return "model";
}

bool EnsureLoaded(ModelSlot* slot) {
  if (slot->loaded || !slot->error.empty() || slot->file.empty()) return slot->loaded;
  const EmbeddedFile* f = attnviz_embedded_models_find(slot->file.c_str());
  if (!f) {
    slot->error = "model " + slot->file + " is not embedded in this build";
    return false;
  }
  Status st = seq2seq::LoadModel(f->data, f->size, &slot->model);
  if (!st) {
    slot->error = slot->file + ": " + st.message;
    return false;
  }
  slot->loaded = true;
  return true;
}

// Rebuilds the shown map from the translation (mean, or one layer/head).
void BuildTranslateMap(TranslatePanel* t) {
  const seq2seq::Translation& r = t->result;
  AttentionMap& m = t->map;
  m.source_tokens = r.source_tokens;
  for (int pos : r.unknown_positions)
    if (pos >= 0 && pos < (int)m.source_tokens.size()) m.source_tokens[pos] += " (?)";
  m.target_tokens = r.target_tokens;
  m.target_tokens.push_back("</s>");
  const MatrixRM* w = &r.attention;
  int heads = r.layer_heads.empty() ? 0 : (int)r.layer_heads[0].size();
  if (t->layer_head >= 0 && heads > 0) {
    const int l = t->layer_head / heads, h = t->layer_head % heads;
    if (l < (int)r.layer_heads.size() && h < (int)r.layer_heads[l].size()) w = &r.layer_heads[l][h];
  }
  m.weights = *w;
  m.has_steps = false;
  m.name = t->layer_head < 0 ? "mean over layers and heads" : "layer/head " + std::to_string(t->layer_head);
  m.version++;
}

void RunTranslate(TranslatePanel* t) {
  t->error.clear();
  t->has_result = false;
  t->suggestions.clear();
  if (t->slots.empty()) {
    t->error = "no model: train one in the Train tab";
    return;
  }
  ModelSlot& slot = t->slots[std::clamp(t->slot, 0, (int)t->slots.size() - 1)];
  if (!EnsureLoaded(&slot)) {
    t->error = slot.error;
    return;
  }
  seq2seq::TranslateOptions opt;
  Status st = seq2seq::Translate(slot.model, t->input, opt, &t->result);
  if (!st) {
    t->error = st.message;
    return;
  }
  for (int pos : t->result.unknown_positions) {
    const std::string& word = t->result.source_tokens[pos];
    t->suggestions.push_back(slot.model.source_vocab.Suggest(word, 3, 3));
  }
  t->has_result = true;
  BuildTranslateMap(t);
  t->view = HeatmapViewState{};
  t->timeline.Reset(TimelineMode::Decoding, (int)t->map.weights.rows());
  t->timeline.speed = 2.5f;
  t->timeline.Home();
  t->timeline.Play();
}

// Replaces word number `pos` of the input sentence (tokenized) by `word`.
void ReplaceWord(TranslatePanel* t, int pos, const std::string& word) {
  std::vector<std::string> toks = seq2seq::Tokenize(t->input);
  if (pos < 0 || pos >= (int)toks.size()) return;
  toks[pos] = word;
  const std::string joined = seq2seq::Join(toks);
  std::snprintf(t->input, sizeof(t->input), "%s", joined.c_str());
}

void HelpTip(const char* text) {
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

void UpdateProbeFrames(TrainPanel* tp) {
  const auto& probes = tp->trainer->probes();
  if (probes.empty()) return;
  const int n = (int)probes.size();
  const float pos = std::clamp(tp->probe_position, 0.0f, (float)(n - 1));
  const int a = (int)std::floor(pos), b = std::min(n - 1, a + 1);
  auto fill = [&](AttentionMap* m, const seq2seq::ProbeSnapshot& p) {
    if (m->version != 0 && m->name == "epoch " + std::to_string(p.epoch)) return;
    m->source_tokens = p.source_tokens;
    m->target_tokens = p.reference_tokens;
    m->target_tokens.push_back("</s>");
    m->weights = p.attention;
    m->name = "epoch " + std::to_string(p.epoch);
    m->version++;
  };
  fill(&tp->probe_a, probes[a]);
  fill(&tp->probe_b, probes[b]);
  tp->view.next = (b != a) ? &tp->probe_b : nullptr;
  tp->view.frame_mix = pos - a;
  tp->probe_epoch = a;
}

void StartTraining(TrainPanel* tp) {
  tp->error.clear();
  auto trainer = std::make_unique<seq2seq::Trainer>();
  seq2seq::TrainerConfig cfg = seq2seq::DefaultTrainerConfig((ModelKind)tp->kind, (Task)tp->task, (uint64_t)tp->seed);
  // Small units of work so one frame's slice stays near its budget (~10 ms in WASM): gradients
  // accumulate over micro-batches of 4 into the same 32-sentence Adam step as the CLI.
  cfg.micro_batch = 4;
  cfg.eval_chunk = 8;
  Status st = trainer->Init(cfg);
  if (!st) {
    tp->error = st.message;
    return;
  }
  tp->trainer = std::move(trainer);
  tp->running = true;
  tp->follow_latest = true;
  tp->probe_position = 0;
  tp->probe_a = AttentionMap{};
  tp->probe_b = AttentionMap{};
  tp->view = HeatmapViewState{};
}

void PublishTrainedModel(AppState* s) {
  TrainPanel& tp = s->models->train;
  TranslatePanel& t = s->models->translate;
  if (!tp.trainer) return;
  ModelSlot* slot = nullptr;
  for (auto& sl : t.slots)
    if (sl.file.empty()) slot = &sl;
  if (!slot) {
    t.slots.emplace_back();
    slot = &t.slots.back();
  }
  slot->model = tp.trainer->model();
  slot->loaded = true;
  slot->error.clear();
  slot->label = std::string("trained here: ") + seq2seq::ModelKindName((ModelKind)tp.kind) + ", epoch " +
                std::to_string(tp.trainer->epoch());
  t.slot = (int)(slot - t.slots.data());
}

}  // namespace

void InitModelPanels(ModelPanels* p) {
  size_t n = 0;
  const EmbeddedFile* files = attnviz_embedded_models_files(&n);
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i)
    if (std::strstr(files[i].name, ".bin") && std::strstr(files[i].name, "en-fr")) names.push_back(files[i].name);
  // Bahdanau first: it is the model of the translation figures.
  std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    auto rank = [](const std::string& x) {
      return x.find("bahdanau") != std::string::npos ? 0 : x.find("luong") != std::string::npos ? 1 : 2;
    };
    return rank(a) < rank(b);
  });
  for (const std::string& name : names) {
    ModelSlot slot;
    slot.file = name;
    slot.label = std::string(KindLabel(name)) + ", pretrained";
    p->translate.slots.push_back(std::move(slot));
  }
  p->initialized = true;
}

void DrawTranslateView(AppState* s) {
  TranslatePanel& t = s->models->translate;
  if (t.auto_translate) {
    t.auto_translate = false;
    RunTranslate(&t);
  }
  const float font = ImGui::GetFontSize();
  ImGui::SetNextItemWidth(font * 19);
  const char* current = t.slots.empty() ? "(no model)" : t.slots[std::clamp(t.slot, 0, (int)t.slots.size() - 1)].label.c_str();
  if (ImGui::BeginCombo("##model", current)) {
    for (int i = 0; i < (int)t.slots.size(); ++i)
      if (ImGui::Selectable(t.slots[i].label.c_str(), i == t.slot)) {
        t.slot = i;
        t.layer_head = -1;
        RunTranslate(&t);
      }
    ImGui::EndCombo();
  }
  HelpTip("Which model translates. The pretrained ones were trained by attnviz-cli train (docs/MODELS.md); "
          "a model you train in the Train tab appears here too.");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(std::max(font * 10, ImGui::GetContentRegionAvail().x - font * 7));
  const bool enter = ImGui::InputTextWithHint("##sentence", "an English sentence, e.g. the european economic area", t.input,
                                              sizeof(t.input), ImGuiInputTextFlags_EnterReturnsTrue);
  HelpTip("Type an English sentence within the model's vocabulary and press Enter. Unknown words are marked (?) "
          "and get suggestions.");
  ImGui::SameLine();
  if (ImGui::Button("Translate", ImVec2(-1, 0)) || enter) RunTranslate(&t);

  if (!t.error.empty()) {
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1), "%s", t.error.c_str());
    return;
  }
  if (!t.has_result) return;
  // Unknown words, with clickable suggestions.
  for (size_t i = 0; i < t.result.unknown_positions.size(); ++i) {
    const int pos = t.result.unknown_positions[i];
    ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1), "unknown word \"%s\"", t.result.source_tokens[pos].c_str());
    if (i < t.suggestions.size() && !t.suggestions[i].empty()) {
      ImGui::SameLine();
      ImGui::TextDisabled("did you mean");
      for (const auto& sug : t.suggestions[i]) {
        ImGui::SameLine();
        ImGui::PushID(&sug);
        if (ImGui::SmallButton(sug.token.c_str())) {
          ReplaceWord(&t, pos, sug.token);
          RunTranslate(&t);
          ImGui::PopID();
          return;
        }
        ImGui::PopID();
      }
    } else {
      ImGui::SameLine();
      ImGui::TextDisabled("(no close word in the vocabulary)");
    }
  }
  // The translation so far: words appear as the decoder emits them.
  const int shown = std::min(t.timeline.Step(), (int)t.result.target_tokens.size());
  std::string out;
  for (int i = 0; i < shown; ++i) out += (i ? " " : "") + t.result.target_tokens[i];
  ImGui::PushFont(ImGui::GetFont());
  ImGui::Text("\xe2\x86\x92  %s%s", out.c_str(), shown < (int)t.result.target_tokens.size() ? " \xe2\x80\xa6" : "");
  ImGui::PopFont();
  // Layer / head choice for multi-head models.
  const int layers = (int)t.result.layer_heads.size();
  const int heads = layers ? (int)t.result.layer_heads[0].size() : 0;
  if (layers * heads > 1) {
    ImGui::SameLine(ImGui::GetContentRegionAvail().x - font * 12);
    ImGui::SetNextItemWidth(font * 12);
    std::string label = t.layer_head < 0 ? "mean of all heads" : "layer " + std::to_string(t.layer_head / heads + 1) + ", head " + std::to_string(t.layer_head % heads + 1);
    if (ImGui::BeginCombo("##lh", label.c_str())) {
      if (ImGui::Selectable("mean of all heads", t.layer_head < 0)) t.layer_head = -1, BuildTranslateMap(&t);
      for (int i = 0; i < layers * heads; ++i) {
        const std::string l = "layer " + std::to_string(i / heads + 1) + ", head " + std::to_string(i % heads + 1);
        if (ImGui::Selectable(l.c_str(), i == t.layer_head)) t.layer_head = i, BuildTranslateMap(&t);
      }
      ImGui::EndCombo();
    }
  }
  DrawTimelineControls(&t.timeline, "emitted");
  t.view.rows_shown = t.timeline.Step();
  t.view.current_row = t.timeline.Step() < t.timeline.count || t.timeline.playing ? t.timeline.Step() - 1 : -1;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  HeatmapWidget("translation", t.map, s->style, &t.view, s->env, ImVec2(avail.x, std::max(50.0f, avail.y)));
}

void AdvanceTraining(AppState* s) {
  TrainPanel& tp = s->models->train;
  if (!tp.trainer || !tp.running) return;
  const int epochs_before = tp.trainer->epoch();
  const auto t0 = std::chrono::steady_clock::now();
  tp.trainer->Step(tp.budget_ms);
  s->train_ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (tp.trainer->epoch() != epochs_before) PublishTrainedModel(s);
}

void DrawTrainView(AppState* s) {
  TrainPanel& tp = s->models->train;
  const float font = ImGui::GetFontSize();
  const char* kinds[] = {"Bahdanau (BiGRU + additive)", "Luong (GRU + general)", "Transformer (2+2 layers)"};
  const char* tasks[] = {"English \xe2\x86\x92 French", "dates \xe2\x86\x92 ISO"};
  ImGui::SetNextItemWidth(font * 14);
  ImGui::Combo("model", &tp.kind, kinds, IM_ARRAYSIZE(kinds));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(font * 9);
  ImGui::Combo("task", &tp.task, tasks, IM_ARRAYSIZE(tasks));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(font * 5);
  ImGui::InputInt("seed", &tp.seed, 0);
  HelpTip("The corpus, the initial weights and the batch order all derive from the seed: the same seed gives the same run.");
  ImGui::SameLine();
  if (ImGui::Button(tp.trainer ? "Restart" : "Train")) StartTraining(&tp);
  HelpTip("Builds a fresh model with random weights and trains it here, in this tab, a few milliseconds per frame.");
  if (tp.trainer) {
    ImGui::SameLine();
    if (ImGui::Button(tp.running ? "Pause" : "Resume")) tp.running = !tp.running;
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(font * 7);
  ImGui::SliderFloat("##budget", &tp.budget_ms, 2.0f, 30.0f, "%.0f ms/frame");
  HelpTip("Training time per frame: more is faster training, less keeps the page smoother.");
  if (!tp.error.empty()) ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1), "%s", tp.error.c_str());
  if (!tp.trainer) {
    ImGui::TextWrapped("Press Train to watch a fresh model learn to align: its attention starts as a grey blur and "
                       "sharpens into the alignment of the translation figures within a minute or two.");
    return;
  }
  seq2seq::Trainer& tr = *tp.trainer;
  char overlay[96];
  std::snprintf(overlay, sizeof(overlay), "epoch %d  %s %.0f%%  |  %.1f s  |  %lld batches", tr.epoch() + 1,
                tr.evaluating() ? "evaluating" : "training", tr.progress() * 100, tr.seconds(), (long long)tr.batches());
  ImGui::ProgressBar((float)tr.progress(), ImVec2(-1, 0), overlay);

  // Curves: loss per batch, AER and exact match per epoch.
  const auto& hist = tr.history();
  const auto& losses = tr.batch_losses();
  tp.plot_loss.assign(losses.begin(), losses.end());
  tp.plot_aer.clear();
  tp.plot_em.clear();
  for (const auto& e : hist) {
    tp.plot_aer.push_back((float)e.aer);
    tp.plot_em.push_back((float)e.exact_match);
  }
  const float w3 = (ImGui::GetContentRegionAvail().x - 16) / 3;
  char cap[64];
  std::snprintf(cap, sizeof(cap), "loss %.3f", tr.last_loss());
  ImGui::PlotLines("##loss", tp.plot_loss.data(), (int)tp.plot_loss.size(), 0, cap, 0.0f, FLT_MAX, ImVec2(w3, font * 5));
  HelpTip("Training loss (cross-entropy per target word) of every batch.");
  ImGui::SameLine();
  if (hist.empty()) std::snprintf(cap, sizeof(cap), "AER: after epoch 1");
  else std::snprintf(cap, sizeof(cap), "AER %.1f%%", hist.back().aer * 100);
  ImGui::PlotLines("##aer", tp.plot_aer.data(), (int)tp.plot_aer.size(), 0, cap, 0.0f, 1.0f, ImVec2(w3, font * 5));
  HelpTip("Alignment error rate of the attention (argmax) against the gold word alignments, held-out set, per epoch. Lower is better.");
  ImGui::SameLine();
  if (hist.empty()) std::snprintf(cap, sizeof(cap), "exact match: after epoch 1");
  else std::snprintf(cap, sizeof(cap), "exact match %.1f%%", hist.back().exact_match * 100);
  ImGui::PlotLines("##em", tp.plot_em.data(), (int)tp.plot_em.size(), 0, cap, 0.0f, 1.0f, ImVec2(w3, font * 5));
  HelpTip("Held-out sentences translated exactly right (greedy decoding), per epoch.");

  // The probe sentence's alignment by epoch.
  const int n = (int)tr.probes().size();
  if (n == 0) return;
  if (tp.follow_latest && !tp.probe_playing) tp.probe_position = (float)(n - 1);
  if (tp.probe_playing) {
    tp.probe_position += ImGui::GetIO().DeltaTime * 2.0f;
    if (tp.probe_position >= n - 1) tp.probe_position = (float)(n - 1), tp.probe_playing = false;
  }
  if (ImGui::Button(tp.probe_playing ? "Pause##probe" : "Replay##probe")) {
    if (!tp.probe_playing) tp.probe_position = 0;
    tp.probe_playing = !tp.probe_playing;
    tp.follow_latest = false;
  }
  HelpTip("Replays the probe sentence's attention from epoch 0 (before training) to now, blending between epochs.");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - font * 8);
  char fmt[48];
  std::snprintf(fmt, sizeof(fmt), "probe at epoch %d", (int)std::floor(tp.probe_position + 1e-4f));
  if (ImGui::SliderFloat("##probe", &tp.probe_position, 0.0f, std::max(1e-3f, (float)(n - 1)), fmt)) {
    tp.follow_latest = tp.probe_position >= n - 1 - 1e-3f;
    tp.probe_playing = false;
  }
  ImGui::SameLine();
  ImGui::Checkbox("latest", &tp.follow_latest);
  UpdateProbeFrames(&tp);
  const auto& probe = tr.probes()[tp.probe_epoch];
  std::string decoded;
  for (const auto& w : probe.decoded_tokens) decoded += w + " ";
  ImGui::Text("probe: %s", decoded.empty() ? "(nothing yet)" : decoded.c_str());
  ImGui::SameLine();
  ImGui::TextDisabled("(probe AER %.0f%%)", probe.aer * 100);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  HeatmapWidget("probe", tp.probe_a, s->style, &tp.view, s->env, ImVec2(avail.x, std::max(50.0f, avail.y)));
}

std::string RunModelCommand(AppState* s, const std::string& verb, const std::string& arg) {
  TranslatePanel& t = s->models->translate;
  TrainPanel& tp = s->models->train;
  if (verb == "translate") {
    if (!arg.empty()) std::snprintf(t.input, sizeof(t.input), "%s", arg.c_str());
    t.auto_translate = false;
    RunTranslate(&t);
    return t.error;
  }
  if (verb == "model") {
    char* end = nullptr;
    const long k = std::strtol(arg.c_str(), &end, 10);
    if (arg.empty() || *end || k < 0 || k >= (long)t.slots.size()) return "model index out of range";
    t.slot = (int)k;
    return "";
  }
  if (verb == "train") {
    if (arg == "start" || arg.empty()) {
      StartTraining(&tp);
      return tp.error;
    }
    if (arg == "pause") {
      tp.running = false;
      return "";
    }
    if (arg == "resume") {
      tp.running = tp.trainer != nullptr;
      return tp.trainer ? "" : "nothing to resume: start training first";
    }
    for (int k = 0; k < 3; ++k)
      if (arg == seq2seq::ModelKindName((ModelKind)k)) {
        tp.kind = k;
        return "";
      }
    return "train: start, pause, resume, bahdanau, luong or transformer";
  }
  return "?";
}

void DescribeModelPanels(AppState* s, std::string* out) {
  const TranslatePanel& t = s->models->translate;
  out->append(",\"translate\":{\"models\":" + std::to_string(t.slots.size()) + ",\"ok\":" + (t.has_result ? "true" : "false"));
  out->append(",\"emitted\":" + std::to_string(t.timeline.Step()));
  std::string output;
  if (t.has_result)
    for (size_t i = 0; i < t.result.target_tokens.size(); ++i) output += (i ? " " : "") + t.result.target_tokens[i];
  out->append(",\"output\":" + JsonEscape(output));
  out->append(",\"unknown\":" + std::to_string(t.result.unknown_positions.size()) + "}");
  const TrainPanel& tp = s->models->train;
  out->append(",\"train\":{\"running\":" + std::string(tp.running ? "true" : "false"));
  if (tp.trainer) {
    char buf[320];
    const auto& h = tp.trainer->history();
    const auto& bl = tp.trainer->batch_losses();
    auto mean = [&](size_t from, size_t to) {
      double sum = 0;
      for (size_t i = from; i < to; ++i) sum += bl[i];
      return to > from ? sum / (to - from) : 0.0;
    };
    const size_t k = std::min<size_t>(10, bl.size());
    std::snprintf(buf, sizeof(buf),
                  ",\"epoch\":%d,\"batches\":%lld,\"loss\":%.5g,\"loss_first\":%.5g,\"loss_recent\":%.5g,"
                  "\"aer\":%.5g,\"exact_match\":%.5g,\"probes\":%zu,\"seconds\":%.3f",
                  tp.trainer->epoch(), (long long)tp.trainer->batches(), (double)tp.trainer->last_loss(), mean(0, k),
                  mean(bl.size() - k, bl.size()), h.empty() ? 1.0 : h.back().aer, h.empty() ? 0.0 : h.back().exact_match,
                  tp.trainer->probes().size(), tp.trainer->seconds());
    out->append(buf);
  }
  out->append("}");
}

}  // namespace attnviz
