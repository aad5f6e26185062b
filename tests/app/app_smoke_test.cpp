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
  const char* examples[] = {"seed002", "seed004", "seed000", "translation", "causal"};
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
