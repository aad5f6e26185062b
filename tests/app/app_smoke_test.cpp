// Backend-less ImGui smoke test: the whole app (every view, every example, the animation)
// runs for hundreds of frames with no window and no GL, and must stay consistent.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "app/app.h"
#include "imgui.h"

namespace {

struct HeadlessImGui {
  HeadlessImGui() {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(1280, 800);
    io.DeltaTime = 1.0f / 60.0f;
  }
  ~HeadlessImGui() { ImGui::DestroyContext(); }
  void Frame(attnviz::App& app) {
    ImGuiIO& io = ImGui::GetIO();
    unsigned char* px;
    int w, h;
    io.Fonts->GetTexDataAsRGBA32(&px, &w, &h);  // builds the atlas (fonts may be rebuilt by the app)
    ImGui::NewFrame();
    app.Frame();
    ImGui::Render();
  }
};

attnviz::App* StartApp(HeadlessImGui&, const attnviz::AppConfig& cfg) {
  auto* app = new attnviz::App;
  std::string err;
  EXPECT_TRUE(app->Init(cfg, &err)) << err;
  return app;
}

}  // namespace

TEST(AppSmoke, EveryViewEveryExampleHundredsOfFrames) {
  HeadlessImGui ui;
  attnviz::AppConfig cfg;
  cfg.headless = true;
  attnviz::App* app = StartApp(ui, cfg);
  const char* views[] = {"heatmap", "lines", "grid", "steps", "compare"};
  const char* examples[] = {"seed002", "seed004", "seed000", "translation", "causal", "multihead"};
  int frames = 0;
  for (const char* ex : examples) {
    ASSERT_EQ(app->Command(std::string("example ") + ex), "") << ex;
    for (const char* v : views) {
      ASSERT_EQ(app->Command(std::string("view ") + v), "") << v;
      ASSERT_EQ(app->Command("play"), "");
      for (int i = 0; i < 12; ++i, ++frames) ui.Frame(*app);
      const std::string d = app->DescribeJson();
      EXPECT_NE(d.find(std::string("\"view\":\"") + v + "\""), std::string::npos) << d.substr(0, 200);
      EXPECT_NE(d.find(std::string("\"example\":\"") + ex + "\""), std::string::npos);
    }
  }
  std::printf("ran %d frames over %zu examples x %zu views\n", frames, std::size(examples), std::size(views));
  EXPECT_GE(frames, 300);
  app->Shutdown();
  delete app;
}

TEST(AppSmoke, DecodingAnimationShowsOneMoreRowPerStep) {
  HeadlessImGui ui;
  attnviz::AppConfig cfg;
  cfg.headless = true;
  cfg.example = "translation";
  attnviz::App* app = StartApp(ui, cfg);
  for (int k = 0; k <= 5; ++k) {
    ASSERT_EQ(app->Command("step " + std::to_string(k)), "");
    ui.Frame(*app);
    const std::string d = app->DescribeJson();
    EXPECT_NE(d.find("\"timeline\":{\"step\":" + std::to_string(k)), std::string::npos) << d.substr(0, 300);
  }
  delete app;
}

TEST(AppSmoke, BadCommandsAreErrorsNotCrashes) {
  HeadlessImGui ui;
  attnviz::AppConfig cfg;
  cfg.headless = true;
  attnviz::App* app = StartApp(ui, cfg);
  EXPECT_NE(app->Command("example does-not-exist"), "");
  EXPECT_NE(app->Command("view nowhere"), "");
  EXPECT_NE(app->Command("step x"), "");
  EXPECT_NE(app->Command("map 99"), "");
  EXPECT_NE(app->Command(""), "");
  const unsigned char junk[] = {1, 2, 3, 4};
  app->OpenFileBytes("junk.bin", junk, sizeof(junk));
  ui.Frame(*app);
  delete app;
}

TEST(AppSmoke, OpensAttentionFilesAndRejectsBadOnes) {
  HeadlessImGui ui;
  attnviz::AppConfig cfg;
  cfg.headless = true;
  attnviz::App* app = StartApp(ui, cfg);
  const std::string good =
      R"({"format":"attnviz","version":1,"source_tokens":["a","b","c"],"target_tokens":["x","y"],)"
      R"("layers":[{"name":"L0","heads":[{"name":"h0","weights":[[0.2,0.3,0.5],[1,0,0]]},)"
      R"({"name":"h1","weights":[[0.5,0.5,0],[0,0,1]]}]},{"name":"L1","heads":[{"name":"h0","weights":)"
      R"([[0.1,0.8,0.1],[0.3,0.3,0.4]]},{"name":"h1","weights":[[0.6,0.2,0.2],[0.2,0.2,0.6]]}]}]})";
  app->OpenFileBytes("model.json", reinterpret_cast<const unsigned char*>(good.data()), good.size());
  ui.Frame(*app);
  std::string d = app->DescribeJson();
  EXPECT_NE(d.find("\"example\":\"file:model.json\""), std::string::npos) << d.substr(0, 300);
  EXPECT_NE(d.find("\"view\":\"grid\""), std::string::npos) << "a multi-head file opens in the grid";
  EXPECT_EQ(app->Command("map 3"), "");
  EXPECT_NE(app->Command("map 4"), "");  // 2 layers x 2 heads

  // Malformed files: an error in the status bar, the previous example stays open.
  const std::string bad[] = {"{", "{\"format\":\"attnviz\",\"version\":1,\"layers\":[]}",
                             R"({"format":"attnviz","version":1,"source_tokens":["a"],"target_tokens":["x"],"layers":[{"name":"L","heads":[{"name":"h","weights":[[0.5,0.5]]}]}]})",
                             std::string("PK\x03\x04garbage", 11)};
  for (const std::string& b : bad) {
    app->OpenFileBytes("bad.json", reinterpret_cast<const unsigned char*>(b.data()), b.size());
    ui.Frame(*app);
    d = app->DescribeJson();
    EXPECT_NE(d.find("\"example\":\"file:model.json\""), std::string::npos) << "bad file must not replace the open one";
  }
  // SVG and JSON export produce downloads.
  EXPECT_EQ(app->Command("save-svg"), "");
  EXPECT_EQ(app->Command("save-json"), "");
  std::string name, mime;
  std::vector<unsigned char> bytes;
  ASSERT_TRUE(app->PopDownload(&name, &mime, &bytes));
  EXPECT_EQ(mime, "image/svg+xml");
  EXPECT_NE(std::string(bytes.begin(), bytes.end()).find("<svg"), std::string::npos);
  ASSERT_TRUE(app->PopDownload(&name, &mime, &bytes));
  EXPECT_EQ(mime, "application/json");
  EXPECT_FALSE(app->PopDownload(&name, &mime, &bytes));
  delete app;
}
