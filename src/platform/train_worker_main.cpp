// attnviz training worker (the browser): its own small WASM instance, run by
// web/attnviz-train-worker.js in a Web Worker, so live training never holds up the page's frames.
// The page's ReportRunner (app/train_runner.h) sends it commands; it answers with reports and, at
// each epoch's end, the model's bytes. No SharedArrayBuffer: it works without cross-origin isolation.
#include <emscripten/emscripten.h>

#include <string>
#include <vector>

#include "app/train_runner.h"

namespace {
attnviz::TrainWorker g_worker;
std::string g_text;            // the last report or error, valid until the next call
std::vector<uint8_t> g_model;  // the model of the last slice that ended an epoch
}  // namespace

// A command from the page; returns "" or the error.
extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_train_handle(const char* message) {
  const attnviz::Status st = g_worker.Handle(message ? message : "");
  g_text = st.ok ? "" : st.message;
  return g_text.c_str();
}

// Trains for about budget_ms; returns the report ("" when nothing is new). The model's bytes, when
// an epoch ended, are then at attnviz_train_model() (attnviz_train_model_size() bytes).
extern "C" EMSCRIPTEN_KEEPALIVE const char* attnviz_train_slice(double budget_ms) {
  g_text = g_worker.Slice(budget_ms, &g_model);
  return g_text.c_str();
}

extern "C" EMSCRIPTEN_KEEPALIVE const uint8_t* attnviz_train_model() {
  return g_model.data();
}

extern "C" EMSCRIPTEN_KEEPALIVE int attnviz_train_model_size() {
  return (int)g_model.size();
}

extern "C" EMSCRIPTEN_KEEPALIVE int attnviz_train_running() {
  return g_worker.running() ? 1 : 0;
}

int main() {
  return 0;
}
