#include "app/views/train.h"

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "app/app_state.h"
#include "app/help_tip.h"
#include "imgui.h"
#include "io/json.h"

namespace attnviz {
namespace {

using seq2seq::ModelKind;
using seq2seq::Task;

void UpdateProbeFrames(TrainViewState* tp) {
  const auto& probes = tp->runner->progress().probes;
  if (probes.empty()) return;
  const int n = (int)probes.size();
  const float pos = std::clamp(tp->probe_position, 0.0f, (float)(n - 1));
  const int a = (int)std::floor(pos), b = std::min(n - 1, a + 1);
  auto fill = [&](AttentionMap* m, const seq2seq::ProbeSnapshot& p) {
    if (m->name == "epoch " + std::to_string(p.epoch)) return;
    std::vector<std::string> target = p.reference_tokens;
    target.push_back("</s>");
    m->source_tokens = p.source_tokens;
    m->target_tokens = std::move(target);
    m->weights = p.attention;
    m->name = "epoch " + std::to_string(p.epoch);
    m->Touch();
  };
  fill(&tp->probe_a, probes[(size_t)a]);
  fill(&tp->probe_b, probes[(size_t)b]);
  tp->widget.next = (b != a) ? &tp->probe_b : nullptr;
  tp->widget.frame_mix = pos - (float)a;
  tp->probe_epoch = a;
}

// The probe's style: weights on [0, 1] whatever the range setting, so that epoch 0's uniform
// weights are the grey blur that sharpens (an automatic range would draw them white).
HeatmapStyle ProbeStyle(HeatmapStyle style) {
  if (style.scale == ScaleMode::Global) style.range = RangeMode::Fixed, style.vmin = 0.0f, style.vmax = 1.0f;
  return style;
}

double MeanLoss(const std::vector<float>& losses, size_t from, size_t to) {
  double sum = 0;
  for (size_t i = from; i < to; ++i) sum += losses[i];
  return to > from ? sum / (double)(to - from) : 0.0;
}

}  // namespace

const char* TrainView::SidebarAbout() const {
  return "Train a fresh model in this page. Its attention starts as a uniform grey blur and sharpens into word "
         "alignments; the probe sentence shows it epoch by epoch.";
}

void TrainView::ReleaseTextures(AppState* s) {
  s->ReleaseTextures(&state.widget);
}

namespace {
// The runner for state.where: by default the platform's (AppConfig::train_runner: a thread
// natively, a Web Worker in the browser), else training in the UI's frames.
std::unique_ptr<TrainRunner> MakeRunner(AppState* s, const std::string& where) {
  std::unique_ptr<TrainRunner> r;
  if (where != "frames" && s->config.train_runner) r = s->config.train_runner();
  if (!r) r = MakeFrameRunner();
  return r;
}
}  // namespace

Status TrainView::Start(AppState* s, bool running) {
  TrainViewState& tp = state;
  tp.error.clear();
  tp.note.clear();
  // The Train tab's settings (LiveTrainerConfig: batch size, learning rate and its decay for live
  // training, docs/PERFORMANCE.md).
  seq2seq::TrainerConfig cfg = seq2seq::LiveTrainerConfig((ModelKind)tp.kind, (Task)tp.task, (uint64_t)tp.seed);
  std::unique_ptr<TrainRunner> runner = MakeRunner(s, tp.where);
  if (std::string(runner->where()) != "frames") {
    // Off the UI thread the units of work need not fit in a frame: whole batches, bigger
    // evaluation chunks (the same updates; the sums differ only in rounding).
    cfg.micro_batch = 0;
    cfg.eval_chunk = 50;
  }
  tp.runner.reset();  // stops the old run first (joins its thread, ends its worker's run)
  tp.prepared = false;
  const Status st = runner->Start(cfg, running);
  if (!st) {
    tp.error = st.message;
    return st;
  }
  tp.runner = std::move(runner);
  tp.running = running;
  tp.prepared = !running;
  tp.run_kind = tp.kind, tp.run_task = tp.task, tp.run_seed = tp.seed;
  tp.follow_latest = true;
  tp.probe_position = 0;
  tp.probe_a = AttentionMap{};
  tp.probe_b = AttentionMap{};
  s->ReleaseTextures(&tp.widget);
  tp.widget = HeatmapViewState{};
  return Status::Ok();
}

bool TrainViewState::RunHasSettings() const {
  return kind == run_kind && task == run_task && seed == run_seed;
}

void TrainView::Prepare(AppState* s) {
  TrainViewState& tp = state;
  if (tp.runner ? !(tp.prepared && !tp.RunHasSettings()) : tp.prepare_tried) return;
  tp.prepare_tried = true;
  (void)Start(s, false);  // a failure is shown below the controls, as Train's would be
}

Status TrainView::Train(AppState* s) {
  TrainViewState& tp = state;
  if (!(tp.runner && tp.prepared && tp.RunHasSettings() && tp.runner->error().empty())) return Start(s, true);
  tp.prepared = false;
  tp.running = true;
  tp.runner->SetRunning(true);
  return Status::Ok();
}

// Training in a worker or a thread reports a few times a second: ten frames a second show it and
// leave the page's renderer (a software one in headless Chromium, on the worker's two cores) less
// to take from the worker: 47.8 s of the worker's compute to 96.5% where 60 frames a second made it
// 60.9 s (docs/PERFORMANCE.md). Training in the page's own frames, and the probe's playback, need
// every frame.
bool TrainView::Animating(const AppState*) const {
  if (state.probe_playing) return true;
  // A prepared run's epoch-0 probe, until a frame has drawn it (a worker's arrives without waking
  // the page).
  if (state.prepared && state.runner && state.probe_a.weights.size() == 0)
    return std::chrono::steady_clock::now() - state.advanced >= std::chrono::milliseconds(100);
  if (!state.running) return false;
  if (!state.runner || std::string(state.runner->where()) == "frames") return true;
  return std::chrono::steady_clock::now() - state.advanced >= std::chrono::milliseconds(100);
}

void TrainView::Advance(AppState* s, float dt) {
  TrainViewState& tp = state;
  tp.advanced = std::chrono::steady_clock::now();
  if (tp.probe_playing && tp.runner && !progress().probes.empty()) {
    const float last = (float)progress().probes.size() - 1;
    tp.probe_position += dt * 2.0f;
    if (tp.probe_position >= last) tp.probe_position = last, tp.probe_playing = false;
  }
  if (!tp.runner) return;
  // A worker that could not start before its first report: train here instead, and say why.
  if (!tp.runner->error().empty() && progress().batches == 0 && tp.where.empty() &&
      std::string(tp.runner->where()) != "frames") {
    const std::string why = tp.runner->error();
    tp.where = "frames";
    if (Start(s, tp.running))
      tp.note =
          "Training in this page's frames: the " + std::string("background worker could not start (") + why + ").";
    tp.where.clear();
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  seq2seq::Model model;
  const bool epoch = tp.runner->Poll(tp.running ? tp.budget_ms : 0.0f, &model);
  s->frame.train_ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!epoch) return;
  // A new epoch: the Translate view can use the model as it is now.
  s->models.PublishTrained(model, std::string("trained here: ") + seq2seq::ModelKindName((ModelKind)tp.kind) +
                                      ", epoch " + std::to_string(progress().epoch));
}

void TrainView::DrawControls(AppState* s) {
  TrainViewState& tp = state;
  const float font = ImGui::GetFontSize();
  const char* kinds[] = {"Bahdanau (BiGRU + additive)", "Luong (GRU + general)", "Transformer (2+2 layers)"};
  const char* tasks[] = {"English \xe2\x86\x92 French", "dates \xe2\x86\x92 ISO", "Spanish \xe2\x86\x92 English"};
  ImGui::SetNextItemWidth(font * 16.5f);
  ImGui::Combo("model", &tp.kind, kinds, IM_ARRAYSIZE(kinds));
  HelpTip("The architecture to train: its attention is what the probe below shows.");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(font * 9);
  ImGui::Combo("task", &tp.task, tasks, IM_ARRAYSIZE(tasks));
  ImGui::SameLine();
  ImGui::SetNextItemWidth(font * 5);
  ImGui::InputInt("seed", &tp.seed, 0);
  HelpTip(
      "The corpus, the initial weights and the batch order all derive from the seed: the same seed gives the same "
      "run.");
  ImGui::SameLine();
  Prepare(s);  // the settings' untrained model, its epoch-0 probe shown below
  if (ImGui::Button(tp.runner && !tp.prepared ? "Restart" : "Train")) (void)Train(s);  // a failure is shown below
  HelpTip(
      "Trains a fresh model with random weights here, in the background (a thread, or a Web Worker in the browser), "
      "so the page stays smooth. The probe below shows its attention before training (epoch 0).");
  if (tp.runner && !tp.prepared) {
    ImGui::SameLine();
    if (ImGui::Button(tp.running ? "Pause" : "Resume")) {
      tp.running = !tp.running;
      tp.runner->SetRunning(tp.running);
    }
  }
  if (tp.runner && std::string(tp.runner->where()) == "frames") {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(font * 7);
    ImGui::SliderFloat("##budget", &tp.budget_ms, 2.0f, 30.0f, "%.0f ms/frame");
    HelpTip("Training time per frame: more is faster training, less keeps the page smoother.");
  }
  if (!tp.note.empty()) ImGui::TextDisabled("%s", tp.note.c_str());
  if (tp.runner && !tp.runner->error().empty())
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1), "%s", tp.runner->error().c_str());
  if (!tp.error.empty()) ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1), "%s", tp.error.c_str());
}

