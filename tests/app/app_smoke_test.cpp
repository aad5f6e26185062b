// The whole app without a window or GL (imgui with no backend): every view runs for real, and
// describe() — parsed as JSON after the frames — must report what each view actually drew:
// heatmap rows, lines, thumbnails, the numbers in the steps table, the translation, training.
#include <GLFW/glfw3.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "app/app.h"
#include "app/app_files.h"
#include "app/app_state.h"
#include "app/colour_bar.h"
#include "app/examples.h"
#include "app/frame_fingerprint.h"
#include "app/heatmap_widget.h"
#include "app/labels.h"
#include "app/panel_fill.h"
#include "app/view_module.h"
#include "core/colormap.h"
#include "imgui.h"
#include "imgui_internal.h"
#include "io/json.h"
#include "io/npy.h"
#include "platform/key_latch.h"

namespace {

using attnviz::JsonValue;

struct HeadlessApp {
  attnviz::App app;
  explicit HeadlessApp(attnviz::AppConfig cfg = {}) {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(1280, 800);
    io.DeltaTime = 1.0f / 60.0f;
    cfg.headless = true;
    const attnviz::Status st = app.Init(cfg);
    EXPECT_TRUE(st.ok) << st.message;
  }
  ~HeadlessApp() {
    app.Shutdown();
    ImGui::DestroyContext();
  }
  void Frames(int n) {
    for (int i = 0; i < n; ++i) {
      unsigned char* px;
      int w, h;
      ImGui::GetIO().Fonts->GetTexDataAsRGBA32(&px, &w, &h);  // builds the atlas (the app may rebuild fonts)
      ImGui::NewFrame();
      app.Frame();
      ImGui::Render();
    }
  }
  void Run(const std::string& command) {
    const attnviz::Status st = app.Command(command);
    ASSERT_TRUE(st.ok) << command << ": " << st.message;
  }
  JsonValue Describe() {
    JsonValue v;
    const std::string& text = app.DescribeJson();
    const attnviz::Status st = attnviz::ParseJson(text, &v);
    EXPECT_TRUE(st.ok) << st.message << "\n" << text.substr(0, 400);
    return v;
  }
};

// Opens a float32 .npy of `shape` in t as a file would be: weight k (row-major) is weight(k).
template <class Weight>
attnviz::Status OpenNpy(HeadlessApp& t, const char* name, std::vector<int64_t> shape, Weight weight) {
  attnviz::NdArray a;
  size_t n = 1;
  for (int64_t d : shape) n *= (size_t)d;
  a.shape = std::move(shape);
  a.data.resize(n * 4);
  for (size_t k = 0; k < n; ++k) {
    const float x = weight(k);
    std::memcpy(a.data.data() + k * 4, &x, 4);
  }
  std::vector<uint8_t> npy;
  const attnviz::Status st = attnviz::WriteNpy(a, &npy);
  return st ? t.app.OpenFile(name, npy.data(), npy.size()) : st;
}

const JsonValue& Get(const JsonValue& v, const char* path) {  // "a.b.c"
  static const JsonValue kNull;
  const JsonValue* cur = &v;
  std::string p = path;
  size_t start = 0;
  while (cur && start <= p.size()) {
    const size_t dot = p.find('.', start);
    cur = cur->Find(p.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur ? *cur : kNull;
}

double Num(const JsonValue& v, const char* path) {
  return Get(v, path).number;
}

// The heatmaps describe() lists, by id.
const JsonValue* Heatmap(const JsonValue& d, const std::string& id) {
  for (const JsonValue& h : Get(d, "heatmaps").items)
    if (h.Find("id") && h.Find("id")->string == id) return &h;
  return nullptr;
}

}  // namespace

// The status bar's frame time: one long frame (a file read) moves the maximum, not the median; the
// median and the maximum cover the last 120 frames only.
TEST(FrameStats, TheReadoutIsTheMedianAndTheLongestOfTheLast120Frames) {
  attnviz::FrameStats f;
  float median = -1, longest = -1;
  f.Recent(&median, &longest);
  EXPECT_EQ(median, 0.0f);
  EXPECT_EQ(longest, 0.0f);
  for (int i = 0; i < 119; ++i) f.Record(1.0f + 0.001f * (float)(i % 7));
  f.Record(300.0f);
  f.Recent(&median, &longest);
  EXPECT_NEAR(median, 1.003f, 0.0015f);
  EXPECT_EQ(longest, 300.0f);
  EXPECT_GT(f.cpu_ms_avg, 3.0f);  // the mean the readout no longer shows
  for (int i = 0; i < 120; ++i) f.Record(2.0f);
  f.Recent(&median, &longest);
  EXPECT_EQ(median, 2.0f);
  EXPECT_EQ(longest, 2.0f);
}

// Textures are keyed by a map's address and version: a new map in a freed map's place (a file
// reopened, a probe reset, a pool reallocated) must never carry a version that place had before.
TEST(AttentionMapVersion, EveryMapAndEveryChangeGetsAVersionNeverSeenBefore) {
  std::vector<uint64_t> seen;
  attnviz::AttentionMap m;
  seen.push_back(m.version);
  m.Touch();
  seen.push_back(m.version);
  m = attnviz::AttentionMap{};  // the same address, a new map
  seen.push_back(m.version);
  std::vector<attnviz::AttentionMap> pool(3);  // value-initialised one by one
  for (const auto& p : pool) seen.push_back(p.version);
  attnviz::AttentionMap copy = pool[0];  // a copy holds the same weights: it keeps the version
  EXPECT_EQ(copy.version, pool[0].version);
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_NE(seen[i], 0u);
    for (size_t j = 0; j < i; ++j) EXPECT_NE(seen[i], seen[j]) << i << " " << j;
  }
}

TEST(HeatmapUploads, AnUploadThatWouldEndPastTheDeadlineWaitsUnlessItIsTheFramesFirst) {
  using clock = std::chrono::steady_clock;
  attnviz::HeatmapEnv env;
  int64_t budget = int64_t(16) << 20;
  clock::time_point deadline = clock::now() + std::chrono::milliseconds(50);
  float ms = 0;
  attnviz::UploadSpeed speed;
  const float& per_mib = speed.ms_per_mib;
  int uploads = 0;
  env.upload_budget = &budget, env.upload_deadline = &deadline, env.upload_ms = &ms, env.uploads = &uploads;
  env.upload_speed = &speed;
  const int64_t mib = int64_t(1) << 20;
  EXPECT_TRUE(attnviz::UploadFits(env, 64 * mib));  // the frame's first: always
  // One MiB in 20 ms: the speed is learnt; 1 MiB more fits in the 50 ms, 4 MiB do not.
  const clock::time_point t0 = clock::now();
  attnviz::CountUpload(env, mib, t0, t0 + std::chrono::milliseconds(20));
  EXPECT_EQ(uploads, 1);
  EXPECT_NEAR(per_mib, 20.0f, 0.01f);
  EXPECT_NEAR(ms, 20.0f, 0.01f);
  EXPECT_EQ(budget, 15 * mib);
  EXPECT_TRUE(attnviz::UploadFits(env, mib));
  EXPECT_FALSE(attnviz::UploadFits(env, 4 * mib));
  // A faster one moves the mean a fifth of the way; small uploads (call overhead) leave it.
  attnviz::CountUpload(env, mib, t0, t0 + std::chrono::milliseconds(10));
  EXPECT_NEAR(per_mib, 18.0f, 0.01f);
  attnviz::CountUpload(env, 1024, t0, t0 + std::chrono::milliseconds(10));
  EXPECT_NEAR(per_mib, 18.0f, 0.01f);
  // An upload that ends past the deadline empties the frame's budget.
  attnviz::CountUpload(env, mib, t0, deadline + std::chrono::milliseconds(1));
  EXPECT_EQ(budget, 0);
  // Without a deadline (an eagerly read file) everything fits.
  env.upload_deadline = nullptr;
  EXPECT_TRUE(attnviz::UploadFits(env, 1024 * mib));
}

// A thumbnail's texture is its map max-pooled to about its pixels once the map has over 1.5 cells a
// pixel (a 256 x 256 overview in a 40 px thumbnail made the shader fetch 7 x 7 texels a pixel), and
// keeps that size through small resizes.
TEST(HeatmapThumbnails, ABigMapIsPooledToItsPixelsAndKeepsItsSizeThroughSmallResizes) {
  EXPECT_EQ(attnviz::ThumbnailSide(24, 40.0f, 0), 0);     // fewer cells than pixels: as it is
  EXPECT_EQ(attnviz::ThumbnailSide(60, 40.0f, 0), 0);     // 1.5 a pixel: as it is (2 x 2 in the shader)
  EXPECT_EQ(attnviz::ThumbnailSide(256, 40.0f, 0), 40);   // pooled to the pixels
  EXPECT_EQ(attnviz::ThumbnailSide(256, 40.7f, 0), 40);   // never more cells than pixels when pooled anew
  EXPECT_EQ(attnviz::ThumbnailSide(256, 50.0f, 40), 40);  // a little bigger: kept
  EXPECT_EQ(attnviz::ThumbnailSide(256, 30.0f, 40), 40);  // a little smaller: kept
  EXPECT_EQ(attnviz::ThumbnailSide(256, 60.0f, 40), 60);  // 0.67 of the pixels: pooled again
  EXPECT_EQ(attnviz::ThumbnailSide(256, 20.0f, 40), 20);  // 2 a pixel: pooled again
  EXPECT_EQ(attnviz::ThumbnailSide(256, 200.0f, 40), 0);  // the pixels outgrew the map: as it is
  EXPECT_EQ(attnviz::ThumbnailSide(4096, 0.0f, 0), 1);    // no pixels: one cell
}

// The grid's thumbnail layers: a layer drawn this frame is never taken from its owner (its draw
// comes after every widget has asked); the least recently drawn one goes to a new owner; a reset
// (the array grown) loses every layer; each upload gives the layer a version not seen before.
TEST(HeatmapThumbnails, ThumbnailLayersGoToTheLeastRecentlyDrawnAndNeverMidFrame) {
  attnviz::ThumbLayerSlots slots;
  slots.Reset(3);
  int owners[5] = {};
  const uint64_t gen = slots.Generation();
  EXPECT_EQ(slots.Take(&owners[0]), 0);
  EXPECT_EQ(slots.Take(&owners[1]), 1);
  EXPECT_EQ(slots.Take(&owners[2]), 2);
  EXPECT_EQ(slots.Take(&owners[3]), -1);  // all three drawn this frame
  slots.BeginFrame();                     // frame 2: owners 0 and 2 drawn again, 1 not
  EXPECT_TRUE(slots.Held(&owners[0], 0, gen));
  EXPECT_TRUE(slots.Held(&owners[2], 2, gen));
  EXPECT_FALSE(slots.Held(&owners[0], 1, gen));  // not its layer
  slots.BeginFrame();                            // frame 3: owner 2 drawn; owner 3 takes the least recently drawn, 1's
  EXPECT_TRUE(slots.Held(&owners[2], 2, gen));
  EXPECT_EQ(slots.Take(&owners[3]), 1);
  EXPECT_FALSE(slots.Held(&owners[1], 1, gen));  // 1 lost it
  EXPECT_EQ(slots.Take(&owners[4]), 0);          // then 0's (drawn in frame 2)
  EXPECT_EQ(slots.Take(&owners[1]), -1);         // and none is left this frame
  slots.Stamp(1);
  const uint64_t v = slots.Version(1);
  slots.Stamp(0);
  slots.Stamp(1);
  EXPECT_GT(slots.Version(1), v);
  EXPECT_NE(slots.Version(0), slots.Version(1));
  EXPECT_EQ(slots.Version(7), 0u);  // no such layer
  slots.Reset(4);
  EXPECT_NE(slots.Generation(), gen);
  EXPECT_FALSE(slots.Held(&owners[2], 2, gen));  // every layer lost
  EXPECT_FALSE(slots.Held(&owners[2], 2, slots.Generation()));
  EXPECT_EQ(slots.Take(&owners[2]), 0);
}

// One slow upload (a descheduled thread) judges the rest of its own frame only: the next frame starts
// from the median of the recent ones. (It held the estimate up for as many frames as the decay took,
// one upload each: under load a 1024-head grid filled one thumbnail per frame.)
TEST(HeatmapUploads, ASlowUploadSlowsItsOwnFrameOnly) {
  attnviz::UploadSpeed speed;
  speed.BeginFrame();
  EXPECT_EQ(speed.ms_per_mib, 0.0f);  // nothing seen: nothing predicted
  for (int i = 0; i < 10; ++i) speed.Add(2.0f + 0.1f * (float)(i % 3));
  speed.Add(160.0f);                    // 20 ms for 128 KiB
  EXPECT_EQ(speed.ms_per_mib, 160.0f);  // up at once, within the frame
  speed.Add(2.0f);
  EXPECT_GT(speed.ms_per_mib, 100.0f);  // down slowly
  speed.BeginFrame();
  EXPECT_NEAR(speed.ms_per_mib, 2.1f, 0.01f);  // the median of the last samples
  // Uploads that got slower and stayed slow: the median follows once they are most of the samples.
  for (int i = 0; i < attnviz::UploadSpeed::kSamples / 2 - 1; ++i) speed.Add(40.0f);
  speed.BeginFrame();
  EXPECT_LT(speed.ms_per_mib, 40.0f);
  speed.Add(40.0f);
  speed.BeginFrame();
  EXPECT_EQ(speed.ms_per_mib, 40.0f);
  // Only the last kSamples count.
  for (int i = 0; i < attnviz::UploadSpeed::kSamples; ++i) speed.Add(3.0f);
  speed.BeginFrame();
  EXPECT_EQ(speed.ms_per_mib, 3.0f);
}

// The cell tooltip's rank: equal weights share a rank and the tooltip says how many others tie (a
// causal row's zeros read "rank 4 of 6" as if they were ranked); a NaN ranks nowhere.
TEST(HeatmapTooltip, RankCountsOnlyLargerWeightsAndTiesAreCounted) {
  const float row[6] = {0.5f, 0.25f, 0.25f, 0.0f, 0.0f, 0.0f};
  int ties = -1;
  EXPECT_EQ(attnviz::RowRank(row, 6, 0, &ties), 1);
  EXPECT_EQ(ties, 0);
  EXPECT_EQ(attnviz::RowRank(row, 6, 2, &ties), 2);
  EXPECT_EQ(ties, 1);
  EXPECT_EQ(attnviz::RowRank(row, 6, 5, &ties), 4);
  EXPECT_EQ(ties, 2);
  const float odd[3] = {0.5f, NAN, 0.5f};
  EXPECT_EQ(attnviz::RowRank(odd, 3, 1, &ties), 0);
  EXPECT_EQ(ties, 0);
  EXPECT_EQ(attnviz::RowRank(odd, 3, 2, &ties), 1) << "a NaN is larger than nothing";
  EXPECT_EQ(ties, 1);
}

TEST(AppViews, RegistryNamesEveryViewAndEachOneDraws) {
  HeadlessApp t;
  ASSERT_EQ(attnviz::ViewCount(), 7);
  for (int i = 0; i < attnviz::ViewCount(); ++i) {
    const std::string name = attnviz::ViewInfoAt(i).name;
    t.Run("view " + name);
    t.Frames(3);
    const JsonValue d = t.Describe();
    EXPECT_EQ(Get(d, "view").string, name);
    EXPECT_TRUE(Get(d, name.c_str()).IsObject()) << "every view writes its own object: " << name;
  }
}

TEST(AppViews, HeatmapDrawsTheRowsTheDecodingStepShows) {
  HeadlessApp t;
  t.Run("example translation");
  t.Run("view heatmap");
  for (int k = 0; k <= 4; ++k) {
    t.Run("step " + std::to_string(k));
    t.Frames(1);
    const JsonValue d = t.Describe();
    const JsonValue* h = Heatmap(d, "main");
    ASSERT_NE(h, nullptr) << "the heatmap view drew no heatmap";
    EXPECT_EQ(Num(*h, "rows_shown"), k);
    EXPECT_EQ(Num(d, "timeline.step"), k);
    EXPECT_EQ(Get(*h, "weights").numbers.size(), (size_t)(Num(*h, "rows") * Num(*h, "cols")));
    EXPECT_GT(Get(*h, "rect").numbers[2], Get(*h, "rect").numbers[0]) << "a matrix area of positive width";
  }
}

// A PNG (GIF, WebM) of the Heatmap or Translate view shows the heatmaps, their labels and matrices,
// not the controls above them or the space beside: describe's view_rect is the box read back. Lines
// shows its canvas, Grid its heads; views whose titles belong in the picture (Compare) keep their area.
TEST(AppViews, PngsOfHeatmapsShowTheFigureNotTheControls) {
  HeadlessApp t;
  t.Run("example translation");
  t.Run("view steps");
  t.Frames(2);
  const std::vector<double> area = Get(t.Describe(), "view_rect").numbers;  // Steps: the whole view
  ASSERT_EQ(area.size(), 4u);
  // Compare: its three titled panels, not the toolbar above them or the space below.
  t.Run("view compare");
  t.Frames(2);
  const JsonValue cmp = t.Describe();
  const std::vector<double> cr = Get(cmp, "view_rect").numbers;
  const JsonValue& panels = Get(cmp, "compare.panels");
  ASSERT_EQ(panels.ArraySize(), 3u);
  const JsonValue *left = &panels.items[0], *diff = &panels.items[2];
  ASSERT_EQ(cr.size(), 4u);
  EXPECT_GT(cr[1], area[1] + 10) << "the toolbar is left out";
  EXPECT_LT(cr[1], Get(*left, "rect").numbers[1] - 30) << "the titles and column labels are in";
  EXPECT_NEAR(cr[3], Get(*left, "rect").numbers[3] + 6, 1) << "tight below the panels";
  EXPECT_NEAR(cr[2], Get(*diff, "rect").numbers[2] + 6, 1) << "the difference panel is in";
  t.Run("view lines");
  t.Frames(2);
  const JsonValue lines = t.Describe();
  const std::vector<double> lr = Get(lines, "view_rect").numbers, lc = Get(lines, "lines.rect").numbers;
  ASSERT_EQ(lr.size(), 4u);
  ASSERT_EQ(lc.size(), 4u);
  EXPECT_GT(lr[1], area[1] + 40) << "Lines: the timeline and the toolbar are left out";
  EXPECT_GE(lr[1], lc[1] - 40) << "the tokens and lines, not the empty canvas above them";
  EXPECT_LE(lr[3], lc[3]) << "nor below";
  EXPECT_LT(lr[0], lc[0] - 20) << "the source labels are in";
  EXPECT_GT(lr[2], lc[2] + 20) << "the target labels are in";
  for (int k : {3, 5}) {  // the box does not change while the decoding plays
    t.Run("view heatmap");
    t.Run("step " + std::to_string(k));
    t.Frames(2);
    const JsonValue d = t.Describe();
    const JsonValue* h = Heatmap(d, "main");
    ASSERT_NE(h, nullptr);
    const std::vector<double> v = Get(d, "view_rect").numbers, m = Get(*h, "rect").numbers;
    ASSERT_EQ(v.size(), 4u);
    EXPECT_GT(v[1], area[1] + 10) << "the timeline's controls above the heatmap are left out";
    EXPECT_LT(v[1], m[1] - 10) << "the column labels are in";
    EXPECT_LT(v[0], m[0] - 10) << "the row labels are in";
    EXPECT_GE(v[0], area[0]);
    // The colour bar (on by default) is in, with its numbers, the height of the matrix.
    const std::vector<double> bar = Get(*h, "colorbar").numbers;
    ASSERT_EQ(bar.size(), 4u);
    EXPECT_GT(bar[0], m[2] + 4) << "right of the matrix";
    EXPECT_NEAR(bar[1], m[1], 0.5);
    EXPECT_NEAR(bar[3], m[3], 0.5);
    EXPECT_GT(v[2], bar[2] + 20) << "its numbers are in: " << v[2];
    EXPECT_LT(v[2], bar[2] + 80) << "tight on the right: " << v[2] << " of " << area[2];
    EXPECT_NEAR(v[3], m[3] + 6, 1) << "tight below: " << v[3] << " of " << area[3];
    EXPECT_LT(v[2], area[2] - 100) << "the view is wider than the matrix here";
    t.Run("colorbar off");
    t.Frames(2);
    const JsonValue off = t.Describe();
    const JsonValue* ho = Heatmap(off, "main");
    ASSERT_NE(ho, nullptr);
    EXPECT_EQ(ho->Find("colorbar"), nullptr);
    EXPECT_FALSE(Get(off, "colorbar").boolean);
    EXPECT_NEAR(Get(off, "view_rect").numbers[2], Get(*ho, "rect").numbers[2] + 6, 1)
        << "without it: tight on the matrix";
    t.Run("colorbar on");
  }
  // The grid of a 2 x 3-head file: its headers and thumbnails, not the sort bar above them.
  std::string f =
      R"({"format":"attnviz","version":1,"source_tokens":["a","b","c"],"target_tokens":["a","b","c"],"layers":[)";
  for (int l = 0; l < 2; ++l) {
    f += std::string(l ? "," : "") + R"({"name":"L","heads":[)";
    for (int h = 0; h < 3; ++h) f += std::string(h ? "," : "") + R"({"name":"h","weights":[[1,0,0],[0,1,0],[0,0,1]]})";
    f += "]}";
  }
  f += "]}";
  t.app.OpenFileBytes("heads.json", reinterpret_cast<const unsigned char*>(f.data()), f.size());
  t.Run("view grid");
  t.Frames(3);
  const JsonValue d = t.Describe();
  ASSERT_EQ(Get(d, "example").string, "file:heads.json") << Get(d, "message").string;
  const std::vector<double> g = Get(d, "view_rect").numbers;
  ASSERT_EQ(g.size(), 4u);
  EXPECT_GT(g[1], area[1] + 10) << "the sort bar is left out";
  EXPECT_LT(g[3], area[3] - 50) << "two rows of thumbnails end above the view's bottom";
  EXPECT_GT(g[2] - g[0], 100) << "three thumbnails wide";
}

// The figure's colour bar marks round numbers, as papers' colour bars do: not 0 / 0.491 / 0.982.
TEST(AppViews, TheColourBarMarksRoundNumbers) {
  auto ticks = [](attnviz::ScaleMode scale, float lo, float hi, int max) {
    attnviz::HeatmapStyle r;
    r.scale = scale, r.vmin = lo, r.vmax = hi;
    attnviz::ColourTick t[attnviz::kMaxColourTicks];
    const int n = attnviz::ColourBarTickList(r, max, t);
    std::string s;
    for (int i = 0; i < n; ++i)
      s += (i ? " " : "") + std::string(t[i].text) + "@" + std::to_string((int)std::lround(t[i].t * 1000));
    return s;
  };
  using attnviz::ScaleMode;
  EXPECT_EQ(ticks(ScaleMode::Global, 0, 0.982f, 6), "0@0 0.2@204 0.4@407 0.6@611 0.8@815");
  EXPECT_EQ(ticks(ScaleMode::Global, 0, 0.982f, 3), "0@0 0.5@509");
  EXPECT_EQ(ticks(ScaleMode::Global, 0, 1, 8), "0@0 0.2@200 0.4@400 0.6@600 0.8@800 1@1000");
  EXPECT_EQ(ticks(ScaleMode::Global, -0.3f, 0.3f, 5), "-0.2@167 0@500 0.2@833");
  EXPECT_EQ(ticks(ScaleMode::Global, 0, 0.0031f, 4), "0@0 0.001@323 0.002@645 0.003@968");
  EXPECT_EQ(ticks(ScaleMode::Log, 1e-4f, 1, 8), "0.0001@0 0.001@250 0.01@500 0.1@750 1@1000");
  EXPECT_EQ(ticks(ScaleMode::Log, 1e-8f, 1, 3), "1e-08@0 0.0001@500 1@1000");
  EXPECT_EQ(ticks(ScaleMode::PerRow, 0, 1, 6), "0@0 0.5@500 row max@1000");
  // No two round numbers in the range (or none at all): its ends, as the sidebar prints them.
  EXPECT_EQ(ticks(ScaleMode::Log, 0.02f, 0.09f, 6), "0.02@0 0.09@1000");
  EXPECT_EQ(ticks(ScaleMode::Global, 0.5f, 0.5f, 6), "0.5@0 0.5@1000");
  // The sidebar's bar states the range itself: its ends and middle, as they are.
  auto range = [](attnviz::ColourScale scale, float lo, float hi) {
    attnviz::ColourTick t[3];
    attnviz::RangeTicks(scale, lo, hi, t);
    return std::string(t[0].text) + " " + t[1].text + " " + t[2].text;
  };
  EXPECT_EQ(range(attnviz::ColourScale::Linear, 0, 0.982f), "0 0.491 0.982");
  EXPECT_EQ(range(attnviz::ColourScale::Log, 1e-4f, 1), "0.0001 0.01 1");
  EXPECT_EQ(range(attnviz::ColourScale::PerRow, 0.2f, 0.7f), "0 0.5 row max");
}

// A key pressed and released between two frames (a quick tap while a software-rendered frame takes
// 100+ ms) is one press: without the platform layer's KeyLatch imgui 1.86 never sees it; with it,
// the key is down for exactly one frame, and Space plays the animation.
TEST(AppKeys, ATapBetweenTwoFramesIsOnePress) {
  HeadlessApp t;
  ImGuiIO& io = ImGui::GetIO();
  io.KeyMap[ImGuiKey_Space] = GLFW_KEY_SPACE;
  t.Run("example translation");
  t.Run("view heatmap");
  t.Run("step 0");
  t.Frames(2);
  auto key = [&](attnviz::KeyLatch* latch, int k, bool down) {
    io.KeysDown[k] = down;  // as the GLFW backend's callback writes it, then the latch
    if (latch) latch->OnKey(io, k, down ? GLFW_PRESS : GLFW_RELEASE);
  };
  auto frame = [&](attnviz::KeyLatch* latch) {
    t.Frames(1);
    if (latch) latch->EndFrame(io);
  };
  auto playing = [&] {
    return Get(t.Describe(), "timeline.playing").boolean || Num(t.Describe(), "timeline.step") > 0;
  };

  key(nullptr, GLFW_KEY_SPACE, true);
  key(nullptr, GLFW_KEY_SPACE, false);
  frame(nullptr);
  EXPECT_FALSE(playing()) << "without the latch, the tap is lost (the reason for KeyLatch)";

  attnviz::KeyLatch latch;
  key(&latch, GLFW_KEY_SPACE, true);
  key(&latch, GLFW_KEY_SPACE, false);
  EXPECT_TRUE(io.KeysDown[GLFW_KEY_SPACE]) << "held until a frame has seen it";
  frame(&latch);
  EXPECT_TRUE(playing()) << "the tap reached the app";
  EXPECT_EQ(io.KeysDownDuration[GLFW_KEY_SPACE], 0.0f) << "pressed in that frame";
  EXPECT_FALSE(io.KeysDown[GLFW_KEY_SPACE]) << "and let go for the next";
  frame(&latch);
  EXPECT_LT(io.KeysDownDuration[GLFW_KEY_SPACE], 0.0f) << "one press, released in the next frame";

  // A key held across frames is released at once. Tapped, then pressed again before a frame, it is
  // two presses: down for a frame, up for one, then down again and held (still physically down).
  key(&latch, GLFW_KEY_RIGHT, true);
  frame(&latch);
  key(&latch, GLFW_KEY_RIGHT, false);
  EXPECT_FALSE(io.KeysDown[GLFW_KEY_RIGHT]);
  key(&latch, GLFW_KEY_LEFT, true);
  key(&latch, GLFW_KEY_LEFT, false);
  key(&latch, GLFW_KEY_LEFT, true);
  EXPECT_TRUE(io.KeysDown[GLFW_KEY_LEFT]) << "the first press, for the coming frame";
  frame(&latch);
  EXPECT_FALSE(io.KeysDown[GLFW_KEY_LEFT]) << "up for a frame between the two presses";
  frame(&latch);
  EXPECT_TRUE(io.KeysDown[GLFW_KEY_LEFT]) << "the second press";
  frame(&latch);
  EXPECT_TRUE(io.KeysDown[GLFW_KEY_LEFT]) << "still physically down";
  key(&latch, GLFW_KEY_LEFT, false);
  frame(&latch);

  // Ctrl tapped with a key keeps io.KeyCtrl for the frame that sees the key (Ctrl+O, Ctrl+S).
  key(&latch, GLFW_KEY_LEFT_CONTROL, true);
  key(&latch, GLFW_KEY_O, true);
  key(&latch, GLFW_KEY_O, false);
  io.KeyCtrl = false;  // the backend derives it from the array it just cleared
  key(&latch, GLFW_KEY_LEFT_CONTROL, false);
  EXPECT_TRUE(io.KeyCtrl && io.KeysDown[GLFW_KEY_O]);
  frame(&latch);
  EXPECT_FALSE(io.KeyCtrl || io.KeysDown[GLFW_KEY_O]);

  // Ctrl held across frames, then C tapped and Ctrl let go before the next frame: that frame sees
  // Ctrl+C, whichever of C and Ctrl goes up first.
  for (bool ctrl_up_first : {false, true}) {
    key(&latch, GLFW_KEY_LEFT_CONTROL, true);
    io.KeyCtrl = true;
    frame(&latch);
    EXPECT_TRUE(io.KeyCtrl) << "Ctrl is still held";
    key(&latch, GLFW_KEY_C, true);
    if (!ctrl_up_first) key(&latch, GLFW_KEY_C, false);
    io.KeyCtrl = false;  // the backend derives it from the array as Ctrl goes up
    key(&latch, GLFW_KEY_LEFT_CONTROL, false);
    if (ctrl_up_first) key(&latch, GLFW_KEY_C, false);
    EXPECT_TRUE(io.KeyCtrl && io.KeysDown[GLFW_KEY_C]) << (ctrl_up_first ? "Ctrl up first" : "C up first");
    frame(&latch);
    EXPECT_FALSE(io.KeyCtrl || io.KeysDown[GLFW_KEY_C]);
  }
  // A modifier alone (Shift tapped, nothing else waiting) is not held.
  key(&latch, GLFW_KEY_LEFT_SHIFT, true);
  frame(&latch);
  key(&latch, GLFW_KEY_LEFT_SHIFT, false);
  EXPECT_FALSE(io.KeysDown[GLFW_KEY_LEFT_SHIFT]);
}

// The Translate view with the keyboard in its sentence box, clicked into as a person does.
void ClickIntoTheSentenceBox(HeadlessApp& t) {
  ImGuiIO& io = ImGui::GetIO();
  io.KeyMap[ImGuiKey_A] = GLFW_KEY_A;
  io.KeyMap[ImGuiKey_Backspace] = GLFW_KEY_BACKSPACE;
  io.KeyMap[ImGuiKey_LeftArrow] = GLFW_KEY_LEFT;
  t.Run("view translate");
  t.Frames(2);
  const std::vector<double> box = Get(t.Describe(), "translate.input_rect").numbers;
  ASSERT_EQ(box.size(), 4u);
  ASSERT_GT(box[2], box[0]);
  io.MousePos = ImVec2((float)(box[0] + box[2]) / 2, (float)(box[1] + box[3]) / 2);
  io.MouseDown[0] = true;
  t.Frames(1);
  io.MouseDown[0] = false;
  t.Frames(1);
}

// Key events as the GLFW backend's callback delivers them (it writes io.KeysDown), then the latch;
// typed characters through the latch, or straight to imgui (!latched).
struct LatchedKeys {
  ImGuiIO& io;
  bool latched = true;
  attnviz::KeyLatch latch;
  void Key(int k, bool down) {
    io.KeysDown[k] = down;
    if (k == GLFW_KEY_LEFT_CONTROL) io.KeyCtrl = down;
    latch.OnKey(io, k, down ? GLFW_PRESS : GLFW_RELEASE);
  }
  void Tap(int k) { Key(k, true), Key(k, false); }
  void Type(const char* text) {
    for (const char* c = text; *c; ++c) latched ? latch.OnChar(io, (unsigned)*c) : io.AddInputCharacter((unsigned)*c);
  }
};

// Keys typed within one slow frame keep their order in a text box: Ctrl+A then "xy" replaces the
// sentence with "xy" (imgui 1.86 applies a frame's characters before its keys: without the latch's
// OnChar the x and y were typed first, then everything selected), and Backspace then "s" edits
// where the Backspace left the cursor.
TEST(AppKeys, TypingWithinOneFrameKeepsItsOrder) {
  for (bool latched : {false, true}) {
    SCOPED_TRACE(latched ? "with the latch" : "without it");
    HeadlessApp t;
    ImGuiIO& io = ImGui::GetIO();
    ClickIntoTheSentenceBox(t);
    if (HasFatalFailure()) return;
    LatchedKeys keys{io, latched, {}};
    attnviz::KeyLatch& latch = keys.latch;
    auto key = [&](int k, bool down) { keys.Key(k, down); };
    auto type = [&](const char* text) { keys.Type(text); };
    auto frame = [&] {
      t.Frames(1);
      latch.EndFrame(io);
    };
    key(GLFW_KEY_LEFT_CONTROL, true);  // all of this between two frames
    key(GLFW_KEY_A, true);
    key(GLFW_KEY_A, false);
    key(GLFW_KEY_LEFT_CONTROL, false);
    type("xy");
    frame();
    frame();
    const std::string first = Get(t.Describe(), "translate.input").string;
    key(GLFW_KEY_BACKSPACE, true);
    key(GLFW_KEY_BACKSPACE, false);
    type("s");
    frame();
    frame();
    const std::string second = Get(t.Describe(), "translate.input").string;
    if (latched) {
      EXPECT_EQ(first, "xy");
      EXPECT_EQ(second, "xs");
    } else {
      EXPECT_NE(first, "xy") << "imgui 1.86 alone types before it selects (the reason for OnChar)";
    }
  }
}

// Two editing keys within one slow frame both act, in order, and what is typed after them waits
// behind them: imgui 1.86 sees one press of a key per frame, so "Backspace, Backspace, x" came out
// as one deletion, and "Left, Left, y" as one step left.
TEST(AppKeys, TwoEditingKeysWithinOneFrameBothAct) {
  HeadlessApp t;
  ImGuiIO& io = ImGui::GetIO();
  ClickIntoTheSentenceBox(t);
  if (HasFatalFailure()) return;
  LatchedKeys keys{io, true, {}};
  attnviz::KeyLatch& latch = keys.latch;
  auto key = [&](int k, bool down) { keys.Key(k, down); };
  auto tap = [&](int k) { keys.Tap(k); };
  auto type = [&](const char* text) { keys.Type(text); };
  auto frames = [&] {
    for (int i = 0; i < 8; ++i) {
      t.Frames(1);
      latch.EndFrame(io);
    }
    EXPECT_FALSE(latch.Waiting()) << "8 frames did not take what waited";
  };
  auto input = [&] { return Get(t.Describe(), "translate.input").string; };
  key(GLFW_KEY_LEFT_CONTROL, true);  // select all, then "abc", each group between two frames
  tap(GLFW_KEY_A);
  key(GLFW_KEY_LEFT_CONTROL, false);
  type("abc");
  frames();
  ASSERT_EQ(input(), "abc");
  tap(GLFW_KEY_BACKSPACE);
  tap(GLFW_KEY_BACKSPACE);
  type("x");
  frames();
  EXPECT_EQ(input(), "ax") << "both Backspaces deleted, then x was typed";
  tap(GLFW_KEY_LEFT);
  tap(GLFW_KEY_LEFT);
  type("y");
  frames();
  EXPECT_EQ(input(), "yax") << "two steps left, then y";
  key(GLFW_KEY_LEFT_CONTROL, true);  // Ctrl+A, Ctrl let go, Backspace, z
  tap(GLFW_KEY_A);
  key(GLFW_KEY_LEFT_CONTROL, false);
  tap(GLFW_KEY_BACKSPACE);
  type("z");
  frames();
  EXPECT_EQ(input(), "z") << "everything selected, deleted, then z";
  key(GLFW_KEY_LEFT_CONTROL, true);  // Ctrl held across the taps: Ctrl+A twice, then Ctrl up
  tap(GLFW_KEY_A);
  tap(GLFW_KEY_A);
  key(GLFW_KEY_LEFT_CONTROL, false);
  type("w");
  frames();
  EXPECT_EQ(input(), "w") << "select all twice (not 'a' typed), then w";
  EXPECT_FALSE(io.KeyCtrl) << "Ctrl is up once the waiting keys had their frames";
  // Ctrl+A, then "th" as a browser delivers it (each key's event, then its character) while the
  // latch still holds Ctrl for the frame that sees A: T is not Ctrl+T, and nothing typed is lost
  // (a first form of the waiting keys made it Ctrl+T, then typed the "t" while it showed Ctrl).
  key(GLFW_KEY_LEFT_CONTROL, true);
  tap(GLFW_KEY_A);
  key(GLFW_KEY_LEFT_CONTROL, false);
  key(GLFW_KEY_T, true);
  type("t");
  key(GLFW_KEY_T, false);
  t.Frames(1);
  latch.EndFrame(io);
  key(GLFW_KEY_H, true);
  type("h");
  key(GLFW_KEY_H, false);
  frames();
  EXPECT_EQ(input(), "th");
}

// The help (? or h) fits the viewer it opens in, a full page or a 640 x 360 embed: its lines wrap
// inside the window (they ran past a fixed 460 px and were cut off) and a taller list scrolls.
TEST(AppKeys, HelpFitsTheViewerAndWrapsItsLines) {
  for (const ImVec2 display : {ImVec2(1280, 800), ImVec2(640, 360)}) {
    SCOPED_TRACE(display.x);
    HeadlessApp t;
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = display;
    t.Frames(1);
    io.AddInputCharacter('?');
    t.Frames(3);
    const ImGuiWindow* w = ImGui::FindWindowByName("Help");
    ASSERT_TRUE(w != nullptr && w->Active) << "? opens the help";
    EXPECT_LE(w->Size.x, display.x);
    EXPECT_LE(w->Size.y, display.y);
    EXPECT_LE(w->ContentSize.x, w->Size.x - 2 * w->WindowPadding.x + 1) << "no line runs past the window's edge";
  }
}

// A tap on a touch screen moves the pointer and presses in one frame. imgui 1.86 ignores such a
// press on a tab when the previous frame hovered another tab: on a phone every tap on a tab after
// the first did nothing. PressAfterMove gives the pointer a frame to hover first.
TEST(AppKeys, ATapOnATabSwitchesTheViewEvenWhenAnotherTabWasHovered) {
  for (bool settled : {false, true}) {
    SCOPED_TRACE(settled ? "with PressAfterMove" : "without it");
    HeadlessApp t;
    ImGuiIO& io = ImGui::GetIO();
    t.Run("view heatmap");
    t.Frames(3);
    JsonValue d = t.Describe();
    auto centre = [&](const char* view) {
      for (const JsonValue& tab : Get(d, "tabs").items)
        if (Get(tab, "view").string == view) {
          const std::vector<double>& r = Get(tab, "rect").numbers;
          return ImVec2((float)(r[0] + r[2]) / 2, (float)(r[1] + r[3]) / 2);
        }
      ADD_FAILURE() << "no tab " << view;
      return ImVec2(-1, -1);
    };
    const ImVec2 lines = centre("lines"), grid = centre("grid");
    attnviz::PressAfterMove presses;
    bool pressed = false;        // the backend's "just pressed" for the next frame
    auto tap = [&](ImVec2 at) {  // move, press and release between two frames
      io.MousePos = at;
      if (!settled || !presses.OnButton(0, GLFW_PRESS, at.x, at.y)) pressed = true;
    };
    auto frame = [&] {
      io.MouseDown[0] = pressed;  // as the backend: down for the frame after a press, then up
      pressed = false;
      if (settled) presses.BeginFrame(io, io.MousePos.x, io.MousePos.y);
      t.Frames(1);
      if (settled) presses.EndFrame([&](int) { pressed = true; });
    };
    std::string views;
    for (const ImVec2 at : {lines, grid, lines}) {
      tap(at);
      for (int i = 0; i < 4; ++i) frame();
      views += Get(t.Describe(), "view").string + " ";
    }
    if (settled)
      EXPECT_EQ(views, "lines grid lines ") << "every tap switched";
    else
      EXPECT_NE(views, "lines grid lines ") << "imgui 1.86 alone ignores a tap while another tab is hovered";
  }
}

// Up / Down browse the heads one by one (on into the next layer), Page Up / Page Down the layers.
TEST(AppKeys, ArrowsBrowseHeadsAndPageKeysBrowseLayers) {
  HeadlessApp t;
  ImGuiIO& io = ImGui::GetIO();
  io.KeyMap[ImGuiKey_UpArrow] = GLFW_KEY_UP;
  io.KeyMap[ImGuiKey_DownArrow] = GLFW_KEY_DOWN;
  io.KeyMap[ImGuiKey_PageUp] = GLFW_KEY_PAGE_UP;
  io.KeyMap[ImGuiKey_PageDown] = GLFW_KEY_PAGE_DOWN;
  const std::string head = "[[0.5,0.5],[0.5,0.5]]", layer = "{\"heads\":[" + head + "," + head + "," + head + "]}";
  const std::string f = R"({"tokens":["a","b"],"layers":[)" + layer + "," + layer + "]}";
  t.app.OpenFileBytes("heads.json", reinterpret_cast<const unsigned char*>(f.data()), f.size());
  t.Run("view heatmap");
  t.Frames(1);
  auto press = [&](int key) {
    io.KeysDown[key] = true;
    t.Frames(1);
    io.KeysDown[key] = false;
    t.Frames(1);
    return (int)Num(t.Describe(), "map");
  };
  ASSERT_EQ(Num(t.Describe(), "map"), 0);
  EXPECT_EQ(press(GLFW_KEY_DOWN), 1);
  EXPECT_EQ(press(GLFW_KEY_DOWN), 2);
  EXPECT_EQ(press(GLFW_KEY_DOWN), 3) << "past the layer's last head: the next layer's first";
  EXPECT_EQ(press(GLFW_KEY_UP), 2);
  EXPECT_EQ(press(GLFW_KEY_PAGE_UP), 2) << "no layer above layer 0";
  EXPECT_EQ(press(GLFW_KEY_PAGE_DOWN), 5) << "layer 1, the same head 2";
  EXPECT_EQ(press(GLFW_KEY_DOWN), 5) << "the last map stays";
  EXPECT_EQ(press(GLFW_KEY_PAGE_UP), 2);
}

// Translate animates its own decoding: the keys (Space, Left, Right, Home, End), play / pause /
// step and describe's timeline act on it there (so a GIF of the view animates the translation),
// and on the example's timeline in the other views.
TEST(AppKeys, TranslateKeysAndCommandsDriveItsOwnDecoding) {
  HeadlessApp t;  // opens on Translate, which translates and plays its default sentence
  ImGuiIO& io = ImGui::GetIO();
  io.KeyMap[ImGuiKey_Space] = GLFW_KEY_SPACE;
  io.KeyMap[ImGuiKey_LeftArrow] = GLFW_KEY_LEFT;
  io.KeyMap[ImGuiKey_Home] = GLFW_KEY_HOME;
  t.Frames(200);  // every word out
  auto tap = [&](int k) {
    io.KeysDown[k] = true;
    t.Frames(1);
    io.KeysDown[k] = false;
    t.Frames(1);
  };
  JsonValue d = t.Describe();
  ASSERT_EQ(Get(d, "view").string, "translate");
  EXPECT_EQ(Num(d, "timeline.count"), 5) << "the translation's rows: four words and </s>";
  EXPECT_EQ(Num(d, "translate.emitted"), 5);
  tap(GLFW_KEY_LEFT);
  d = t.Describe();
  EXPECT_EQ(Num(d, "translate.emitted"), 4) << "Left steps the translation back";
  EXPECT_EQ(Num(d, "timeline.step"), 4);
  tap(GLFW_KEY_HOME);
  EXPECT_EQ(Num(t.Describe(), "translate.emitted"), 0) << "Home: no word yet";
  tap(GLFW_KEY_SPACE);
  d = t.Describe();
  EXPECT_TRUE(Get(d, "timeline.playing").boolean) << "Space plays the translation";
  t.Run("pause");
  t.Run("step 3");
  t.Frames(1);
  d = t.Describe();
  EXPECT_EQ(Num(d, "translate.emitted"), 3) << "the step command too";
  EXPECT_FALSE(Get(d, "timeline.playing").boolean);
  t.Run("view heatmap");  // the example's own timeline
  t.Run("step 1");
  t.Frames(1);
  d = t.Describe();
  EXPECT_EQ(Num(d, "timeline.step"), 1);
  const JsonValue* h = Heatmap(d, "main");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(Num(*h, "rows_shown"), 1);
  EXPECT_EQ(Num(d, "translate.emitted"), 3) << "the translation kept its step";
  t.Run("view translate");
  t.Frames(1);
  EXPECT_EQ(Num(t.Describe(), "timeline.step"), 3);
}

// A frame that would draw the same as the last has the same fingerprint (the web build then keeps the
// canvas's image instead of drawing it again); the status bar's readout refreshes twice a second
// (not every frame); a change on screen gives a new fingerprint.
TEST(AppFrames, AFrameThatDrawsTheSameHasTheFingerprintOfTheLast) {
  HeadlessApp t;
  t.Run("example translation");
  t.Run("view heatmap");
  t.Frames(3);
  uint64_t last = t.app.DrawFingerprint();
  int same = 0;
  for (int i = 0; i < 60; ++i) {  // one second at 60 Hz
    t.Frames(1);
    const uint64_t fp = t.app.DrawFingerprint();
    same += fp == last;
    last = fp;
  }
  EXPECT_GE(same, 57) << "an unchanged screen: only the readout's refreshes may make a frame new";
  t.Run("view lines");
  t.Frames(1);
  EXPECT_NE(t.app.DrawFingerprint(), last) << "another view drew the fingerprint of the last";
}

// The window's background and its two panels are GPU clears (panel_fill.h), not triangles: a
// software renderer paid ~15 ms of a 2-core machine for each screenful of triangles, and they were
// two screenfuls of every frame, more in views with a scrolling child of their own (stop 56).
TEST(AppFrames, TheBackgroundAndThePanelsAreClearsNotTriangles) {
  HeadlessApp t;
  const ImVec2 screen = ImGui::GetIO().DisplaySize;
  const ImU32 panel = ImGui::GetColorU32(ImGuiCol_ChildBg);
  for (int v = 0; v < attnviz::ViewCount(); ++v) {
    const std::string name = attnviz::ViewInfoAt(v).name;
    t.Run("view " + name);
    t.Frames(3);
    const ImDrawData* dd = ImGui::GetDrawData();
    ASSERT_TRUE(dd && dd->Valid);
    double area = 0, largest = 0;  // of every triangle, and the largest one, in screenfuls
    std::vector<ImVec4> fills;
    for (int i = 0; i < dd->CmdListsCount; ++i) {
      const ImDrawList* l = dd->CmdLists[i];
      for (const ImDrawCmd& c : l->CmdBuffer) {
        ImU32 col = 0;
        if (attnviz::IsOpaqueFill(c, &col)) {
          EXPECT_EQ(col, panel) << name;
          fills.push_back(c.ClipRect);
        }
        if (c.UserCallback) continue;
        for (unsigned k = 0; k + 2 < c.ElemCount; k += 3) {
          const ImDrawIdx* ix = l->IdxBuffer.Data + c.IdxOffset + k;
          const ImVec2 a = l->VtxBuffer[(int)(c.VtxOffset + ix[0])].pos,
                       b = l->VtxBuffer[(int)(c.VtxOffset + ix[1])].pos,
                       d = l->VtxBuffer[(int)(c.VtxOffset + ix[2])].pos;
          const double one =
              0.5 * std::fabs((b.x - a.x) * (d.y - a.y) - (d.x - a.x) * (b.y - a.y)) / (screen.x * screen.y);
          area += one;
          largest = std::max(largest, one);
        }
      }
    }
    // Before: 1.9 screens and more, two triangles of 0.34 (the view area) and 0.5 (the background).
    EXPECT_LT(area, 0.75) << name << ": triangles cover " << area << " screens";
    EXPECT_LT(largest, 0.05) << name << ": a triangle covers " << largest << " of the screen";
    ASSERT_EQ(fills.size(), 2u) << name << ": the sidebar and the view area";
    const ImVec4 side = fills[0], main = fills[1];
    EXPECT_NEAR(side.z - side.x, 300.0f, 1.0f) << name;  // the sidebar: min(300, 28% of 1280)
    EXPECT_NEAR(main.z, screen.x - ImGui::GetStyle().WindowPadding.x, 1.0f) << name;
    EXPECT_GT(main.x, side.z) << name;
    EXPECT_GT((main.z - main.x) * (main.w - main.y), 0.6f * screen.x * screen.y) << name;
    EXPECT_FLOAT_EQ(side.y, main.y) << name;
  }
}

// A fill clears exactly the pixels ImGui's OpenGL backend scissors the same clip rectangle to
// (imgui_impl_opengl3.cpp), at any device-pixel ratio: before stop 62 each edge was truncated on its
// own, and at a ratio of 1.25 a panel's bottom or right edge could stop a pixel short of its contents.
TEST(AppFrames, AnOpaqueFillCoversWhatImGuiScissorsAtAnyPixelRatio) {
  int mismatches_before = 0;
  for (float ratio : {1.0f, 1.25f, 1.5f, 1.75f, 2.0f, 2.25f}) {
    const int fb_h = (int)(803.0f * ratio);
    for (float y = 0.0f; y < 40.0f; y += 0.5f) {
      const ImVec4 clip(8.3f + y, 30.0f + y, 311.7f + y, 760.1f - y);
      const ImVec2 off(0.0f, 0.0f), scale(ratio, ratio);
      int box[4];
      attnviz::OpaqueFillBox(clip, off, scale, fb_h, box);
      const ImVec2 mn(clip.x * ratio, clip.y * ratio), mx(clip.z * ratio, clip.w * ratio);
      // The backend's glScissor(x, y, w, h), GL's origin at the bottom left.
      const int x = (int)mn.x, gy = (int)((float)fb_h - mx.y), w = (int)(mx.x - mn.x), h = (int)(mx.y - mn.y);
      EXPECT_EQ(box[0], x) << ratio << " " << y;
      EXPECT_EQ(box[2] - box[0], w) << ratio << " " << y;
      EXPECT_EQ(fb_h - box[3], gy) << ratio << " " << y;
      EXPECT_EQ(box[3] - box[1], h) << ratio << " " << y;
      // Each edge truncated on its own, as before: not the backend's pixels at every ratio.
      mismatches_before += (int)mx.y != fb_h - gy || (int)mx.x - (int)mn.x != w || (int)mx.y - (int)mn.y != h;
    }
  }
  EXPECT_GT(mismatches_before, 0) << "the old rounding differed from the backend's somewhere";
}

// What a heatmap callback draws with is part of the fingerprint: its textures' names, versions and
// shapes, and each of its parameters (the draw data only points at the callback's data).
TEST(AppFrames, EveryHeatmapParameterAndTextureUploadChangesTheFingerprint) {
  attnviz::HeatmapTexture a, b;
  a.weights = 7, a.rows = 4, a.cols = 5;
  b.weights = 8, b.rows = 4, b.cols = 5;
  std::vector<attnviz::HeatmapCallbackData> cbs(1);
  cbs[0].draw.tex = &a;
  const uint64_t base = attnviz::FingerprintFrame(nullptr, cbs, 0);
  EXPECT_EQ(attnviz::FingerprintFrame(nullptr, cbs, 0), base) << "the same frame, another fingerprint";
  using Change = void (*)(attnviz::HeatmapCallbackData*, attnviz::HeatmapTexture*);
  const std::pair<const char*, Change> changes[] = {
      {"texture uploaded", [](attnviz::HeatmapCallbackData*, attnviz::HeatmapTexture* t) { t->version++; }},
      {"texture resized", [](attnviz::HeatmapCallbackData*, attnviz::HeatmapTexture* t) { t->rows++; }},
      {"another texture", [](attnviz::HeatmapCallbackData* c, attnviz::HeatmapTexture*) { c->draw.tex = nullptr; }},
      {"frame b", [](attnviz::HeatmapCallbackData* c, attnviz::HeatmapTexture* t) { c->draw.tex_b = t; }},
      {"mix", [](attnviz::HeatmapCallbackData* c, attnviz::HeatmapTexture*) { c->draw.frame_mix = 0.5f; }},
      {"vmax", [](attnviz::HeatmapCallbackData* c, attnviz::HeatmapTexture*) { c->draw.vmax = 0.5f; }},
      {"vmin", [](attnviz::HeatmapCallbackData* c, attnviz::HeatmapTexture*) { c->draw.vmin = 0.1f; }},
      {"scale",
       [](attnviz::HeatmapCallbackData* c, attnviz::HeatmapTexture*) { c->draw.scale = attnviz::ScaleMode::Log; }},
      {"colormap", [](attnviz::HeatmapCallbackData* c,
                      attnviz::HeatmapTexture*) { c->draw.colormap = attnviz::Colormap::Viridis; }},
      {"rows shown", [](attnviz::HeatmapCallbackData* c, attnviz::HeatmapTexture*) { c->draw.rows_shown = 3; }},
      {"view", [](attnviz::HeatmapCallbackData* c, attnviz::HeatmapTexture*) { c->draw.view[2] = 2.5f; }},
      {"empty colour", [](attnviz::HeatmapCallbackData* c, attnviz::HeatmapTexture*) { c->draw.empty_rgba[0] = 1; }},
      {"grid colour", [](attnviz::HeatmapCallbackData* c, attnviz::HeatmapTexture*) { c->draw.grid_rgba[3] = 0; }},
      {"rectangle", [](attnviz::HeatmapCallbackData* c, attnviz::HeatmapTexture*) { c->rect_imgui[1] = 9; }},
  };
  for (const auto& [what, change] : changes) {
    std::vector<attnviz::HeatmapCallbackData> changed = cbs;
    attnviz::HeatmapTexture t = a;
    changed[0].draw.tex = &t;
    change(&changed[0], &t);
    if (changed[0].draw.tex == nullptr) changed[0].draw.tex = &b;
    EXPECT_NE(attnviz::FingerprintFrame(nullptr, changed, 0), base) << what;
  }
  EXPECT_NE(attnviz::FingerprintFrame(nullptr, cbs, 1), base) << "the extra word (labels made)";
  EXPECT_NE(attnviz::FingerprintFrame(nullptr, {}, 0), base) << "no heatmap";
}

TEST(AppViews, LinesDrawsOneLinePerWeightAboveTheThreshold) {
  HeadlessApp t;
  t.Run("example translation");
  t.Run("view heatmap");
  t.Frames(2);
  const JsonValue hd = t.Describe();
  const JsonValue* h = Heatmap(hd, "main");
  ASSERT_NE(h, nullptr);
  const std::vector<double>& w = Get(*h, "weights").numbers;
  const int cols = (int)Num(*h, "cols");
  t.Run("view lines");
  t.Run("lines-threshold 0.1");
  for (int k : {2, 4}) {
    t.Run("step " + std::to_string(k));
    t.Frames(2);
    int expected = 0;
    for (int r = 0; r < k; ++r)
      for (int c = 0; c < cols; ++c) expected += w[(size_t)(r * cols + c)] >= 0.1 ? 1 : 0;
    const JsonValue d = t.Describe();
    EXPECT_TRUE(Get(d, "lines.valid").boolean);
    EXPECT_EQ(Num(d, "lines.rows_shown"), k);
    EXPECT_EQ(Num(d, "lines.drawn"), expected) << "step " << k;
    EXPECT_GT(expected, 0);
  }
  EXPECT_FALSE(t.app.Command("lines-threshold 2").ok);
}

TEST(AppViews, GridDrawsEveryHeadAndSortsByEntropy) {
  HeadlessApp t;
  t.Run("example multihead");
  t.Run("view grid");
  t.Frames(3);
  JsonValue d = t.Describe();
  EXPECT_EQ(Num(d, "grid.drawn"), 8) << "2 layers x 4 heads";
  int thumbs = 0;
  for (int i = 0; i < 8; ++i) thumbs += Heatmap(d, "thumb" + std::to_string(i)) ? 1 : 0;
  EXPECT_EQ(thumbs, 8);
  t.Run("grid-sort entropy");
  t.Frames(2);
  d = t.Describe();
  const JsonValue& order = Get(d, "grid.order");
  const JsonValue& stats = Get(d, "grid.stats");
  ASSERT_EQ(order.ArraySize(), 8u);
  for (size_t i = 1; i < 8; ++i) {
    const double prev = Num(stats.items[(size_t)order.numbers[i - 1]], "entropy");
    const double cur = Num(stats.items[(size_t)order.numbers[i]], "entropy");
    EXPECT_LE(prev, cur) << "grid position " << i;
  }
  EXPECT_FALSE(t.app.Command("grid-sort sideways").ok);
}

// A 32-head layer's thumbnails are ~40 px wide: a caption too wide for its cell is shortened (the
// statistic's name, then its value), not cut mid-number ("L26H19 ent 3.21" cut read "L26H1").
TEST(AppViews, GridCaptionsTooWideForTheirCellsAreShortenedNotCut) {
  HeadlessApp t;
  ASSERT_TRUE(OpenNpy(t, "wide.npy", {2, 32, 6, 6}, [](size_t k) { return (float)((k * 7) % 11 + 1) / 66.0f; }).ok);
  t.Run("view grid");
  t.Frames(4);
  JsonValue d = t.Describe();
  ASSERT_GT(Num(d, "grid.drawn"), 32) << "a layer of 32 heads in view";
  EXPECT_EQ(Num(d, "grid.caption_level"), 1) << "'ent 0.00' is wider than a 40 px cell, '0.00' is not";
  EXPECT_EQ(Num(d, "grid.caption_scale"), 1.0);
  EXPECT_FALSE(Get(d, "grid.captions_cut").boolean);
  t.Run("grid-sort entropy");
  t.Frames(3);
  d = t.Describe();
  EXPECT_EQ(Num(d, "grid.caption_level"), 2) << "the value under the head";
  EXPECT_EQ(Num(d, "grid.caption_lines"), 2);
  EXPECT_GE(Num(d, "grid.caption_scale"), 0.9) << "'L1H31' at most a little smaller";
  EXPECT_FALSE(Get(d, "grid.captions_cut").boolean);
  {  // the value the grid is sorted by is still said: "L<l>H<h>\n<entropy>"
    const int first = (int)Get(d, "grid.order").numbers[0];
    char want[64];
    std::snprintf(want, sizeof(want), "L%dH%d\n%.2f", first / 32, first % 32,
                  Num(Get(d, "grid.stats").items[(size_t)first], "entropy"));
    EXPECT_EQ(Get(d, "grid.caption_first").string, want);
  }
  // 2 layers of 12 heads (BERT's), cells ~70 px in this window: the head and the value a little
  // smaller, rather than the head alone.
  ASSERT_TRUE(OpenNpy(t, "bert.npy", {2, 12, 6, 6}, [](size_t k) { return (float)(k % 5 + 1) / 21.0f; }).ok);
  t.Run("view grid");
  t.Run("grid-sort entropy");
  t.Frames(3);
  d = t.Describe();
  EXPECT_EQ(Num(d, "grid.caption_level"), 1) << "'L1H11 0.23'";
  EXPECT_EQ(Num(d, "grid.caption_lines"), 1);
  EXPECT_GE(Num(d, "grid.caption_scale"), 0.8);
  EXPECT_FALSE(Get(d, "grid.captions_cut").boolean);
}

// Where cells are thinner than a line, the labels are thinned and centred on their rows and columns:
// the first row's and the first column's ("0") reached half a line past the matrix and were cut in
// half. They are moved inside; nothing is cut, and no two labels of an axis overlap.
TEST(AppViews, ThinnedAxisLabelsAtTheMatrixEdgesAreNotCut) {
  HeadlessApp t;
  for (int n : {600, 97, 1000, 4096}) {
    SCOPED_TRACE(n);
    ASSERT_TRUE(OpenNpy(t, "long.npy", {n, n}, [n](size_t k) { return k % (size_t)(n + 1) == 0 ? 1.0f : 0.0f; }).ok);
    t.Run("view heatmap");
    t.Frames(3);
    const JsonValue d = t.Describe();
    const JsonValue& h = Get(d, "heatmaps").items.at(0);
    ASSERT_GT(Num(h, "labels.row_stride"), 1) << "thinned";
    ASSERT_GT(Num(h, "labels.col_stride"), 1) << "thinned";
    EXPECT_EQ(Num(h, "labels.cut"), 0);
    const std::vector<double>& rect = Get(h, "rect").numbers;  // x0, y0, x1, y1
    ASSERT_EQ(rect.size(), 4u);
    int firsts = 0;
    std::vector<std::pair<double, double>> spans[2];  // each axis's labels along it
    for (const JsonValue& l : Get(h, "labels.boxes").items) {
      const std::vector<double>& b = l.numbers;  // axis, index, x0, y0, x1, y1, vertical
      ASSERT_EQ(b.size(), 7u);
      const int axis = b[0] == 0 ? 0 : 1;
      spans[axis].push_back(axis == 0 ? std::make_pair(b[3], b[5]) : std::make_pair(b[2], b[4]));
      if (b[1] != 0) continue;
      ++firsts;
      if (axis == 0)
        EXPECT_GE(b[3], rect[1] - 0.5) << "row 0's label starts below the matrix's top";
      else
        EXPECT_GE(b[2], rect[0] - 0.5) << "column 0's label starts right of its left edge";
    }
    EXPECT_EQ(firsts, 2) << "row 0 and column 0 are labelled";
    for (auto& v : spans) {
      std::sort(v.begin(), v.end());
      for (size_t i = 1; i < v.size(); ++i)
        EXPECT_GE(v[i].first, v[i - 1].second - 0.5) << "label " << i << " overlaps";
    }
  }
}

TEST(AppViews, StepsTableShowsSeed002Numbers) {
  HeadlessApp t;
  t.Run("example seed002");
  t.Run("view steps");
  t.Frames(3);
  JsonValue d = t.Describe();
  const std::vector<double>& scores = Get(d, "steps.shown_scores").numbers;
  const std::vector<double>& weights = Get(d, "steps.shown_weights").numbers;
  ASSERT_EQ(scores.size(), 4u) << "the table drew one row per key";
  const double want_scores[4] = {927, 397, 148, 929};
  const double want_weights[4] = {0.1192, 0, 0, 0.8808};
  for (int j = 0; j < 4; ++j) {
    EXPECT_NEAR(scores[(size_t)j], want_scores[j], 1e-3);
    EXPECT_NEAR(weights[(size_t)j], want_weights[j], 1e-4);
  }
  // An edit recomputes through the core; a NaN is refused with a message that reaches the caller.
  t.Run("steps-set q 0 0 0");
  t.Frames(1);
  d = t.Describe();
  EXPECT_NE(Get(d, "steps.shown_scores").numbers[0], 927);
  const attnviz::Status nan = t.app.Command("steps-set q 0 0 nan");
  EXPECT_FALSE(nan.ok);
  EXPECT_FALSE(nan.message.empty());
  t.Frames(1);
  EXPECT_FALSE(Get(t.Describe(), "steps.error").string.empty());
}

TEST(AppViews, CompareDrawsThreePanelsOnlyWhenThereIsSomethingToCompare) {
  HeadlessApp t;
  t.Run("example seed004");
  t.Run("view compare");
  t.Frames(3);
  JsonValue d = t.Describe();
  EXPECT_EQ(Num(d, "compare.panels_drawn"), 3);
  EXPECT_TRUE(Get(d, "compare.available").boolean);
  EXPECT_EQ(Get(d, "compare.panels").ArraySize(), 3u);
  // The summary ("largest change ...") sits right under the matrices, not at the bottom of the view
  // (a 4 x 4 map's square cells fill a third of the width and leave the height below them empty).
  double bottom = 0;
  for (const JsonValue& h : Get(d, "compare.panels").items) bottom = std::max(bottom, Get(h, "rect").numbers[3]);
  ASSERT_GT(bottom, 0);
  const double summary = Num(d, "compare.summary_y");
  EXPECT_GE(summary, bottom) << "below the matrices";
  EXPECT_LT(summary, bottom + 30) << "and right under them";
  // A file with one map and no q, k, v: nothing to compare, nothing drawn.
  const std::string one = R"({"format":"attnviz","version":1,"source_tokens":["a","b"],"target_tokens":["x"],)"
                          R"("layers":[{"name":"L","heads":[{"name":"h","weights":[[0.25,0.75]]}]}]})";
  t.app.OpenFileBytes("one.json", reinterpret_cast<const unsigned char*>(one.data()), one.size());
  t.Run("view compare");
  t.Frames(3);
  d = t.Describe();
  EXPECT_EQ(Get(d, "example").string, "file:one.json");
  EXPECT_EQ(Num(d, "compare.panels_drawn"), 0);
  EXPECT_FALSE(Get(d, "compare.available").boolean);
}

// Compare's left and right panels share one colour range (the wider of the two), so that a colour
// is the same weight on both sides; the sidebar's colour bar (describe's vmax) says which.
TEST(AppViews, CompareSidesShareOneColourRange) {
  HeadlessApp t;
  t.Run("example seed004");
  t.Run("view compare");
  t.Run("compare-scores dot scaled_dot");
  t.Frames(3);
  const JsonValue d = t.Describe();
  const JsonValue& panels = Get(d, "compare.panels");
  ASSERT_EQ(panels.ArraySize(), 3u);
  const JsonValue *left = &panels.items[0], *right = &panels.items[1];
  auto largest = [](const JsonValue& h) {
    const std::vector<double>& w = Get(h, "weights").numbers;
    return w.empty() ? -1.0 : *std::max_element(w.begin(), w.end());
  };
  const double a = largest(*left), b = largest(*right);
  ASSERT_GT(std::fabs(a - b), 0.05) << "the two score functions give maps of different largest weights";
  EXPECT_NEAR(Num(*left, "vmax"), std::max(a, b), 1e-5);
  EXPECT_NEAR(Num(*right, "vmax"), std::max(a, b), 1e-5) << "one range for both sides";
  EXPECT_NEAR(Num(d, "vmax"), std::max(a, b), 1e-5) << "and the colour bar shows it";
}

TEST(AppViews, TranslateShowsTheWordsItEmitted) {
  HeadlessApp t;  // opens on Translate, which translates its default sentence
  t.Frames(1);
  JsonValue d = t.Describe();
  EXPECT_EQ(Get(d, "view").string, "translate");
  EXPECT_TRUE(Get(d, "translate.ok").boolean) << Get(d, "translate.error").string;
  EXPECT_EQ(Get(d, "translate.output").string,
            "la zone \xc3\xa9"
            "conomique europ\xc3\xa9"
            "enne");
  t.Frames(200);  // 3.3 s at 2.5 words per second: every word is out
  d = t.Describe();
  EXPECT_EQ(Get(d, "translate.shown_words").string, Get(d, "translate.output").string);
  const JsonValue* h = Heatmap(d, "translation");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(Num(*h, "rows"), 5) << "four words and </s>";
  EXPECT_EQ(Num(*h, "rows_shown"), 5);
  EXPECT_FALSE(t.app.Command("model 99").ok);
}

// Unknown words are listed once each, with how often they occur, and at most five lines (the rest on
// hover): a sentence with "europe" ten times took ten lines and squeezed the figure. A sentence
// longer than the box holds is refused, not cut mid-word and translated.
TEST(AppViews, TranslateListsEachUnknownWordOnceAndRefusesASentenceItWouldCut) {
  HeadlessApp t;
  std::string repeated;
  for (int i = 0; i < 10; ++i) repeated += "the green cars of europe ";
  t.Run("translate " + repeated);
  t.Frames(2);
  JsonValue d = t.Describe();
  EXPECT_EQ(Num(d, "translate.unknown"), 10) << "every position is still flagged";
  EXPECT_EQ(Num(d, "translate.unknown_lines"), 1) << "one line for the one word";
  t.Run("translate zorb blix quon frap vell mip");
  t.Frames(2);
  d = t.Describe();
  EXPECT_EQ(Num(d, "translate.unknown"), 6);
  EXPECT_EQ(Num(d, "translate.unknown_lines"), 5) << "four words, then 'and 2 more'";
  const attnviz::Status st = t.app.Command("translate " + std::string(300, 'x'));
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("300 bytes"), std::string::npos) << st.message;
  EXPECT_EQ(Get(t.Describe(), "translate.input").string, "zorb blix quon frap vell mip") << "the box is unchanged";
}

