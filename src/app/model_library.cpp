#include "app/model_library.h"

#include <algorithm>
#include <cstring>

#include "embedded_models.h"

namespace attnviz {
namespace {

const char* KindLabel(const std::string& file) {
  if (file.find("bahdanau") != std::string::npos) return "Bahdanau (additive)";
  if (file.find("luong") != std::string::npos) return "Luong (general)";
  if (file.find("transformer") != std::string::npos) return "Transformer (2+2 layers)";
  return "model";
}

int KindRank(const std::string& file) {  // Bahdanau first: it is the model of the translation figures
  if (file.find("bahdanau") != std::string::npos) return 0;
  return file.find("luong") != std::string::npos ? 1 : 2;
}

}  // namespace

void ModelLibrary::ListEmbedded() {
  size_t n = 0;
  const EmbeddedFile* files = attnviz_embedded_models_files(&n);
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i)
    if (std::strstr(files[i].name, ".bin") && std::strstr(files[i].name, "en-fr")) names.push_back(files[i].name);
  std::sort(names.begin(), names.end(),
            [](const std::string& a, const std::string& b) { return KindRank(a) < KindRank(b); });
  for (const std::string& name : names) {
    ModelSlot s;
    s.file = name;
    s.label = std::string(KindLabel(name)) + ", pretrained";
    slots.push_back(std::move(s));
  }
}

ModelSlot* ModelLibrary::Chosen() {
  if (slots.empty()) return nullptr;
  slot = std::clamp(slot, 0, (int)slots.size() - 1);
  return &slots[(size_t)slot];
}

Status ModelLibrary::EnsureLoaded(ModelSlot* s) {
  if (s->loaded) return Status::Ok();
  if (!s->error.empty()) return Status::Error(s->error);
  if (s->file.empty()) return Status::Error("the trained model has no weights yet");
  const EmbeddedFile* f = attnviz_embedded_models_find(s->file.c_str());
  if (!f) {
    s->error = "model " + s->file + " is not embedded in this build";
    return Status::Error(s->error);
  }
  const Status st = seq2seq::LoadModel(f->data, f->size, &s->model);
  if (!st) {
    s->error = s->file + ": " + st.message;
    return Status::Error(s->error);
  }
  s->loaded = true;
  return Status::Ok();
}

void ModelLibrary::PublishTrained(const seq2seq::Model& model, const std::string& label) {
  ModelSlot* target = nullptr;
  for (ModelSlot& s : slots)
    if (s.file.empty()) target = &s;
  if (!target) {
    slots.emplace_back();
    target = &slots.back();
  }
  target->model = model;
  target->loaded = true;
  target->error.clear();
  target->label = label;
  slot = (int)(target - slots.data());
}

}  // namespace attnviz