// Progress, then the loss per batch, AER and exact match per epoch.
void TrainView::DrawCurves() {
  TrainViewState& tp = state;
  const TrainProgress& tr = progress();
  const float font = ImGui::GetFontSize();
  char text[128];
  const double left = tr.SecondsLeftInEpoch();
  char eta[48] = "";
  if (left >= 0) std::snprintf(eta, sizeof(eta), ", about %.0f s left", std::ceil(left));
  std::snprintf(text, sizeof(text), "epoch %d  %s %.0f%%%s  |  %.1f s  |  %lld batches  |  in a %s", tr.epoch + 1,
                tr.evaluating ? "evaluating" : "training", tr.progress * 100, eta, tr.seconds, (long long)tr.batches,
                tp.runner->where());
  ImGui::ProgressBar((float)tr.progress, ImVec2(-1, 0), text);
  const auto& hist = tr.history;
  tp.plot_loss.assign(tr.batch_losses.begin(), tr.batch_losses.end());
  tp.plot_aer.clear();
  tp.plot_em.clear();
  for (const auto& e : hist) {
    tp.plot_aer.push_back((float)e.aer);
    tp.plot_em.push_back((float)e.exact_match);
  }
  if (hist.size() == 1) {  // one epoch: a level line across the box (a plot of one value draws nothing)
    tp.plot_aer.push_back(tp.plot_aer[0]);
    tp.plot_em.push_back(tp.plot_em[0]);
  }
  const ImVec2 size((ImGui::GetContentRegionAvail().x - 16) / 3, font * 5);
  std::snprintf(text, sizeof(text), "loss %.3f", tr.last_loss);
  ImGui::PlotLines("##loss", tp.plot_loss.data(), (int)tp.plot_loss.size(), 0, text, 0.0f, FLT_MAX, size);
  HelpTip("Training loss (cross-entropy per target word) of every batch.");
  ImGui::SameLine();
  if (hist.empty())
    std::snprintf(text, sizeof(text), "AER: after epoch 1");
  else
    std::snprintf(text, sizeof(text), "AER %.1f%%", hist.back().aer * 100);
  // The rates on a fixed 0..1 with headroom above 1 for the title, which a line near 100 % crossed.
  const float rate_max = 1.3f;
  ImGui::PlotLines("##aer", tp.plot_aer.data(), (int)tp.plot_aer.size(), 0, text, 0.0f, rate_max, size);
  HelpTip(
      "Alignment error rate of the attention (argmax) against the gold word alignments, held-out set, per epoch. Lower "
      "is better.");
  ImGui::SameLine();
  if (hist.empty())
    std::snprintf(text, sizeof(text), "exact match: after epoch 1");
  else
    std::snprintf(text, sizeof(text), "exact match %.1f%%", hist.back().exact_match * 100);
  ImGui::PlotLines("##em", tp.plot_em.data(), (int)tp.plot_em.size(), 0, text, 0.0f, rate_max, size);
  HelpTip("Held-out sentences translated exactly right (greedy decoding), per epoch.");
  tp.curves_drawn = 3;
}