// A phone-sized page (390 x 800): no sidebar by default, and Translate's sentence box on a row of
// its own, whole and wide enough to type in (beside the pickers it ran past the right edge).
TEST(AppViews, ANarrowPageHidesTheSidebarAndKeepsTheSentenceBoxInView) {
  HeadlessApp t;
  ImGuiIO& io = ImGui::GetIO();
  io.DisplaySize = ImVec2(390, 800);
  t.Frames(2);
  JsonValue d = t.Describe();
  EXPECT_FALSE(Get(d, "sidebar").boolean);
  const std::vector<double> box = Get(d, "translate.input_rect").numbers;
  ASSERT_EQ(box.size(), 4u);
  EXPECT_LE(box[2], 390) << "the box ends inside the page";
  EXPECT_GE(box[2] - box[0], 150) << "and is wide enough to type in";
  t.Run("sidebar on");  // View > Sidebar
  t.Frames(1);
  EXPECT_TRUE(Get(t.Describe(), "sidebar").boolean);
  io.DisplaySize = ImVec2(1280, 800);
  t.Run("sidebar auto");
  t.Frames(2);
  d = t.Describe();
  EXPECT_TRUE(Get(d, "sidebar").boolean) << "shown by default on a wide page";
  const std::vector<double> wide = Get(d, "translate.input_rect").numbers;
  ASSERT_EQ(wide.size(), 4u);
  EXPECT_LT(wide[1], box[1]) << "beside the pickers when there is room";
}

