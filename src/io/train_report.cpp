#include "io/train_report.h"

#include <cmath>
#include <limits>

#include "io/json.h"

namespace attnviz {

double TrainProgress::SecondsLeftInEpoch() const {
  const double start = history.empty() ? 0.0 : history.back().seconds;
  const double spent = seconds - start;
  if (evaluating || !(progress >= 0.02 && progress < 1.0) || !(spent > 0.0)) return -1.0;
  return spent * (1.0 - progress) / progress;
}

namespace {

using seq2seq::EpochStats;
using seq2seq::ProbeSnapshot;

void WriteTokens(JsonWriter* w, const char* key, const std::vector<std::string>& tokens) {
  w->Key(key);
  w->BeginArray(true);
  for (const auto& t : tokens) w->String(t);
  w->EndArray();
}

void WriteEpoch(JsonWriter* w, const EpochStats& e) {
  w->BeginObject();
  w->Key("epoch");
  w->Number(e.epoch);
  w->Key("loss");
  w->Number(e.loss);
  w->Key("heldout_loss");
  w->Number(e.heldout_loss);
  w->Key("exact_match");
  w->Number(e.exact_match);
  w->Key("token_accuracy");
  w->Number(e.token_accuracy);
  w->Key("aer");
  w->Number(e.aer);
  w->Key("aer_threshold");
  w->Number(e.aer_threshold);
  w->Key("seconds");
  w->Number(e.seconds);
  w->Key("batches");
  w->Number((double)e.batches);
  w->EndObject();
}

void WriteProbe(JsonWriter* w, const ProbeSnapshot& p) {
  w->BeginObject();
  w->Key("epoch");
  w->Number(p.epoch);
  WriteTokens(w, "source", p.source_tokens);
  WriteTokens(w, "reference", p.reference_tokens);
  WriteTokens(w, "decoded", p.decoded_tokens);
  w->Key("rows");
  w->Number((double)p.attention.rows());
  w->Key("cols");
  w->Number((double)p.attention.cols());
  w->Key("attention");
  w->BeginArray(true);
  for (Eigen::Index i = 0; i < p.attention.size(); ++i) w->NumberF(p.attention.data()[i]);
  w->EndArray();
  w->Key("aer");
  w->Number(p.aer);
  w->EndObject();
}

// Reading: every field is checked; a number may be null (NaN: a diverged loss).
struct Reader {
  std::string error;
  double Num(const JsonValue& obj, const char* key) {
    const JsonValue* v = obj.Find(key);
    if (v && v->type == JsonType::Number) return v->number;
    if (v && v->IsNull()) return std::numeric_limits<double>::quiet_NaN();
    if (error.empty()) error = std::string("train report: '") + key + "' is missing or not a number";
    return 0;
  }
  int64_t Count(const JsonValue& obj, const char* key, double max) {
    const double v = Num(obj, key);
    if (!(v >= 0 && v <= max && v == std::floor(v))) {
      if (error.empty()) error = std::string("train report: '") + key + "' is not a count";
      return 0;
    }
    return (int64_t)v;
  }
  const JsonValue* Array(const JsonValue& obj, const char* key) {
    const JsonValue* v = obj.Find(key);
    if (v && v->IsArray()) return v;
    if (error.empty()) error = std::string("train report: '") + key + "' is missing or not an array";
    return nullptr;
  }
  std::vector<std::string> Tokens(const JsonValue& obj, const char* key) {
    std::vector<std::string> out;
    const JsonValue* a = Array(obj, key);
    if (!a) return out;
    for (const auto& t : a->items) {
      if (t.type != JsonType::String) {
        if (error.empty()) error = std::string("train report: '") + key + "' holds a non-string";
        return out;
      }
      out.push_back(t.string);
    }
    return out;
  }
  // Numbers of an array that may hold nulls (then it is not packed).
  std::vector<float> Floats(const JsonValue& a) {
    std::vector<float> out;
    if (a.IsNumberArray()) {
      out.assign(a.numbers.begin(), a.numbers.end());
      return out;
    }
    for (const auto& x : a.items) {
      if (x.type == JsonType::Number)
        out.push_back((float)x.number);
      else if (x.IsNull())
        out.push_back(std::numeric_limits<float>::quiet_NaN());
      else if (error.empty())
        error = "train report: a number array holds a non-number";
    }
    return out;
  }
  EpochStats Epoch(const JsonValue& o) {
    EpochStats e;
    e.epoch = (int)Count(o, "epoch", 1e6);
    e.loss = Num(o, "loss");
    e.heldout_loss = Num(o, "heldout_loss");
    e.exact_match = Num(o, "exact_match");
    e.token_accuracy = Num(o, "token_accuracy");
    e.aer = Num(o, "aer");
    e.aer_threshold = Num(o, "aer_threshold");
    e.seconds = Num(o, "seconds");
    e.batches = Count(o, "batches", 1e15);
    return e;
  }
  ProbeSnapshot Probe(const JsonValue& o) {
    ProbeSnapshot p;
    p.epoch = (int)Count(o, "epoch", 1e6);
    p.source_tokens = Tokens(o, "source");
    p.reference_tokens = Tokens(o, "reference");
    p.decoded_tokens = Tokens(o, "decoded");
    const int64_t rows = Count(o, "rows", 4096), cols = Count(o, "cols", 4096);
    const JsonValue* a = Array(o, "attention");
    if (!error.empty() || !a) return p;
    const std::vector<float> v = Floats(*a);
    if ((int64_t)v.size() != rows * cols) {
      error = "train report: a probe's attention does not have rows x cols numbers";
      return p;
    }
    p.attention.resize(rows, cols);
    for (size_t i = 0; i < v.size(); ++i) p.attention.data()[i] = v[i];
    p.aer = Num(o, "aer");
    return p;
  }
};

}  // namespace

std::string EncodeTrainReport(const seq2seq::Trainer& tr, TrainReportCursor* cursor) {
  JsonWriter w;
  w.BeginObject();
  w.Key("epoch");
  w.Number(tr.epoch());
  w.Key("progress");
  w.Number(tr.progress());
  w.Key("seconds");
  w.Number(tr.seconds());
  w.Key("batches");
  w.Number((double)tr.batches());
  w.Key("last_loss");
  w.NumberF(tr.last_loss());
  w.Key("evaluating");
  w.Bool(tr.evaluating());
  const auto& losses = tr.batch_losses();
  w.Key("losses_from");
  w.Number((double)cursor->losses);
  w.Key("losses");
  w.BeginArray(true);
  for (size_t i = cursor->losses; i < losses.size(); ++i) w.NumberF(losses[i]);
  w.EndArray();
  w.Key("history_from");
  w.Number((double)cursor->history);
  w.Key("history");
  w.BeginArray();
  for (size_t i = cursor->history; i < tr.history().size(); ++i) WriteEpoch(&w, tr.history()[i]);
  w.EndArray();
  w.Key("probes_from");
  w.Number((double)cursor->probes);
  w.Key("probes");
  w.BeginArray();
  for (size_t i = cursor->probes; i < tr.probes().size(); ++i) WriteProbe(&w, tr.probes()[i]);
  w.EndArray();
  w.EndObject();
  cursor->losses = losses.size();
  cursor->history = tr.history().size();
  cursor->probes = tr.probes().size();
  return w.str();
}

void CopyTrainProgress(const seq2seq::Trainer& tr, TrainProgress* p) {
  TrainProgress now;  // the scalars; the vectors are appended to *p below without copying them twice
  now.epoch = tr.epoch();
  now.progress = tr.progress();
  now.seconds = tr.seconds();
  now.batches = tr.batches();
  now.last_loss = tr.last_loss();
  now.evaluating = tr.evaluating();
  UpdateTrainProgress(now, tr.batch_losses(), tr.history(), tr.probes(), p);
}

// The scalar figures of a progress (everything but the growing arrays).
static void CopyScalars(const TrainProgress& from, TrainProgress* to) {
  to->epoch = from.epoch;
  to->progress = from.progress;
  to->seconds = from.seconds;
  to->batches = from.batches;
  to->last_loss = from.last_loss;
  to->evaluating = from.evaluating;
}

void UpdateTrainProgress(const TrainProgress& scalars, const std::vector<float>& losses,
                         const std::vector<seq2seq::EpochStats>& history,
                         const std::vector<seq2seq::ProbeSnapshot>& probes, TrainProgress* p) {
  CopyScalars(scalars, p);
  if (p->batch_losses.size() > losses.size()) p->batch_losses.clear();  // a new run
  p->batch_losses.insert(p->batch_losses.end(), losses.begin() + (std::ptrdiff_t)p->batch_losses.size(), losses.end());
  if (p->history.size() != history.size()) p->history = history;
  if (p->probes.size() != probes.size()) p->probes = probes;
}

Status ApplyTrainReport(const char* json, size_t size, TrainProgress* progress) {
  JsonValue doc;
  JsonParseOptions options;
  options.max_depth = 8;
  options.max_bytes = size_t(64) << 20;
  if (Status st = ParseJson(json, size, &doc, options); !st) return Status::Error("train report: " + st.message);
  if (!doc.IsObject()) return Status::Error("train report: not a JSON object");
  // Validate the whole message before touching *progress; then append in place (a long run's
  // losses and probes are not copied per message).
  Reader r;
  TrainProgress scalars;
  scalars.epoch = (int)r.Count(doc, "epoch", 1e6);
  scalars.progress = r.Num(doc, "progress");
  scalars.seconds = r.Num(doc, "seconds");
  scalars.batches = r.Count(doc, "batches", 1e15);
  scalars.last_loss = (float)r.Num(doc, "last_loss");
  const JsonValue* ev = doc.Find("evaluating");
  scalars.evaluating = ev && ev->type == JsonType::Bool && ev->boolean;
  if ((size_t)r.Count(doc, "losses_from", 1e12) != progress->batch_losses.size() ||
      (size_t)r.Count(doc, "history_from", 1e6) != progress->history.size() ||
      (size_t)r.Count(doc, "probes_from", 1e6) != progress->probes.size()) {
    if (r.error.empty()) r.error = "train report: it does not continue the last one (a message was lost)";
  }
  std::vector<float> losses;
  std::vector<seq2seq::EpochStats> history;
  std::vector<seq2seq::ProbeSnapshot> probes;
  if (const JsonValue* a = r.Array(doc, "losses")) losses = r.Floats(*a);
  if (const JsonValue* a = r.Array(doc, "history"))
    for (const auto& e : a->items) history.push_back(r.Epoch(e));
  if (const JsonValue* a = r.Array(doc, "probes"))
    for (const auto& p : a->items) probes.push_back(r.Probe(p));
  if (!r.error.empty()) return Status::Error(r.error);
  CopyScalars(scalars, progress);
  progress->batch_losses.insert(progress->batch_losses.end(), losses.begin(), losses.end());
  for (auto& e : history) progress->history.push_back(std::move(e));
  for (auto& p : probes) progress->probes.push_back(std::move(p));
  return Status::Ok();
}

}  // namespace attnviz