// The probe sentence's alignment by epoch, with a scrubber and a replay from epoch 0.
void TrainView::DrawProbe(AppState* s) {
  TrainViewState& tp = state;
  const int n = (int)progress().probes.size();
  if (n == 0) return;
  if (tp.follow_latest && !tp.probe_playing) tp.probe_position = (float)(n - 1);
  if (ImGui::Button(tp.probe_playing ? "Pause##probe" : "Replay##probe")) {
    if (!tp.probe_playing) tp.probe_position = 0;
    tp.probe_playing = !tp.probe_playing;
    tp.follow_latest = false;
  }
  HelpTip("Replays the probe sentence's attention from epoch 0 (before training) to now, blending between epochs.");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - ImGui::GetFontSize() * 8);
  char fmt[48];
  std::snprintf(fmt, sizeof(fmt), "probe at epoch %d", (int)std::floor(tp.probe_position + 1e-4f));
  if (ImGui::SliderFloat("##probe", &tp.probe_position, 0.0f, std::max(1e-3f, (float)(n - 1)), fmt)) {
    tp.follow_latest = tp.probe_position >= n - 1 - 1e-3f;
    tp.probe_playing = false;
  }
  ImGui::SameLine();
  ImGui::Checkbox("latest", &tp.follow_latest);
  UpdateProbeFrames(&tp);
  const auto& probe = progress().probes[(size_t)tp.probe_epoch];
  std::string decoded;
  for (const auto& w : probe.decoded_tokens) decoded += w + " ";
  // The AER first: an untrained model's probe decodes to a line of words wider than the view.
  ImGui::TextDisabled("probe (AER %.0f%%):", probe.aer * 100);
  HelpTip(
      "The probe sentence as the model decodes it after this epoch, and its alignment error rate "
      "(AER) against the gold alignment: 0% is every word attended where it should be.");
  ImGui::SameLine();
  ImGui::TextUnformatted(decoded.empty() ? "(nothing yet)" : decoded.c_str());
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  tp.widget.colour_bar = s->style.show_colorbar;  // on [0, 1] (ProbeStyle), as the sidebar's key says
  HeatmapWidget("probe", tp.probe_a, ProbeStyle(s->style), &tp.widget, s->env,
                ImVec2(avail.x, std::max(50.0f, avail.y)));
}