// Views that colour their own map (Translate: the translation) with the sidebar's settings: the
// colour bar's numbers (describe's range) and File > Save as SVG are the shown map's, not those
// of the example the other views show.
TEST(AppViews, TranslateColourRangeAndSvgAreTheTranslations) {
  HeadlessApp t;  // opens on Translate, which translates its default sentence
  t.Frames(200);
  JsonValue d = t.Describe();
  const JsonValue* h = Heatmap(d, "translation");
  ASSERT_NE(h, nullptr);
  EXPECT_NEAR(Num(d, "vmax"), Num(*h, "vmax"), 1e-6) << "the colour bar's top is the translation's largest weight";
  // The command's download: {file name, contents}; {"", ""} when it queued none.
  auto download = [&t](const char* command) {
    t.Run(command);
    std::string name, mime;
    std::vector<unsigned char> bytes;
    if (!t.app.PopDownload(&name, &mime, &bytes)) return std::make_pair(std::string(), std::string());
    return std::make_pair(name, std::string(bytes.begin(), bytes.end()));
  };
  const std::string word =
      "europ\xc3\xa9"
      "enne";
  const auto svg = download("save-svg");
  EXPECT_EQ(svg.first, "translate.svg");
  EXPECT_NE(svg.second.find("the european economic area -&gt; la zone"), std::string::npos)
      << "the title: " << svg.second.substr(0, 900);
  EXPECT_NE(svg.second.find(">" + word + "<"), std::string::npos) << "the translation's words label the rows";
  const auto csv = download("save-csv");
  EXPECT_EQ(csv.first, "translate.csv");
  EXPECT_NE(csv.second.find(word), std::string::npos) << "CSV and NPY save the map shown, too";
  EXPECT_EQ(download("save-npy").first, "translate.npy");
  t.Run("view heatmap");  // the example's map again
  t.Frames(2);
  d = t.Describe();
  h = Heatmap(d, "main");
  ASSERT_NE(h, nullptr);
  EXPECT_NEAR(Num(d, "vmax"), Num(*h, "vmax"), 1e-6);
  const auto example = download("save-svg");
  EXPECT_FALSE(example.first.empty());
  EXPECT_NE(example.first, "translate.svg") << "the example's own file name";
}

