// Writing the attnviz safetensors layout (io/lazy_attention.h): the header from the document's
// shape, then every set's statistics, thumbnails, overviews and screen copies, then the layers,
// streamed head by head.
#include <algorithm>
#include <cstring>

#include "io/file_util.h"
#include "io/json.h"
#include "io/lazy_attention.h"

namespace attnviz {

namespace {

void Strings(JsonWriter* w, const char* key, const std::vector<std::string>& list) {
  w->Key(key);
  w->BeginArray(true);
  for (const std::string& s : list) w->String(s);
  w->EndArray();
}

std::string SetsJson(const AttentionDocument& doc) {
  JsonWriter w(0);
  w.BeginArray();
  for (const AttentionSet& s : doc.sets) {
    const AttentionFile& f = s.data;
    w.BeginObject();
    w.Key("name");
    w.String(s.name);
    w.Key("kind");
    w.String(AttentionKindName(s.kind));
    if (f.self_attention && f.source_tokens == f.target_tokens) {
      Strings(&w, "tokens", f.source_tokens);
    } else {
      Strings(&w, "query_tokens", f.target_tokens);
      Strings(&w, "key_tokens", f.source_tokens);
    }
    w.Key("layers");
    w.Number((double)f.layers.size());
    std::vector<std::string> layer_names, head_names;
    size_t most = 0;
    for (const AttentionFile::Layer& l : f.layers) {
      layer_names.push_back(l.name);
      if (l.heads.size() > most) {
        most = l.heads.size();
        head_names.clear();
        for (const AttentionFile::Head& h : l.heads) head_names.push_back(h.name);
      }
    }
    Strings(&w, "layer_names", layer_names);
    Strings(&w, "head_names", head_names);
    w.EndObject();
  }
  w.EndArray();
  return w.str();
}

std::string TokenizerJson(const TokenizerInfo& t) {
  JsonWriter w(0);
  w.BeginObject();
  w.Key("space_marker");
  t.space_marker.empty() ? w.Null() : w.String(t.space_marker);
  w.Key("continuation_marker");
  t.continuation_marker.empty() ? w.Null() : w.String(t.continuation_marker);
  Strings(&w, "special_tokens", t.special_tokens);
  w.EndObject();
  return w.str();
}

// n floats encoded and written, in pieces (no copy of a whole head in another dtype).
bool WriteFloats(FileSink* sink, StDType dtype, const float* data, size_t n, std::vector<uint8_t>* buf) {
  constexpr size_t kPiece = size_t(1) << 18;
  const size_t item = (size_t)StDTypeSize(dtype);
  buf->resize(std::min(n, kPiece) * item);
  for (size_t at = 0; at < n; at += kPiece) {
    const size_t k = std::min(kPiece, n - at);
    EncodeFloats(dtype, data + at, k, buf->data());
    if (!sink->Write((const char*)buf->data(), k * item)) return false;
  }
  return true;
}

}  // namespace

namespace {

// The stored copies in the order the plan lays them out (after the statistics, before the layers).
constexpr LazyPool kPlanPools[] = {LazyPool::Thumb, LazyPool::Overview, LazyPool::Screen};

// Whether a set of nq x nk heads stores the copies: overviews always, the others past their side.
bool PlanWants(LazyPool pool, int64_t nq, int64_t nk) {
  switch (pool) {
    case LazyPool::Screen:
      return WantsScreenCopies(nq, nk);
    case LazyPool::Thumb:
      return WantsThumbnails(nq, nk);
    default:
      return true;
  }
}

// Encodes w in dtype a block of whole rows at a time, hands each block's bytes to `sink` (if any),
// and computes the head's statistics from them decoded back as a reader will: one encoding for both.
bool EncodeWithStats(const MatrixRM& w, StDType dtype, FileSink* sink, float* row) {
  const int rows = (int)w.rows(), cols = (int)w.cols();
  HeadStatsAccumulator acc;
  acc.Begin(rows, cols);
  const int block = std::max(1, (1 << 16) / std::max(1, cols));
  thread_local std::vector<uint8_t> bytes;
  thread_local std::vector<float> decoded;
  const size_t item = (size_t)StDTypeSize(dtype);
  bool ok = true;
  for (int r0 = 0; r0 < rows && ok; r0 += block) {
    const int r1 = std::min(rows, r0 + block);
    const size_t n = (size_t)(r1 - r0) * (size_t)cols;
    bytes.resize(n * item);
    decoded.resize(n);
    float max = 0.0f;
    size_t fixed = 0;
    EncodeFloats(dtype, w.data() + (size_t)r0 * (size_t)cols, n, bytes.data());
    ok = !sink || sink->Write((const char*)bytes.data(), n * item);
    DecodeWeights(dtype, bytes.data(), n, decoded.data(), &max, &fixed);
    (void)acc.AddRowData(decoded.data(), r0, r1);  // finite once decoded
  }
  HeadStats h;
  (void)acc.Finish(&h);  // an empty head: zeros, as ComputeHeadStats leaves them
  HeadStatsToRow(h, row);
  return ok;
}

}  // namespace

void StoredHeadStats(const MatrixRM& w, StDType dtype, float* row) {
  (void)EncodeWithStats(w, dtype, nullptr, row);
}

Status PlanLazyAttention(const AttentionDocument& doc, StDType dtype, LazyWritePlan* out) {
  if (dtype != StDType::F16 && dtype != StDType::BF16 && dtype != StDType::F32)
    return Status::Error("safetensors: weights are written as F16, BF16 or F32");
  if (doc.sets.empty()) return Status::Error("safetensors: nothing to write");
  LazyWritePlan plan;
  plan.dtype = dtype;
  std::vector<SafetensorsTensorSpec> specs;
  for (size_t s = 0; s < doc.sets.size(); ++s) {
    const AttentionFile& f = doc.sets[s].data;
    const int64_t nq = (int64_t)f.target_tokens.size(), nk = (int64_t)f.source_tokens.size();
    if (nq < 1 || nk < 1 || f.layers.empty())
      return Status::Error("safetensors: set " + std::to_string(s) + " is empty");
    plan.n_q.push_back(nq);
    plan.n_k.push_back(nk);
    for (LazyPool pool : kLazyPoolList) {
      const bool wanted = PlanWants(pool, nq, nk);
      plan.pool_rows[(int)pool].push_back(wanted ? OverviewSide(nq, LazyPoolSide(pool)) : 0);
      plan.pool_cols[(int)pool].push_back(wanted ? OverviewSide(nk, LazyPoolSide(pool)) : 0);
    }
    plan.heads.emplace_back();
    for (const AttentionFile::Layer& l : f.layers) {
      if (l.heads.empty()) return Status::Error("safetensors: a layer of set " + std::to_string(s) + " has no heads");
      plan.heads[s].push_back((int)l.heads.size());
    }
  }
  for (size_t s = 0; s < doc.sets.size(); ++s)
    for (size_t l = 0; l < plan.heads[s].size(); ++l)
      specs.push_back({"stats." + std::to_string(s) + "." + std::to_string(l),
                       StDType::F32,
                       {plan.heads[s][l], kHeadStatsColumns}});
  for (LazyPool pool : kPlanPools)
    for (size_t s = 0; s < doc.sets.size(); ++s)
      for (size_t l = 0; l < plan.heads[s].size() && plan.pool_rows[(int)pool][s]; ++l)
        specs.push_back({LazyPoolPrefix(pool) + std::to_string(s) + "." + std::to_string(l),
                         dtype,
                         {plan.heads[s][l], plan.pool_rows[(int)pool][s], plan.pool_cols[(int)pool][s]}});
  for (size_t s = 0; s < doc.sets.size(); ++s)
    for (size_t l = 0; l < plan.heads[s].size(); ++l)
      specs.push_back({"attention." + std::to_string(s) + "." + std::to_string(l),
                       dtype,
                       {plan.heads[s][l], plan.n_q[s], plan.n_k[s]}});
  std::vector<std::pair<std::string, std::string>> meta = {
      {"format", "attnviz"}, {"version", "2"}, {"sets", SetsJson(doc)}};
  const TokenizerInfo& t = doc.tokenizer;
  if (!t.space_marker.empty() || !t.continuation_marker.empty() || !t.special_tokens.empty())
    meta.emplace_back("tokenizer", TokenizerJson(t));
  if (doc.meta.IsObject()) meta.emplace_back("meta", SerializeJson(doc.meta));
  std::vector<uint64_t> begins;
  Status st = SafetensorsHeaderBytes(specs, meta, &plan.header, &begins, &plan.file_size);
  if (!st) return st;
  size_t i = 0;
  plan.stats.resize(doc.sets.size());
  for (LazyPool pool : kPlanPools) plan.pooled[(int)pool].resize(doc.sets.size());
  plan.attention.resize(doc.sets.size());
  for (size_t s = 0; s < doc.sets.size(); ++s)
    for (size_t l = 0; l < plan.heads[s].size(); ++l) plan.stats[s].push_back(begins[i++]);
  for (LazyPool pool : kPlanPools)
    for (size_t s = 0; s < doc.sets.size(); ++s)
      for (size_t l = 0; l < plan.heads[s].size() && plan.pool_rows[(int)pool][s]; ++l)
        plan.pooled[(int)pool][s].push_back(begins[i++]);
  for (size_t s = 0; s < doc.sets.size(); ++s)
    for (size_t l = 0; l < plan.heads[s].size(); ++l) plan.attention[s].push_back(begins[i++]);
  *out = std::move(plan);
  return Status::Ok();
}

Status WriteLazyAttention(const AttentionDocument& doc, StDType dtype, const std::string& path) {
  LazyWritePlan plan;
  Status st = PlanLazyAttention(doc, dtype, &plan);
  if (!st) return st;
  for (size_t s = 0; s < doc.sets.size(); ++s)
    for (const AttentionFile::Layer& l : doc.sets[s].data.layers)
      for (const AttentionFile::Head& h : l.heads)
        if (h.weights.rows() != plan.n_q[s] || h.weights.cols() != plan.n_k[s])
          return Status::Error("safetensors: head '" + h.name + "' is not [n_q, n_k] = [" +
                               std::to_string(plan.n_q[s]) + ", " + std::to_string(plan.n_k[s]) + "]");
  FileSink sink;
  if (!(st = sink.Open(path))) return st;
  bool ok = sink.Write((const char*)plan.header.data(), plan.header.size());
  std::vector<uint8_t> buf;
  std::vector<float> pooled;
  float row[kHeadStatsColumns];
  for (size_t s = 0; s < doc.sets.size() && ok; ++s)  // in the plan's order: statistics first
    for (const AttentionFile::Layer& l : doc.sets[s].data.layers)
      for (const AttentionFile::Head& h : l.heads) {
        StoredHeadStats(h.weights, dtype, row);
        ok = ok && WriteFloats(&sink, StDType::F32, row, kHeadStatsColumns, &buf);
      }
  for (LazyPool pool : kPlanPools) {  // in the plan's order
    for (size_t s = 0; s < doc.sets.size() && ok; ++s) {
      const int R = plan.pool_rows[(int)pool][s], C = plan.pool_cols[(int)pool][s];
      pooled.resize((size_t)R * (size_t)C);
      for (const AttentionFile::Layer& l : doc.sets[s].data.layers) {
        for (const AttentionFile::Head& h : l.heads) {
          if (!R) break;
          MaxPoolOverview(h.weights.data(), h.weights.rows(), h.weights.cols(), R, C, pooled.data());
          ok = ok && WriteFloats(&sink, dtype, pooled.data(), pooled.size(), &buf);
        }
      }
    }
  }
  for (size_t s = 0; s < doc.sets.size() && ok; ++s)
    for (const AttentionFile::Layer& l : doc.sets[s].data.layers)
      for (const AttentionFile::Head& h : l.heads)
        ok = ok && WriteFloats(&sink, dtype, h.weights.data(), (size_t)h.weights.size(), &buf);
  return sink.Close();
}

Status WriteLazyAttentionStreamed(const AttentionDocument& shape, StDType dtype, const std::string& path,
                                  const LazyHeadSource& head) {
  LazyWritePlan plan;
  Status st = PlanLazyAttention(shape, dtype, &plan);
  if (!st) return st;
  FileSink sink;
  if (!(st = sink.Open(path))) return st;
  bool ok = sink.Write((const char*)plan.header.data(), plan.header.size());
  const uint64_t item = (uint64_t)StDTypeSize(dtype);
  std::vector<uint8_t> buf;
  std::vector<float> pooled;
  MatrixRM w;
  for (size_t s = 0; s < shape.sets.size() && ok; ++s) {
    for (size_t l = 0; l < plan.heads[s].size() && ok; ++l) {
      for (int h = 0; h < plan.heads[s][l] && ok; ++h) {
        if (!(st = head((int)s, (int)l, h, &w))) return st;  // the sink removes the part written
        if (w.rows() != plan.n_q[s] || w.cols() != plan.n_k[s])
          return Status::Error("safetensors: layer " + std::to_string(l) + " head " + std::to_string(h) +
                               " is not [n_q, n_k] = [" + std::to_string(plan.n_q[s]) + ", " +
                               std::to_string(plan.n_k[s]) + "]");
        float row[kHeadStatsColumns];  // from the bytes written, decoded back
        ok = sink.Seek(plan.attention[s][l] + (uint64_t)h * (uint64_t)w.size() * item) &&
             EncodeWithStats(w, dtype, &sink, row) && sink.Seek(plan.stats[s][l] + (uint64_t)h * sizeof(row)) &&
             WriteFloats(&sink, StDType::F32, row, kHeadStatsColumns, &buf);
        for (LazyPool pool : kPlanPools) {
          const int R = plan.pool_rows[(int)pool][s], C = plan.pool_cols[(int)pool][s];
          if (!R || !ok) continue;
          pooled.resize((size_t)R * (size_t)C);
          MaxPoolOverview(w.data(), w.rows(), w.cols(), R, C, pooled.data());
          ok = sink.Seek(plan.pooled[(int)pool][s][l] + (uint64_t)h * pooled.size() * item) &&
               WriteFloats(&sink, dtype, pooled.data(), pooled.size(), &buf);
        }
      }
    }
  }
  return sink.Close();  // the layers come last in the plan, so the last head's weights end the file
}

}  // namespace attnviz