bool TrainView::ShownMap(AppState*, const AttentionMap** map, HeatmapStyle* style, std::string* name) {
  if (state.probe_a.weights.size() == 0) return false;
  *map = &state.probe_a;
  *style = ProbeStyle(*style);
  if (name) *name = "training probe, " + state.probe_a.name;
  return true;
}

void TrainView::Draw(AppState* s) {
  state.curves_drawn = 0;
  state.widget.geom.valid = false;
  DrawControls(s);
  if (!state.runner || state.prepared) {
    ImGui::TextWrapped(
        "Press Train to watch a fresh model learn to align: its attention starts as a grey blur and "
        "sharpens into the alignment of the translation figures. Two epochs of 30000 sentences bring it to "
        "about 96%% of held-out sentences translated exactly; the bar shows how long an epoch has left.");
    if (!state.runner) return;
  }
  DrawCurves();
  DrawProbe(s);
}

void TrainView::Describe(AppState*, JsonWriter* w) {
  const TrainViewState& tp = state;
  w->Key("running");
  w->Bool(tp.running);
  w->Key("prepared");  // a run made ready, paused, its epoch-0 probe shown: Train starts it
  w->Bool(tp.prepared);
  w->Key("error");
  w->String(tp.error);
  w->Key("curves_drawn");
  w->Number(tp.curves_drawn);
  if (!tp.runner) return;
  const TrainProgress& tr = tp.runner->progress();
  w->Key("where");
  w->String(tp.runner->where());
  w->Key("runner_error");
  w->String(tp.runner->error());
  w->Key("note");
  w->String(tp.note);
  const auto& h = tr.history;
  const auto& bl = tr.batch_losses;
  const size_t k = std::min<size_t>(10, bl.size());
  w->Key("epoch");
  w->Number(tr.epoch);
  w->Key("batches");
  w->Number((double)tr.batches);
  w->Key("loss");  // null when the loss diverged (NaN): see io/json.h
  w->NumberF(tr.last_loss);
  w->Key("loss_first");
  w->Number(MeanLoss(bl, 0, k));
  w->Key("loss_recent");
  w->Number(MeanLoss(bl, bl.size() - k, bl.size()));
  w->Key("aer");
  w->Number(h.empty() ? 1.0 : h.back().aer);
  w->Key("exact_match");
  w->Number(h.empty() ? 0.0 : h.back().exact_match);
  w->Key("probes");
  w->Number((double)tr.probes.size());
  w->Key("probe_epoch");
  w->Number(tp.probe_epoch);
  w->Key("seconds");
  w->Number(tr.seconds);
}