// Cells narrower than "0.00" (a 17-word translation: about 24 px) print their weights the way
// papers do, ".91" and "1.0", and leave the ones that round to 0 blank; they printed nothing.
TEST(AppViews, NumbersFitNarrowCellsInThePaperStyle) {
  HeadlessApp t;
  t.Run("translate The European Economic Area was signed in August 1992 by my grandmother's friend Zorglub!");
  t.Frames(2);
  t.Run("step 1000");  // the whole translation decoded
  t.Frames(2);
  JsonValue d = t.Describe();
  const JsonValue* h = Heatmap(d, "translation");
  ASSERT_NE(h, nullptr);
  const JsonValue& rect = Get(*h, "rect");
  ASSERT_EQ(rect.numbers.size(), 4u);
  const double cell = (rect.numbers[2] - rect.numbers[0]) / Num(*h, "cols");
  const int rows = (int)Num(*h, "rows_shown"), cols = (int)Num(*h, "cols");
  std::printf("cells %.1f px wide, %d x %d shown\n", cell, rows, cols);
  ASSERT_LT(cell, 30.0) << "the case this test is about: cells too narrow for \"0.00\"";
  ASSERT_GE(rows, 15);
  const std::vector<double>& w = Get(*h, "weights").numbers;
  ASSERT_GE(w.size(), (size_t)(rows * cols));
  int expected = 0;
  for (int i = 0; i < rows * cols; ++i) expected += std::fabs(w[(size_t)i]) >= 0.005;
  EXPECT_GT(expected, rows) << "more than one weight per row is worth printing";
  EXPECT_EQ(Num(*h, "numbers"), expected) << "every weight that does not round to 0, and only those";
  t.Run("numbers off");
  t.Frames(1);
  EXPECT_EQ(Num(*Heatmap(t.Describe(), "translation"), "numbers"), 0);
}

