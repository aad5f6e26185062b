// tests/core: reader for tests/reference/data/attention_cases.txt (written by
// tests/reference/make_reference.py) and comparison helpers that print the largest error.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/attention.h"
#include "core/seq2seq/rng.h"

namespace attnviz_test {

using attnviz::MatrixRM;
using attnviz::seq2seq::Rng;

// Random test inputs come from the project's own generator (xoshiro256**), never from std::
// distributions or Eigen's Random() (std::rand): those differ between standard libraries, and
// the native and WASM builds of a test must check the same numbers.
inline std::vector<float> RandomValues(size_t n, Rng* rng, float lo = -1.0f, float hi = 1.0f) {
  std::vector<float> v(n);
  for (float& x : v) x = lo + (hi - lo) * rng->Float();  // uniform in [lo, hi)
  return v;
}
inline MatrixRM RandomMatrix(int rows, int cols, Rng* rng, float lo = -1.0f, float hi = 1.0f) {
  const std::vector<float> v = RandomValues((size_t)rows * cols, rng, lo, hi);
  return Eigen::Map<const MatrixRM>(v.data(), rows, cols);
}

struct RefCase {
  std::string name;                           // e.g. "attend_cosine_causal"
  std::map<std::string, std::string> params;  // param lines
  std::map<std::string, MatrixRM> tensors;    // tensor blocks (values parsed as double -> float)
  bool Has(const std::string& t) const { return tensors.count(t) != 0; }
  const MatrixRM& T(const std::string& t) const { return tensors.at(t); }
  std::string P(const std::string& p, const std::string& def = "") const {
    auto it = params.find(p);
    return it == params.end() ? def : it->second;
  }
};

inline std::string ReferencePath(const char* file) {
  return std::string(ATTNVIZ_SOURCE_DIR) + "/tests/reference/data/" + file;
}

// Parses the whole file; an unreadable or malformed file yields an empty list and an error.
inline std::vector<RefCase> LoadReferenceCases(const std::string& path, std::string* error) {
  std::vector<RefCase> cases;
  std::ifstream in(path);
  if (!in) {
    *error = "cannot open " + path;
    return {};
  }
  std::string line;
  RefCase cur;
  bool open = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string word;
    ls >> word;
    if (word == "case") {
      cur = RefCase{};
      ls >> cur.name;
      open = true;
    } else if (word == "param" && open) {
      std::string k, v;
      ls >> k >> v;
      cur.params[k] = v;
    } else if (word == "tensor" && open) {
      std::string name;
      int rows = 0, cols = 0;
      ls >> name >> rows >> cols;
      std::string values;
      if (!std::getline(in, values)) {
        *error = "truncated tensor " + name + " in " + cur.name;
        return {};
      }
      MatrixRM m(rows, cols);
      const char* p = values.c_str();
      for (int i = 0; i < rows * cols; ++i) {
        char* end = nullptr;
        const double x = std::strtod(p, &end);  // accepts "-inf"
        if (end == p) {
          *error = "bad value in tensor " + name + " of " + cur.name;
          return {};
        }
        m.data()[i] = (float)x;
        p = end;
      }
      cur.tensors[name] = m;
    } else if (word == "end" && open) {
      cases.push_back(cur);
      open = false;
    }
  }
  return cases;
}

// Collects the largest error per group over many comparisons; Print() writes one line per group.
struct ErrorLog {
  struct Entry {
    double max_err = 0.0, worst_ratio = 0.0;
    int count = 0;
  };
  std::map<std::string, Entry> groups;
  void Add(const std::string& group, double err, double ratio) {
    Entry& e = groups[group];
    e.max_err = std::max(e.max_err, err);
    e.worst_ratio = std::max(e.worst_ratio, ratio);
    ++e.count;
  }
  void Print(const char* title) const {
    std::printf("  %s\n", title);
    for (const auto& g : groups)
      std::printf("    %-40s %4d comparisons, max abs err = %.3g (worst ratio to tol %.3f)\n", g.first.c_str(),
                  g.second.count, g.second.max_err, g.second.worst_ratio);
  }
};

// Largest |got - want| over all entries, and whether every entry is within atol + rtol |want|.
// Equal infinities count as exact. Records into log (under group) if given, else prints "<what>: max abs err = ...
// (worst ratio to tol ...)".
inline ::testing::AssertionResult AllClose(const MatrixRM& got, const MatrixRM& want, double atol, double rtol,
                                           const std::string& what, ErrorLog* log = nullptr,
                                           const std::string& group = "") {
  if (got.rows() != want.rows() || got.cols() != want.cols())
    return ::testing::AssertionFailure() << what << ": shape [" << got.rows() << ", " << got.cols() << "] != expected ["
                                         << want.rows() << ", " << want.cols() << "]";
  double max_err = 0.0, worst = 0.0;
  Eigen::Index worst_i = 0;
  for (Eigen::Index i = 0; i < got.size(); ++i) {
    const double g = got.data()[i], w = want.data()[i];
    if (g == w) continue;  // includes equal infinities
    const double err = std::isfinite(g) && std::isfinite(w) ? std::abs(g - w) : INFINITY;
    max_err = std::max(max_err, err);
    const double ratio = err / (atol + rtol * std::abs(w));
    if (ratio > worst) {
      worst = ratio;
      worst_i = i;
    }
  }
  if (log)
    log->Add(group.empty() ? what : group, max_err, worst);
  else
    std::printf("  %-48s max abs err = %.3g (tol %.1g + %.1g|x|, worst ratio %.3f)\n", what.c_str(), max_err, atol,
                rtol, worst);
  if (worst <= 1.0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": entry " << worst_i << " got " << got.data()[worst_i] << " want "
                                       << want.data()[worst_i] << " (max abs err " << max_err << ")";
}

inline MatrixRM RowOf(const std::vector<float>& v) {
  MatrixRM m(1, (int)v.size());
  for (size_t i = 0; i < v.size(); ++i) m(0, (int)i) = v[i];
  return m;
}

}  // namespace attnviz_test