void TrainView::DescribeHeatmaps(AppState*, JsonWriter* w) {
  DescribeHeatmap(w, "probe", state.widget.geom, &state.probe_a);
}

bool TrainView::RunCommand(AppState* s, const CommandArgs& c, Status* result) {
  if (c.verb != "train") return false;
  TrainViewState& tp = state;
  const std::string& arg = c.rest;
  *result = Status::Ok();
  if (arg == "start" || arg.empty()) {
    *result = Train(s);
  } else if (arg == "pause") {
    tp.running = false;
    if (tp.runner) tp.runner->SetRunning(false);
  } else if (arg == "resume") {
    if (tp.runner) {
      tp.prepared = false;
      tp.running = true;
      tp.runner->SetRunning(true);
    } else {
      *result = Status::Error("nothing to resume: start training first");
    }
  } else if (arg.compare(0, 6, "where ") == 0) {  // where the next run trains
    const std::string w = arg.substr(6);
    if (w == "frames" || w == "auto")
      tp.where = w == "frames" ? "frames" : "";
    else
      *result = Status::Error("train where: frames (in the UI's frames) or auto (a thread or a Web Worker)");
  } else if (arg.compare(0, 7, "budget ") == 0) {  // train budget MS: training time per frame
    const float ms = std::strtof(arg.c_str() + 7, nullptr);
    if (ms >= 1 && ms <= 100)
      tp.budget_ms = ms;
    else
      *result = Status::Error("train budget: 1 to 100 ms per frame");
  } else {
    for (int k = 0; k < 3; ++k)
      if (arg == seq2seq::ModelKindName((ModelKind)k)) {
        tp.kind = k;
        return true;
      }
    *result =
        Status::Error("train: start, pause, resume, budget MS, where frames|auto, bahdanau, luong or transformer");
  }
  return true;
}

}  // namespace attnviz