// Lines, all heads (BertViz's head view): every head of the current map's layer at once; each
// ticked head draws the lines of its own weights, and lines-heads picks them.
TEST(AppViews, LinesDrawEveryHeadOfTheLayerInItsColour) {
  HeadlessApp t;
  // 2 layers x 3 heads of 4 x 4: head h of layer l puts (l + h + 1) / 10 on the diagonal.
  std::string f = R"({"tokens":["a","b","c","d"],"layers":[)";
  std::vector<std::vector<double>> w;  // [layer * 3 + head] row-major weights
  for (int l = 0; l < 2; ++l) {
    f += l ? ",{\"heads\":[" : "{\"heads\":[";
    for (int h = 0; h < 3; ++h) {
      const double d = (l + h + 1) / 10.0, o = (1 - d) / 3;
      w.emplace_back();
      f += h ? ",[" : "[";
      for (int r = 0; r < 4; ++r) {
        f += r ? ",[" : "[";
        for (int c = 0; c < 4; ++c) {
          w.back().push_back(r == c ? d : o);
          f += (c ? "," : "") + std::to_string(r == c ? d : o);
        }
        f += "]";
      }
      f += "]";
    }
    f += "]}";
  }
  f += "]}";
  t.app.OpenFileBytes("heads.json", reinterpret_cast<const unsigned char*>(f.data()), f.size());
  t.Run("view lines");
  t.Run("step 4");
  t.Run("lines-threshold 0.25");  // the diagonal of heads with d >= 0.25, the rest where (1 - d) / 3 >= 0.25
  auto count = [&](int map) {
    int n = 0;
    for (double x : w[(size_t)map]) n += x >= 0.25;
    return n;
  };
  t.Frames(2);
  EXPECT_FALSE(Get(t.Describe(), "lines.all_heads").boolean) << "one map by default";
  EXPECT_EQ(Num(t.Describe(), "lines.drawn"), count(0));
  t.Run("lines-heads all");
  t.Frames(2);
  JsonValue d = t.Describe();
  ASSERT_TRUE(Get(d, "lines.all_heads").boolean);
  std::vector<double> drawn = Get(d, "lines.heads_drawn").numbers;
  ASSERT_EQ(drawn.size(), 3u);
  for (int h = 0; h < 3; ++h) EXPECT_EQ(drawn[(size_t)h], count(h)) << "head " << h;
  EXPECT_EQ(Num(d, "lines.drawn"), count(0) + count(1) + count(2));
  {  // hovering target "a": its partners are the keys any head draws a line to (all 4; head 0 alone: 3)
    const std::vector<double> rect = Get(d, "lines.rect").numbers, ty = Get(d, "lines.token_y").numbers;
    ASSERT_EQ(ty.size(), 4u);
    ImGui::GetIO().MousePos = ImVec2((float)rect[2] + 12.0f, (float)ty[2]);
    t.Frames(2);
    const JsonValue hd = t.Describe();
    EXPECT_EQ(Num(hd, "lines.hovered_target"), 0);
    EXPECT_EQ(Num(hd, "lines.partners"), 4) << "partners through every head drawn, not only the current map's";
    ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    t.Frames(1);
  }
  t.Run("lines-heads 0 2");
  t.Run("layer-head 1 0");
  t.Frames(2);
  d = t.Describe();
  EXPECT_EQ(Num(d, "lines.layer"), 1);
  drawn = Get(d, "lines.heads_drawn").numbers;
  ASSERT_EQ(drawn.size(), 3u);
  EXPECT_EQ(drawn[0], count(3));
  EXPECT_EQ(drawn[1], -1) << "unticked";
  EXPECT_EQ(drawn[2], count(5));
  EXPECT_GT(count(3), 0);
  t.Run("save-svg");  // the SVG draws what the view shows: heads 0 and 2 of layer 1, each in its colour
  std::string name, mime;
  std::vector<unsigned char> bytes;
  ASSERT_TRUE(t.app.PopDownload(&name, &mime, &bytes));
  const std::string svg(bytes.begin(), bytes.end());
  auto occurrences = [&](const std::string& needle) {
    int n = 0;
    for (size_t at = svg.find(needle); at != std::string::npos; at = svg.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(occurrences("data-head=\"0\""), count(3));
  EXPECT_EQ(occurrences("data-head=\"1\""), 0);
  EXPECT_EQ(occurrences("data-head=\"2\""), count(5));
  EXPECT_EQ(occurrences("<line "), count(3) + count(5));
  uint8_t rgb[3];
  attnviz::CategoryColour(2, rgb);
  char colour[24];
  std::snprintf(colour, sizeof colour, "stroke=\"#%02x%02x%02x\"", rgb[0], rgb[1], rgb[2]);
  EXPECT_EQ(occurrences(colour), count(5)) << colour;
  EXPECT_NE(svg.find("layer 1, all heads"), std::string::npos);
  EXPECT_FALSE(t.app.Command("lines-heads 3").ok) << "no head 3";
  t.Run("lines-heads off");
  t.Frames(1);
  EXPECT_FALSE(Get(t.Describe(), "lines.all_heads").boolean);
  t.Run("example seed002");
  EXPECT_FALSE(t.app.Command("lines-heads all").ok) << "one head: nothing to overlay";
}

// Lines with the queries on the left, as BertViz draws its head view: the columns, hovering, the
// captions' sides and the SVG follow; the default keeps the source sentence on the left.
TEST(AppViews, LinesCanPutTheQueriesOnTheLeftAsBertViz) {
  HeadlessApp t;
  t.Run("example translation");
  t.Run("view lines");
  t.Run("step 1000");
  t.Frames(2);
  JsonValue d = t.Describe();
  std::vector<double> rect = Get(d, "lines.rect").numbers;
  ASSERT_EQ(rect.size(), 4u);
  EXPECT_FALSE(Get(d, "lines.queries_left").boolean);
  EXPECT_LT(rect[0], rect[2]) << "source (key) dots left of the target (query) dots by default";
  t.Run("lines-queries left");
  t.Frames(2);
  d = t.Describe();
  rect = Get(d, "lines.rect").numbers;
  const std::vector<double> ty = Get(d, "lines.token_y").numbers;
  ASSERT_EQ(ty.size(), 4u);
  EXPECT_TRUE(Get(d, "lines.queries_left").boolean);
  EXPECT_GT(rect[0], rect[2]) << "the target (query) dots now on the left";
  ImGui::GetIO().MousePos = ImVec2((float)rect[2] - 12.0f, (float)ty[2]);  // over the first target's label
  t.Frames(2);
  d = t.Describe();
  EXPECT_EQ(Num(d, "lines.hovered_target"), 0);
  EXPECT_EQ(Num(d, "lines.hovered_source"), -1);
  ImGui::GetIO().MousePos = ImVec2((float)rect[0] + 12.0f, (float)ty[0]);  // over the first source's label
  t.Frames(2);
  EXPECT_EQ(Num(t.Describe(), "lines.hovered_source"), 0);
  ImGui::GetIO().MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  t.Frames(1);
  t.Run("save-svg");
  std::string name, mime;
  std::vector<unsigned char> bytes;
  ASSERT_TRUE(t.app.PopDownload(&name, &mime, &bytes));
  const std::string svg(bytes.begin(), bytes.end());
  EXPECT_NE(svg.find("<g class=\"target\" text-anchor=\"end\">"), std::string::npos) << "targets down the left";
  EXPECT_NE(svg.find("<g class=\"source\">"), std::string::npos) << "sources down the right";
  const size_t line = svg.find("<line x1=\"");
  ASSERT_NE(line, std::string::npos);
  float x1 = 0, y1 = 0, x2 = 0;
  ASSERT_EQ(std::sscanf(svg.c_str() + line, "<line x1=\"%f\" y1=\"%f\" x2=\"%f\"", &x1, &y1, &x2), 3);
  EXPECT_GT(x1, x2) << "a line runs from its source on the right to its target on the left";
  EXPECT_FALSE(t.app.Command("lines-queries up").ok);
  t.Run("lines-queries right");
  t.Frames(1);
  rect = Get(t.Describe(), "lines.rect").numbers;
  EXPECT_LT(rect[0], rect[2]);
}

// Frames until the described value at `path` passes `ok`, for up to `seconds` of wall time.
template <class Ok>
JsonValue FramesUntil(HeadlessApp* t, const char* path, Ok ok, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    t->Frames(1);
    JsonValue d = t->Describe();
    if (ok(Get(d, path)) || std::chrono::steady_clock::now() > end) return d;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST(AppViews, TrainRunsOnAThreadAndDrawsCurvesAndTheProbe) {
  attnviz::AppConfig cfg;
  cfg.train_runner = attnviz::MakeThreadRunner;  // as the desktop app does
  HeadlessApp t(cfg);
  t.Run("train start");
  t.Run("view train");
  JsonValue d = FramesUntil(
      &t, "train.batches", [](const JsonValue& v) { return v.number >= 20; }, 60);
  EXPECT_EQ(Get(d, "train.where").string, "thread");
  EXPECT_TRUE(Get(d, "train.running").boolean);
  EXPECT_GE(Num(d, "train.batches"), 20);
  EXPECT_TRUE(std::isfinite(Num(d, "train.loss")));
  EXPECT_EQ(Num(d, "train.curves_drawn"), 3);
  const JsonValue* probe = Heatmap(d, "probe");
  ASSERT_NE(probe, nullptr) << "the probe's epoch-0 alignment is drawn from the start";
  EXPECT_GT(Num(*probe, "rows"), 0);
  EXPECT_EQ(Num(*probe, "vmax"), 1.0) << "the probe is drawn on [0, 1]";
  EXPECT_EQ(Num(d, "vmax"), 1.0) << "and the colour bar says so";
  const std::vector<double> bar = Get(*probe, "colorbar").numbers, rect = Get(*probe, "rect").numbers;
  ASSERT_EQ(bar.size(), 4u) << "the probe has its colour bar, as every heatmap view";
  EXPECT_GT(bar[0], rect[2]) << "right of the matrix";
  // Frames do not wait for training: 30 frames take far less than 30 training steps of 20 ms.
  const auto f0 = std::chrono::steady_clock::now();
  t.Frames(30);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - f0).count(), 0.6);
  // Pause stops the thread within a step: the batch count then stays put.
  t.Run("train pause");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  t.Frames(1);
  const double paused = Num(t.Describe(), "train.batches");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  t.Frames(1);
  EXPECT_EQ(Num(t.Describe(), "train.batches"), paused);
  t.Run("train resume");
  d = FramesUntil(
      &t, "train.batches", [&](const JsonValue& v) { return v.number > paused; }, 30);
  EXPECT_GT(Num(d, "train.batches"), paused);
  t.Run("train start");  // a restart joins the old thread and begins again
  d = FramesUntil(
      &t, "train.batches", [](const JsonValue& v) { return v.number > 0; }, 30);
  EXPECT_GT(Num(d, "train.batches"), 0);
  EXPECT_FALSE(t.app.Command("train sideways").ok);
  EXPECT_FALSE(t.app.Command("train where moon").ok);
}

TEST(AppViews, TrainInFramesWhenAsked) {
  HeadlessApp t;
  t.Run("train where frames");
  t.Run("train start");
  t.Run("view train");
  t.Frames(40);
  const JsonValue d = t.Describe();
  EXPECT_EQ(Get(d, "train.where").string, "frames");
  EXPECT_GT(Num(d, "train.batches"), 0);
}

TEST(AppViews, EachAppHasItsOwnViewState) {
  {
    HeadlessApp a;
    a.Run("example multihead");
    a.Run("grid-sort entropy");
    a.Frames(1);
    EXPECT_EQ(Get(a.Describe(), "grid.sort").string, "entropy");
  }
  HeadlessApp b;
  b.Frames(1);
  EXPECT_EQ(Get(b.Describe(), "grid.sort").string, "layer") << "a new app starts from its own fresh state";
}

TEST(AppCommands, BadCommandsAreErrorsThatReachTheCaller) {
  HeadlessApp t;
  for (const char* bad :
       {"example does-not-exist", "view nowhere", "step x", "map 99", "", "colormap plaid", "scale sideways",
        "numbers maybe", "range 1 0", "steps-row 99", "compare-maps 0 9", "frobnicate"}) {
    const attnviz::Status st = t.app.Command(bad);
    EXPECT_FALSE(st.ok) << "'" << bad << "' must fail";
    EXPECT_FALSE(st.message.empty()) << bad;
  }
  EXPECT_NE(t.app.Command("example nope").message.find("seed002"), std::string::npos) << "lists the examples";
  const unsigned char junk[] = {1, 2, 3, 4};
  t.app.OpenFileBytes("junk.bin", junk, sizeof(junk));
  t.Frames(1);
  const JsonValue d = t.Describe();
  EXPECT_TRUE(Get(d, "message_is_error").boolean);
  EXPECT_NE(Get(d, "message").string.find("junk.bin"), std::string::npos);
}

TEST(AppFiles, OpensAttentionFilesAndRejectsBadOnes) {
  HeadlessApp t;
  const std::string good =
      R"({"format":"attnviz","version":1,"source_tokens":["a","b","c"],"target_tokens":["x","y"],)"
      R"("layers":[{"name":"L0","heads":[{"name":"h0","weights":[[0.2,0.3,0.5],[1,0,0]]},)"
      R"({"name":"h1","weights":[[0.5,0.5,0],[0,0,1]]}]},{"name":"L1","heads":[{"name":"h0","weights":)"
      R"([[0.1,0.8,0.1],[0.3,0.3,0.4]]},{"name":"h1","weights":[[0.6,0.2,0.2],[0.2,0.2,0.6]]}]}]})";
  t.app.OpenFileBytes("model.json", reinterpret_cast<const unsigned char*>(good.data()), good.size());
  t.Frames(2);
  JsonValue d = t.Describe();
  EXPECT_EQ(Get(d, "example").string, "file:model.json");
  EXPECT_EQ(Get(d, "view").string, "grid") << "a multi-head file opens in the grid";
  EXPECT_EQ(Num(d, "grid.drawn"), 4);
  EXPECT_TRUE(t.app.Command("map 3").ok);
  EXPECT_FALSE(t.app.Command("map 4").ok);  // 2 layers x 2 heads
  const std::string bad[] = {
      "{", "{\"format\":\"attnviz\",\"version\":1,\"layers\":[]}",
      R"({"format":"attnviz","version":1,"source_tokens":["a"],"target_tokens":["x"],"layers":[{"name":"L","heads":[{"name":"h","weights":[[0.5,0.5]]}]}]})",
      std::string("PK\x03\x04garbage", 11)};
  for (const std::string& b : bad) {
    t.app.OpenFileBytes("bad.json", reinterpret_cast<const unsigned char*>(b.data()), b.size());
    t.Frames(1);
    d = t.Describe();
    EXPECT_EQ(Get(d, "example").string, "file:model.json") << "a bad file must not replace the open one";
    EXPECT_TRUE(Get(d, "message_is_error").boolean);
  }
  t.Run("save-svg");
  t.Run("save-json");
  std::string name, mime;
  std::vector<unsigned char> bytes;
  ASSERT_TRUE(t.app.PopDownload(&name, &mime, &bytes));
  EXPECT_EQ(mime, "image/svg+xml");
  EXPECT_NE(std::string(bytes.begin(), bytes.end()).find("<svg"), std::string::npos);
  ASSERT_TRUE(t.app.PopDownload(&name, &mime, &bytes));
  EXPECT_EQ(mime, "application/json");
  JsonValue saved;
  EXPECT_TRUE(attnviz::ParseJson(std::string(bytes.begin(), bytes.end()), &saved).ok);
  EXPECT_FALSE(t.app.PopDownload(&name, &mime, &bytes));
}

TEST(AppFiles, AFileWithSeveralSetsOpensOnTheCrossSetPlayingAndSwitchesSets) {
  HeadlessApp t;
  const std::string v2 = R"({"format":"attnviz","version":2,"sets":[
     {"name":"encoder","kind":"self","tokens":["the","cat","</s>"],
      "weights":[[[[0.8,0.1,0.1],[0.2,0.7,0.1],[0.3,0.3,0.4]]]]},
     {"name":"decoder","kind":"causal","tokens":["le","chat"],"weights":[[[1,0],[0.5,0.5]]]},
     {"name":"cross","kind":"cross","query_tokens":["le","chat"],"key_tokens":["the","cat","</s>"],
      "weights":[[[[0.9,0.05,0.05],[0.1,0.85,0.05]]]]}]})";
  t.app.OpenFileBytes("marian.json", reinterpret_cast<const unsigned char*>(v2.data()), v2.size());
  t.Frames(1);
  JsonValue d = t.Describe();
  EXPECT_EQ(Get(d, "example").string, "file:marian.json#cross");
  EXPECT_EQ(Get(d, "kind").string, "cross");
  EXPECT_EQ(Get(d, "view").string, "heatmap");
  EXPECT_TRUE(Get(d, "timeline.playing").boolean) << "the cross set plays as the translation figure";
  EXPECT_LE(Num(d, "timeline.step"), 1);
  ASSERT_EQ(Get(d, "sets").ArraySize(), 3u);
  EXPECT_EQ(Get(d, "sets").items[0].string, "encoder");
  t.Frames(120);  // 2 s at 2 rows per second
  d = t.Describe();
  const JsonValue* h = Heatmap(d, "main");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(Num(*h, "rows_shown"), 2) << "both decoder rows have filled in";
  EXPECT_EQ(Get(d, "target_tokens").items[1].string, "chat");
  t.Run("set encoder");
  t.Frames(1);
  d = t.Describe();
  EXPECT_EQ(Get(d, "example").string, "file:marian.json#encoder");
  EXPECT_EQ(Get(d, "kind").string, "self");
  EXPECT_EQ(Get(d, "source_tokens").ArraySize(), 3u);
  t.Run("set 1");
  EXPECT_EQ(Get(t.Describe(), "set").string, "decoder");
  EXPECT_FALSE(t.app.Command("set nowhere").ok);
  // Exports are named after the file and the set: marian-decoder.svg (was file_marian.json#decoder.svg).
  ASSERT_TRUE(t.app.Command("save-svg").ok);
  std::string name, mime;
  std::vector<unsigned char> bytes;
  ASSERT_TRUE(t.app.PopDownload(&name, &mime, &bytes));
  EXPECT_EQ(name, "marian-decoder.svg");
}

