#include "app/model_library.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <utility>

#include "embedded_models.h"

namespace attnviz {
namespace {

std::string KindLabel(const std::string& file) {
  std::string kind = "model";
  if (file.find("bahdanau") != std::string::npos) kind = "Bahdanau (additive)";
  if (file.find("luong") != std::string::npos) kind = "Luong (general)";
  if (file.find("transformer") != std::string::npos) kind = "Transformer (2+2 layers)";
  return file.find("es-en") != std::string::npos ? kind + ", Spanish \xe2\x86\x92 English" : kind;
}

bool IsTranslationModel(const std::string& file) {  // the Translate view's models (not the dates one)
  return file.find(".bin") != std::string::npos &&
         (file.find("en-fr") != std::string::npos || file.find("es-en") != std::string::npos);
}

int KindRank(const std::string& file) {  // Bahdanau first: it is the model of the translation figures
  if (file.find("bahdanau") != std::string::npos) return 0;
  return file.find("luong") != std::string::npos ? 1 : 2;
}

// The model files of the web build: "name size" lines of the embedded models.index.
std::vector<std::pair<std::string, size_t>> RemoteModels() {
  std::vector<std::pair<std::string, size_t>> out;
  const EmbeddedFile* index = attnviz_embedded_models_find("models.index");
  if (!index) return out;
  // Whitespace-separated pairs, read by hand: an istringstream here linked iostreams and locales
  // into the page (70 KB of attnviz.wasm).
  const char* p = (const char*)index->data;
  const char* end = p + index->size;
  auto word = [&](std::string* w) {
    while (p < end && std::isspace((unsigned char)*p)) ++p;
    const char* start = p;
    while (p < end && !std::isspace((unsigned char)*p)) ++p;
    w->assign(start, p);
    return p > start;
  };
  std::string name, size;
  while (word(&name) && word(&size) && size.size() <= 15 && size.find_first_not_of("0123456789") == std::string::npos) {
    size_t n = 0;
    for (char c : size) n = n * 10 + (size_t)(c - '0');
    out.push_back({name, n});
  }
  return out;
}

}  // namespace

void ModelLibrary::ListEmbedded() {
  size_t n = 0;
  const EmbeddedFile* files = attnviz_embedded_models_files(&n);
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i)
    if (IsTranslationModel(files[i].name)) names.push_back(files[i].name);
  const auto remote = RemoteModels();
  for (const auto& r : remote)
    if (IsTranslationModel(r.first)) names.push_back(r.first);
  // En -> Fr first, Bahdanau first: the model of the translation figures opens the page.
  std::stable_sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
    const bool ea = a.find("es-en") != std::string::npos, eb = b.find("es-en") != std::string::npos;
    return ea != eb ? eb : KindRank(a) < KindRank(b);
  });
  for (const std::string& name : names) {
    ModelSlot s;
    s.file = name;
    s.label = std::string(KindLabel(name)) + ", pretrained";
    for (const auto& r : remote)
      if (r.first == name) s.remote_bytes = std::max<size_t>(1, r.second);
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
  if (s->remote_bytes > 0) {
    if (!s->fetching) fetch_requests.push_back("models/" + s->file);
    s->fetching = true;
    return Status::Error("loading the model (" + std::to_string((s->remote_bytes + 1023) / 1024) + " KB)");
  }
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

bool ModelLibrary::Deliver(const std::string& url, const uint8_t* data, size_t size, const std::string& error) {
  for (ModelSlot& s : slots) {
    if (!s.fetching || url.size() < s.file.size() ||
        url.compare(url.size() - s.file.size(), s.file.size(), s.file) != 0)
      continue;
    s.fetching = false;
    Status st = error.empty() ? seq2seq::LoadModel(data, size, &s.model) : Status::Error(error);
    if (st) {
      s.loaded = true;
    } else {
      s.error = "could not load " + s.file + ": " + st.message;
    }
    return true;
  }
  return false;
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