// Export file names: the opened file's name without its extension, then the set; what file systems
// refuse (or a shell or URL would misread) becomes '_'; long names end on a whole UTF-8 character.
// Each head's export has a name of its own that says which head it is: "heads-layer1-head2.svg"
// (a file without sets gave "heads.svg" for every head: the "-map5" it appended looked like an
// extension and was cut).
TEST(AppFiles, ExportsOfOneHeadAreNamedAfterItsLayerAndHead) {
  HeadlessApp t;
  const std::string head = "[[0.5,0.5],[0.5,0.5]]", layer = "{\"heads\":[" + head + "," + head + "," + head + "]}";
  const std::string f = R"({"tokens":["a","b"],"layers":[)" + layer + "," + layer + "]}";
  t.app.OpenFileBytes("heads.json", reinterpret_cast<const unsigned char*>(f.data()), f.size());
  t.Run("view heatmap");
  t.Run("layer-head 1 2");
  t.Frames(1);
  std::string name, mime;
  std::vector<unsigned char> bytes;
  for (const char* c : {"save-svg", "save-csv", "save-npy"}) {
    ASSERT_TRUE(t.app.Command(c).ok) << c;
    ASSERT_TRUE(t.app.PopDownload(&name, &mime, &bytes)) << c;
    EXPECT_EQ(name.substr(0, name.rfind('.')), "heads-layer1-head2") << c;
  }
  const std::string one = R"({"tokens":["a","b"],"weights":[[0.5,0.5],[0.5,0.5]]})";
  t.app.OpenFileBytes("one.json", reinterpret_cast<const unsigned char*>(one.data()), one.size());
  t.Frames(1);
  ASSERT_TRUE(t.app.Command("save-svg").ok);
  ASSERT_TRUE(t.app.PopDownload(&name, &mime, &bytes));
  EXPECT_EQ(name, "one.svg") << "a single map needs no layer and head";
}

// A figure's file name says what the view shows: the head in Heatmap and Lines, the layer when Lines
// overlays all its heads, nothing in the grid (every head). Lines' figures of two heads shared a name.
TEST(AppFiles, FiguresAreNamedAfterWhatTheViewShows) {
  attnviz::AppConfig cfg;
  cfg.page_exports = true;  // the page encodes the GIF; the app names it in the "export" event
  HeadlessApp t(cfg);
  const std::string head = "[[0.5,0.5],[0.5,0.5]]", layer = "{\"heads\":[" + head + "," + head + "," + head + "]}";
  const std::string f = R"({"tokens":["a","b"],"layers":[)" + layer + "," + layer + "]}";
  t.app.OpenFileBytes("heads.json", reinterpret_cast<const unsigned char*>(f.data()), f.size());
  t.Run("layer-head 1 2");
  auto gif_name = [&](const char* view, const char* then) {
    t.Run(std::string("view ") + view);
    if (*then) t.Run(then);
    t.Frames(2);
    std::string type, json;
    while (t.app.PopEvent(&type, &json)) {
    }
    t.Run("save-gif 100");
    while (t.app.PopEvent(&type, &json))
      if (type == "export") {
        JsonValue v;
        const JsonValue* name = attnviz::ParseJson(json, &v).ok ? v.Find("name") : nullptr;
        return name ? name->string : std::string("(no name)");
      }
    return std::string("(no export event)");
  };
  EXPECT_EQ(gif_name("heatmap", ""), "attnviz-heads-layer1-head2.gif");
  EXPECT_EQ(gif_name("lines", ""), "attnviz-heads-layer1-head2.gif");
  EXPECT_EQ(gif_name("lines", "lines-heads all"), "attnviz-heads-layer1.gif");
  EXPECT_EQ(gif_name("grid", ""), "attnviz-heads.gif");
  // The lines' SVG likewise (it was "heads-lines.svg" for every head and layer).
  std::string name, mime;
  std::vector<unsigned char> bytes;
  t.Run("view lines");
  t.Run("lines-heads off");
  t.Frames(2);
  ASSERT_TRUE(t.app.Command("save-svg").ok);
  ASSERT_TRUE(t.app.PopDownload(&name, &mime, &bytes));
  EXPECT_EQ(name, "heads-layer1-head2-lines.svg");
  t.Run("lines-heads all");
  t.Frames(2);
  ASSERT_TRUE(t.app.Command("save-svg").ok);
  ASSERT_TRUE(t.app.PopDownload(&name, &mime, &bytes));
  EXPECT_EQ(name, "heads-layer1-lines.svg");
}

TEST(AppFiles, ExportNamesAreTheFileAndTheSetSafeOnEveryFileSystem) {
  EXPECT_EQ(attnviz::ExportStem("file:attention.npz#decoder.layers.self_attn"), "attention-decoder.layers.self_attn");
  EXPECT_EQ(attnviz::ExportStem("file:attention.npz"), "attention");
  EXPECT_EQ(attnviz::ExportStem("seed004"), "seed004");
  EXPECT_EQ(attnviz::ExportStem("file:llama 7b.safetensors#layer:3"), "llama_7b-layer_3");
  EXPECT_EQ(attnviz::ExportStem("file:archive.tar.gz"), "archive.tar");
  EXPECT_EQ(attnviz::ExportStem("file:no-extension#a/b\\c"), "no-extension-a_b_c");
  EXPECT_EQ(attnviz::ExportStem("file:.npz"), ".npz") << "a name that is only an extension stays";
  EXPECT_EQ(attnviz::ExportStem("file:a?b*c<d>e|f\"g\x01.json"), "a_b_c_d_e_f_g_");
  EXPECT_EQ(attnviz::ExportStem("file:\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e.npy"),
            "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e")
      << "names in any script are kept";
  EXPECT_EQ(attnviz::ExportStem("file:"), "attention");
  std::string long_name = "file:";
  for (int i = 0; i < 100; ++i) long_name += "\xc3\xa9";  // 200 bytes of e-acute
  const std::string stem = attnviz::ExportStem(long_name + ".json");
  EXPECT_EQ(stem.size(), 120u);
  EXPECT_EQ(stem.substr(118), "\xc3\xa9") << "cut between characters";
  const std::string odd =
      attnviz::ExportStem(long_name.substr(0, 6) + long_name.substr(5) + ".json");  // 201 bytes: a|é|é...
  EXPECT_EQ(odd.size(), 119u) << "the 120th byte would split an e-acute";
}

TEST(AppFiles, LayersWithDifferentHeadCountsAreNotPadded) {
  HeadlessApp t;
  // 1 layer x 64 heads, then 63 layers x 1 head: 127 maps (padding would make 64 x 64 = 4096).
  std::string f = R"({"tokens":["a","b"],"layers":[{"heads":[)";
  for (int h = 0; h < 64; ++h) f += std::string(h ? "," : "") + "[[0.5,0.5],[0.25,0.75]]";
  f += "]}";
  for (int l = 1; l < 64; ++l) f += R"(,{"heads":[[[1,0],[0,1]]]})";
  f += "]}";
  t.app.OpenFileBytes("ragged.json", reinterpret_cast<const unsigned char*>(f.data()), f.size());
  t.Frames(1);
  const JsonValue d = t.Describe();
  EXPECT_EQ(Get(d, "example").string, "file:ragged.json");
  EXPECT_EQ(Get(d, "grid.order").ArraySize(), 127u);
  EXPECT_TRUE(t.app.Command("map 126").ok);
  EXPECT_FALSE(t.app.Command("map 127").ok);
}

TEST(AppFiles, BertvizDataOpensAsItIs) {
  HeadlessApp t;
  const std::string params = R"({"attention":[{"name":null,"attn":[[[[0.6,0.4],[0.3,0.7]],[[1,0],[0,1]]]],
      "left_text":["[CLS]","hi"],"right_text":["[CLS]","hi"]}],"default_filter":"0","root_div_id":"bertviz-x",
      "layer":null,"heads":null,"include_layers":[0]})";
  t.app.OpenFileBytes("bertviz.json", reinterpret_cast<const unsigned char*>(params.data()), params.size());
  t.Frames(2);
  const JsonValue d = t.Describe();
  EXPECT_EQ(Get(d, "example").string, "file:bertviz.json");
  EXPECT_EQ(Get(d, "target_tokens").items[0].string, "[CLS]");
  EXPECT_EQ(Num(d, "grid.drawn"), 2) << "one layer, two heads";
}

TEST(AppViews, TheColourRangeFitsTheData) {
  HeadlessApp t;
  // 128 x 128 weights spread thin, as in long sequences: 0.5 on the diagonal, the rest ~0.004.
  std::string f = R"({"tokens":[)";
  for (int i = 0; i < 128; ++i) f += std::string(i ? "," : "") + "\"t" + std::to_string(i) + "\"";
  f += R"(],"weights":[)";
  for (int r = 0; r < 128; ++r) {
    f += std::string(r ? "," : "") + "[";
    for (int c = 0; c < 128; ++c) f += std::string(c ? "," : "") + (r == c ? "0.5" : "0.003937");
    f += "]";
  }
  f += "]}";
  t.app.OpenFileBytes("long.json", reinterpret_cast<const unsigned char*>(f.data()), f.size());
  t.Run("view heatmap");
  t.Frames(2);
  JsonValue d = t.Describe();
  EXPECT_EQ(Get(d, "range").string, "auto") << "auto is the default";
  EXPECT_NEAR(Num(d, "vmax"), 0.5, 1e-6) << "auto: 0 to the largest weight";
  const JsonValue* h = Heatmap(d, "main");
  ASSERT_NE(h, nullptr);
  EXPECT_NEAR(Num(*h, "vmax"), 0.5, 1e-6) << "the heatmap was drawn with the resolved range";
  t.Run("range p99");
  t.Frames(1);
  d = t.Describe();
  EXPECT_NEAR(Num(d, "vmax"), 0.003937, 1e-6) << "99.2% of the weights are off the diagonal";
  EXPECT_LT(Num(d, "low_contrast"), 0.5);
  t.Run("range p99.9");
  t.Frames(1);
  EXPECT_NEAR(Num(t.Describe(), "vmax"), 0.5, 1e-6) << "the diagonal's 0.8% are over the 99.9th percentile's weight";
  t.Run("range fixed");
  t.Run("range 0 1");
  t.Frames(1);
  d = t.Describe();
  EXPECT_EQ(Get(d, "range").string, "fixed");
  EXPECT_NEAR(Num(d, "vmax"), 1.0, 1e-6);
  EXPECT_GT(Num(d, "low_contrast"), 0.9) << "on [0, 1] the off-diagonal weights all sit in the bottom 5%";
  EXPECT_FALSE(t.app.Command("range sideways").ok);
}

// A head bigger than 256 on a side shows its max-pooled overview in the grid (256 KB to upload
// instead of a whole 300 x 600 map; a one-cell peak still shows), coloured with the head's own range;
// a small head shows itself.
TEST(AppViews, GridThumbnailsOfBigHeadsAreTheirOverviews) {
  HeadlessApp t;
  ASSERT_TRUE(OpenNpy(t, "big.npy", {2, 300, 600}, [](size_t k) {
                const size_t h = k / (300 * 600);
                return k == (size_t)123 * 600 + 457 ? 0.9f : 0.001f * (float)(h + 1);
              }).ok);
  t.Run("view grid");
  t.Frames(1);
  JsonValue d = t.Describe();
  // The frame that pooled them says so, and what it cost (describe()'s grid: pooled, pool_ms), within
  // the grid's slice of the frame (10-30 ms, 200x the frame interval).
  EXPECT_GE(Num(d, "grid.pooled"), 1);
  EXPECT_GT(Num(d, "grid.pool_ms"), 0.0);
  EXPECT_GE(Num(d, "grid.slice_ms"), 10.0);
  EXPECT_LE(Num(d, "grid.slice_ms"), 30.0);
  t.Frames(3);
  d = t.Describe();
  EXPECT_EQ(Num(d, "grid.pooled"), 0) << "pooled once";
  EXPECT_EQ(Num(d, "grid.pool_ms"), 0.0);
  ASSERT_EQ(Num(d, "grid.drawn"), 2);
  for (int i = 0; i < 2; ++i) {
    const JsonValue* h = Heatmap(d, "thumb" + std::to_string(i));
    ASSERT_TRUE(h);
    EXPECT_EQ(Num(*h, "rows"), 256) << "thumb" << i;
    EXPECT_EQ(Num(*h, "cols"), 256) << "thumb" << i;
  }
  EXPECT_NEAR(Num(*Heatmap(d, "thumb0"), "vmax"), 0.9, 1e-6) << "the one-cell peak is the overview's maximum";
  EXPECT_NEAR(Num(*Heatmap(d, "thumb1"), "vmax"), 0.002, 1e-6);
  EXPECT_EQ(Num(d, "grid.stats_pending"), 0);
  EXPECT_NEAR(Num(Get(d, "grid.stats").items[0], "max_weight"), (0.9 + 299 * 0.001) / 300, 1e-6)
      << "statistics are the whole head's, not the overview's";
  t.Run("example multihead");  // small heads: themselves
  t.Frames(2);
  d = t.Describe();
  const JsonValue* small = Heatmap(d, "thumb0");
  ASSERT_TRUE(small);
  EXPECT_LT(Num(*small, "rows"), 256);
}

// A grid whose statistics take longer than a frame's share keeps asking for frames (an idle
// viewer draws none), and the page's idle time (App::Idle) finishes them without any frame.
TEST(AppViews, GridStatisticsKeepFramesComingAndFinishInIdleTime) {
  HeadlessApp t;
  ASSERT_TRUE(OpenNpy(t, "forty.npy", {40, 512, 512}, [](size_t i) { return 1.0f / 512 + (float)(i % 7) * 1e-5f; }).ok);
  t.Run("view grid");
  t.Frames(1);
  const double pending = Num(t.Describe(), "grid.stats_pending");
  ASSERT_GT(pending, 0) << "40 heads of 512 x 512 take more than one frame's slice (10 ms at 60 Hz)";
  EXPECT_TRUE(t.app.NeedsFrames()) << "the grid is still filling in";
  int calls = 0;
  while (Num(t.Describe(), "grid.stats_pending") > 0 && calls < 1000) {
    EXPECT_TRUE(t.app.Idle(20.0)) << "pending statistics are idle work";
    ++calls;
  }
  EXPECT_EQ(Num(t.Describe(), "grid.stats_pending"), 0) << calls << " idle calls";
  EXPECT_FALSE(t.app.Idle(20.0)) << "nothing left to do";
  // Thumbnails still to upload take frames of their own (a slow machine's uploads stop at the
  // frame's deadline); then the frames stop.
  int frames = 0;
  for (; frames < 200 && (frames == 0 || t.app.NeedsFrames()); ++frames) t.Frames(1);
  EXPECT_FALSE(t.app.NeedsFrames()) << "the grid is complete: an idle viewer draws no more frames (" << frames
                                    << " frames)";
  const JsonValue& stats = Get(t.Describe(), "grid.stats");
  ASSERT_EQ(stats.ArraySize(), 40u);
  for (const JsonValue& h : stats.items) EXPECT_TRUE(h.Find("ok") && h.Find("ok")->boolean);
}

TEST(AppViews, TheColourRangeOfABigMapComesFromASampleThatSeesEveryColumn) {
  HeadlessApp t;
  // 1024 x 1024 (over the 2^18 weights counted one by one): 0.5 in columns 1, 65, 129, ... (1.6 %
  // of the weights, which a sample of every 64th or 256th weight would never see), 0.001 elsewhere.
  ASSERT_TRUE(OpenNpy(t, "big.npy", {1024, 1024}, [](size_t k) { return k % 1024 % 64 == 1 ? 0.5f : 0.001f; }).ok);
  t.Run("view heatmap");
  t.Frames(2);
  EXPECT_NEAR(Num(t.Describe(), "vmax"), 0.5, 1e-6) << "auto: the largest weight";
  t.Run("range p99");
  t.Frames(1);
  JsonValue d = t.Describe();
  EXPECT_NEAR(Num(d, "vmax"), 0.5, 1e-6) << "1.6 % of the weights are 0.5: the 99th percentile is 0.5";
  t.Run("range fixed");
  t.Run("range 0 100");
  t.Frames(1);
  d = t.Describe();
  EXPECT_GT(Num(d, "low_contrast"), 0.99) << "every weight is in the bottom 5 % of [0, 100]";
}

TEST(AppFiles, SubwordMarkersShowAsASubtleDot) {
  HeadlessApp t;
  const std::string f = R"({"version":2,"tokenizer":{"space_marker":"\u2581"},
      "sets":[{"tokens":["\u2581the","cat","\u2581"],"weights":[[[1,0,0],[0,1,0],[0,0,1]]]}]})";
  t.app.OpenFileBytes("spm.json", reinterpret_cast<const unsigned char*>(f.data()), f.size());
  t.Frames(1);
  const JsonValue d = t.Describe();
  ASSERT_EQ(Get(d, "source_tokens").ArraySize(), 3u);
  EXPECT_EQ(Get(d, "source_tokens").items[0].string, "\xc2\xb7the") << "U+2581 is not in the UI font";
  EXPECT_EQ(Get(d, "source_tokens").items[1].string, "cat");
  EXPECT_EQ(Get(d, "source_tokens").items[2].string, "\xc2\xb7");
}

TEST(AppFiles, CsvAndNpyExportsHoldTheMapShown) {
  HeadlessApp t;
  t.Run("example seed004");
  t.Run("save-csv");
  t.Run("save-npy");
  t.Run("view heatmap");
  t.Frames(1);
  const JsonValue d = t.Describe();
  const JsonValue* h = Heatmap(d, "main");
  ASSERT_NE(h, nullptr);
  const std::vector<double>& w = Get(*h, "weights").numbers;
  const int cols = (int)Num(*h, "cols");
  std::string name, mime;
  std::vector<unsigned char> bytes;
  ASSERT_TRUE(t.app.PopDownload(&name, &mime, &bytes));
  EXPECT_EQ(mime, "text/csv");
  const std::string csv(bytes.begin(), bytes.end());
  EXPECT_EQ(csv.substr(0, csv.find('\r')).find("target\\source,"), 0u) << csv.substr(0, 80);
  // The second line: a token, then the first row's weights.
  const size_t line2 = csv.find('\n') + 1;
  const std::string row0 = csv.substr(line2, csv.find('\r', line2) - line2);
  size_t at = row0.find(',');
  for (int c = 0; c < cols; ++c) {
    EXPECT_NEAR(std::strtod(row0.c_str() + at + 1, nullptr), w[(size_t)c], 1e-7) << "column " << c;
    at = row0.find(',', at + 1);
  }
  ASSERT_TRUE(t.app.PopDownload(&name, &mime, &bytes));
  attnviz::NdArray a;
  ASSERT_TRUE(attnviz::ParseNpy(bytes.data(), bytes.size(), &a).ok);
  ASSERT_EQ(a.Numel(), (int64_t)w.size());
  for (size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(a.GetDouble((int64_t)i), w[i], 1e-7);
}

// Opens a JSON attention file in the heatmap view, runs a hide command and describes the frame after.
JsonValue OpenAndHide(HeadlessApp* t, const char* name, const std::string& json, const char* hide) {
  t->app.OpenFileBytes(name, reinterpret_cast<const unsigned char*>(json.data()), json.size());
  t->Run("view heatmap");
  t->Run(hide);
  t->Frames(1);
  return t->Describe();
}

TEST(AppFiles, HidingSpecialTokensAndRenormalising) {
  HeadlessApp t;
  const std::string f = R"({"tokens":["[CLS]","the","cat","[SEP]"],"layers":[{"heads":[
      [[0.4,0.2,0.2,0.2],[0.5,0.3,0.1,0.1],[0.5,0.1,0.3,0.1],[0.7,0.1,0.1,0.1]],
      [[0.1,0.3,0.3,0.3],[0.1,0.6,0.2,0.1],[0.1,0.2,0.6,0.1],[0.2,0.2,0.2,0.4]]]}]})";
  JsonValue d = OpenAndHide(&t, "bert.json", f, "hide special");
  ASSERT_EQ(Get(d, "source_tokens").ArraySize(), 2u);
  EXPECT_EQ(Get(d, "source_tokens").items[0].string, "the");
  EXPECT_TRUE(Get(d, "hidden.special").boolean);
  const JsonValue* h = Heatmap(d, "main");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(Num(*h, "rows"), 2);
  EXPECT_NEAR(Get(*h, "weights").numbers[0], 0.3, 1e-6) << "row 'the', column 'the' as in the file";
  t.Run("renormalize on");
  t.Frames(1);
  h = nullptr;
  d = t.Describe();
  h = Heatmap(d, "main");
  ASSERT_NE(h, nullptr);
  EXPECT_NEAR(Get(*h, "weights").numbers[0] + Get(*h, "weights").numbers[1], 1.0, 1e-6) << "rows sum to 1 again";
  EXPECT_NEAR(Get(*h, "weights").numbers[0], 0.75, 1e-6);
  t.Run("view grid");
  t.Frames(1);
  EXPECT_EQ(Get(t.Describe(), "grid.order").ArraySize(), 2u) << "both heads, filtered";
  t.Run("hide the");
  EXPECT_FALSE(t.app.Command("hide cat").ok) << "hiding every key is refused";
  t.Frames(1);
  EXPECT_EQ(Get(t.Describe(), "hidden.tokens").ArraySize(), 1u) << "and the refused token is not kept";
  EXPECT_EQ(Get(t.Describe(), "source_tokens").ArraySize(), 1u);
  t.Run("hide none");
  t.Frames(1);
  EXPECT_EQ(Get(t.Describe(), "source_tokens").ArraySize(), 4u);
  t.Run("example seed002");
  EXPECT_FALSE(t.app.Command("hide special").ok) << "examples with q, k, v keep every token";
}

// The labels show "the" for the SentencePiece token "\u2581the" (the viewer's "\u00b7the"): `hide the` hides it, a
// token that is nowhere in the file is refused with its name (it used to be kept, hiding nothing), and `show` takes
// either spelling.
TEST(AppFiles, HidingATokenByItsLabel) {
  HeadlessApp t;
  const std::string f = R"({"tokens":["\u2581the","\u2581cat","\u2581sat","</s>"],"weights":[
      [0.4,0.2,0.2,0.2],[0.5,0.3,0.1,0.1],[0.5,0.1,0.3,0.1],[0.7,0.1,0.1,0.1]]})";
  JsonValue d = OpenAndHide(&t, "sp.json", f, "hide the");
  ASSERT_EQ(Get(d, "source_tokens").ArraySize(), 3u);
  EXPECT_EQ(Get(d, "source_tokens").items[0].string, "\u00b7cat") << "the viewer's word marker";
  const attnviz::Status st = t.app.Command("hide dog");
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("no token 'dog'"), std::string::npos) << st.message;
  t.Frames(1);
  EXPECT_EQ(Get(t.Describe(), "hidden.tokens").ArraySize(), 1u) << "the refused token is not kept";
  t.Run("show the");
  t.Frames(1);
  EXPECT_EQ(Get(t.Describe(), "source_tokens").ArraySize(), 4u);
  t.Run("hide \u00b7sat");  // the exact token, as a right click adds it
  t.Run("show sat");
  t.Frames(1);
  EXPECT_EQ(Get(t.Describe(), "source_tokens").ArraySize(), 4u) << "show takes the label for the exact token";
}

TEST(AppFiles, ReopeningFilesKeepsTheExampleListBounded) {
  HeadlessApp t;
  const std::string f = R"({"tokens":["a","b"],"weights":[[0.5,0.5],[0.25,0.75]]})";
  for (int i = 0; i < 40; ++i) {
    const std::string name = "f" + std::to_string(i % 12) + ".json";  // 12 names, each opened 3 or 4 times
    t.app.OpenFileBytes(name, reinterpret_cast<const unsigned char*>(f.data()), f.size());
    t.Frames(1);
    ASSERT_EQ(Get(t.Describe(), "example").string, "file:" + name);
  }
  // The built-in examples plus at most 8 opened files.
  int files = 0;
  for (int i = 0; i < 12; ++i) files += t.app.Command("example file:f" + std::to_string(i) + ".json").ok ? 1 : 0;
  EXPECT_EQ(files, 8);
  EXPECT_TRUE(t.app.Command("example file:f3.json").ok) << "the 8 most recent stay (f8..f11, f0..f3)";
  EXPECT_FALSE(t.app.Command("example file:f4.json").ok);
}

TEST(AppFiles, TextFromFilesIsShownSafely) {
  HeadlessApp t;
  const std::string f =
      "{\"tokens\":[\"ok\",\"\\u001b]0;pwned\\u0007\",\"\\u202eexe.txt\"],"
      "\"weights\":[[1,0,0],[0,1,0],[0,0,1]]}";
  t.app.OpenFileBytes("evil##name.json", reinterpret_cast<const unsigned char*>(f.data()), f.size());
  t.Frames(1);
  const JsonValue d = t.Describe();
  ASSERT_EQ(Get(d, "source_tokens").ArraySize(), 3u);
  EXPECT_EQ(Get(d, "source_tokens").items[1].string, "\\x1b]0;pwned\\x07") << "escapes shown, not run";
  EXPECT_EQ(Get(d, "source_tokens").items[2].string, "\\u202eexe.txt") << "no right-to-left override";
}

TEST(AppViews, TranslateFiguresPlayWithTheirGoldAlignment) {
  HeadlessApp t;
  t.Run("figure a");
  t.Frames(400);  // the whole sentence, word by word
  JsonValue d = t.Describe();
  EXPECT_EQ(Get(d, "translate.figure").string, "a");
  EXPECT_TRUE(Get(d, "translate.figure_exact").boolean) << Get(d, "translate.output").string;
  EXPECT_NE(Get(d, "translate.output")
                .string.find("zone \xc3\xa9"
                             "conomique europ\xc3\xa9"
                             "enne a \xc3\xa9t\xc3\xa9 sign\xc3\xa9"),
            std::string::npos);
  const JsonValue* h = Heatmap(d, "translation");
  const JsonValue* g = Heatmap(d, "gold");
  ASSERT_NE(h, nullptr);
  ASSERT_NE(g, nullptr) << "the gold alignment is drawn beside the model's";
  EXPECT_EQ(Num(*h, "cols"), Num(*g, "cols"));
  t.Run("figure es1");
  t.Frames(2);
  d = t.Describe();
  EXPECT_NE(Get(d, "translate.output").string.find("cold"), std::string::npos) << "an es-en model translates es1";
  t.Run("translate the european economic area");
  t.Frames(1);
  EXPECT_EQ(Get(t.Describe(), "translate.figure").string, "") << "typing another sentence leaves the figure";
  EXPECT_FALSE(t.app.Command("figure z").ok);
}

TEST(AppLabels, ModesMarkersAndBoxes) {
  HeadlessApp t;
  const std::string f = R"({"source_tokens":["\u2581the","##ing","\u6771\u4eac","x"],"target_tokens":["a","b"],
      "weights":[[0.25,0.25,0.25,0.25],[0.1,0.2,0.3,0.4]]})";
  t.app.OpenFileBytes("labels.json", reinterpret_cast<const unsigned char*>(f.data()), f.size());
  t.Run("view heatmap");
  t.Frames(2);
  JsonValue d = t.Describe();
  EXPECT_EQ(Get(d, "labels").string, "auto");
  EXPECT_TRUE(Get(d, "markers").boolean);
  EXPECT_EQ(Get(d, "label_backend").string, "none") << "headless: no rasteriser";
  EXPECT_EQ(Get(d, "source_tokens").items[0].string, "\xc2\xb7the") << "U+2581 is a word start without a tokenizer";
  const JsonValue* h = Heatmap(d, "main");
  ASSERT_NE(h, nullptr);
  const JsonValue& boxes = Get(*h, "labels.boxes");
  EXPECT_EQ(boxes.ArraySize(), 6u) << "2 row labels and 4 column labels";
  auto width = [&](const JsonValue& hm, int axis, int index) {
    for (const JsonValue& b : Get(hm, "labels.boxes").items)
      if (b.numbers.size() == 7 && b.numbers[0] == axis && b.numbers[1] == index)
        return b.numbers[6] > 0.5 ? b.numbers[5] - b.numbers[3] : b.numbers[4] - b.numbers[2];
    return -1.0;
  };
  const double with_mark = width(*h, 1, 0);
  EXPECT_GT(with_mark, 0);
  t.Run("markers off");
  t.Frames(1);
  d = t.Describe();
  EXPECT_FALSE(Get(d, "markers").boolean);
  EXPECT_LT(width(*Heatmap(d, "main"), 1, 0), with_mark - 1) << "the dim '\xc2\xb7' is left out";
  t.Run("labels none");
  t.Frames(1);
  d = t.Describe();
  EXPECT_EQ(Get(d, "labels").string, "none");
  EXPECT_EQ(Get(*Heatmap(d, "main"), "labels.boxes").ArraySize(), 0u);
  EXPECT_FALSE(t.app.Command("labels some").ok);
  EXPECT_FALSE(t.app.Command("markers maybe").ok);
}

// A column label is laid out along x and then turned upright; it used to be culled against the clip
// rect before the turn, so a long label in one of the last columns lost its end (in every PNG export,
// whose labels are drawn this way while the rasteriser catches up at the new scale).
TEST(AppLabels, ATurnedLabelKeepsEveryGlyphWhateverTheClipRectsWidth) {
  HeadlessApp t;
  t.Frames(1);
  const char* text = "internationalisation";
  auto glyph_quads = [&](float clip_right) {
    ImDrawList dl(ImGui::GetDrawListSharedData());
    dl._ResetForNewFrame();
    dl.PushTextureID(ImGui::GetIO().Fonts->TexID);
    dl.PushClipRect(ImVec2(0, 0), ImVec2(clip_right, 400));
    attnviz::AddTextVertical(&dl, ImVec2(20, 300), IM_COL32_WHITE, text);
    float top = 1e9f;
    for (const ImDrawVert& v : dl.VtxBuffer) top = std::min(top, v.pos.y);
    return std::make_pair(dl.VtxBuffer.Size / 4, top);
  };
  const auto wide = glyph_quads(2000), narrow = glyph_quads(40);
  EXPECT_EQ(wide.first, (int)std::strlen(text)) << "one quad per glyph";
  EXPECT_EQ(narrow.first, wide.first) << "a clip rect 20 px right of the label culled glyphs before the turn";
  EXPECT_LT(narrow.second, 300 - 100) << "the label reads upwards from its anchor";
}

TEST(AppViews, StepsShowTheQueryKeyProductPerDimension) {
  HeadlessApp t;
  t.Run("example seed002");
  t.Run("view steps");
  t.Frames(3);
  const JsonValue d = t.Describe();
  EXPECT_EQ(Get(d, "steps.qk.source").string, "inputs");
  const int dims = (int)Num(d, "steps.qk.dims");
  const std::vector<double>& sums = Get(d, "steps.qk.sums").numbers;
  const std::vector<double>& products = Get(d, "steps.qk.products").numbers;
  const std::vector<double>& scores = Get(d, "steps.shown_scores").numbers;
  ASSERT_EQ(sums.size(), 4u);
  ASSERT_EQ(products.size(), 4u * (size_t)dims);
  for (size_t j = 0; j < 4; ++j) {
    double acc = 0;
    for (int c = 0; c < dims; ++c) acc += products[j * (size_t)dims + (size_t)c];
    EXPECT_NEAR(acc, sums[j], 1e-3) << "the cells of key " << j << " sum to its Σ";
    EXPECT_NEAR(sums[j], scores[j], 1e-3) << "with the dot score, Σ q ∘ k is the table's score";
  }
}

TEST(AppViews, StepsUseAFilesOwnQueriesAndKeys) {
  HeadlessApp t;
  // q [2, 3], k [3, 3]; weights are the softmax of q.k / sqrt(3) (rounded).
  const std::string f = R"({"version":2,"sets":[{"name":"enc","query_tokens":["a","b"],"key_tokens":["x","y","z"],
      "layers":[{"heads":[{"name":"h0","weights":[[0.5,0.25,0.25],[0.2,0.3,0.5]],
                           "q":[[1,0,2],[0.5,-1,0]],"k":[[1,1,1],[0,2,-1],[3,0,0.5]]}]}]}]})";
  ASSERT_TRUE(t.app.OpenFile("qk.json", reinterpret_cast<const unsigned char*>(f.data()), f.size()).ok);
  t.Run("view steps");
  t.Frames(2);
  const JsonValue d = t.Describe();
  EXPECT_EQ(Get(d, "steps.qk.source").string, "file");
  EXPECT_EQ(Num(d, "steps.qk.dims"), 3);
  const double want[3] = {1 + 0 + 2, 0 + 0 - 2, 3 + 0 + 1};  // q_0 . k_j
  const std::vector<double>& sums = Get(d, "steps.qk.sums").numbers;
  const std::vector<double>& scores = Get(d, "steps.qk.scores").numbers;
  ASSERT_EQ(sums.size(), 3u);
  ASSERT_EQ(scores.size(), 3u);
  for (int j = 0; j < 3; ++j) {
    EXPECT_NEAR(sums[(size_t)j], want[j], 1e-6);
    EXPECT_NEAR(scores[(size_t)j], want[j] / std::sqrt(3.0), 1e-5);
  }
  // q and k must match the tokens: a k with the wrong row count is refused with the shapes.
  const std::string bad = R"({"version":2,"sets":[{"query_tokens":["a"],"key_tokens":["x","y"],
      "layers":[{"heads":[{"weights":[[0.5,0.5]],"q":[[1,2]],"k":[[1,2]]}]}]}]})";
  const attnviz::Status st = t.app.OpenFile("bad.json", reinterpret_cast<const unsigned char*>(bad.data()), bad.size());
  EXPECT_FALSE(st.ok);
  EXPECT_NE(st.message.find("expected [1, d] and [2, d]"), std::string::npos) << st.message;
}

// The heatmap's SVG is coloured on the scale the view shows (per row here), its bar marked so.
TEST(AppFiles, TheSvgFollowsTheViewsScale) {
  HeadlessApp t;
  t.Run("example translation");
  t.Run("view heatmap");
  auto svg = [&t](const char* scale) {
    t.Run(std::string("scale ") + scale);
    t.Frames(1);
    t.Run("save-svg");
    std::string name, mime;
    std::vector<unsigned char> bytes;
    EXPECT_TRUE(t.app.PopDownload(&name, &mime, &bytes));
    return std::string(bytes.begin(), bytes.end());
  };
  const std::string row = svg("row"), global = svg("global");
  EXPECT_NE(row.find(">row max</text>"), std::string::npos);
  EXPECT_EQ(global.find(">row max</text>"), std::string::npos);
  EXPECT_NE(row, global) << "each row's largest weight is at the top of the colormap";
}

TEST(AppFiles, TheLinesViewSavesItsOwnSvgAndPngNeedsAScreen) {
  HeadlessApp t;
  t.Run("example translation");
  t.Run("view lines");
  t.Frames(2);
  t.Run("save-svg");
  std::string name, mime;
  std::vector<unsigned char> bytes;
  ASSERT_TRUE(t.app.PopDownload(&name, &mime, &bytes));
  const std::string svg(bytes.begin(), bytes.end());
  EXPECT_NE(name.find("-lines.svg"), std::string::npos) << name;
  EXPECT_NE(svg.find("<line "), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  const attnviz::Status png = t.app.Command("save-png 2");
  EXPECT_FALSE(png.ok);
  EXPECT_NE(png.message.find("headless"), std::string::npos) << png.message;
  EXPECT_NE(t.app.Command("save-png 7").message.find("between 1 and 4"), std::string::npos);
  EXPECT_NE(t.app.Command("save-gif").message.find("attnviz-cli render"), std::string::npos)
      << "natively the animation comes from the CLI";
}
