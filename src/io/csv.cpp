#include "io/csv.h"

#include <cmath>

#include "io/json.h"

namespace attnviz {

std::string CsvField(const std::string& text) {
  std::string t = text;
  if (!t.empty() && (t[0] == '=' || t[0] == '+' || t[0] == '-' || t[0] == '@')) t.insert(t.begin(), '\'');
  if (t.find_first_of(",\"\r\n") == std::string::npos) return t;
  std::string q = "\"";
  for (char c : t) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

namespace {

void AppendNumber(float v, std::string* out) {
  if (!std::isfinite(v)) {
    *out += std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
    return;
  }
  AppendShortestFloat(v, out);  // the shortest text that reads back to the same float
}

}  // namespace

std::string MatrixCsv(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                      const std::vector<std::string>& target_tokens, const std::string& corner) {
  std::string out;
  out.reserve((size_t)w.size() * 10 + 64);
  out += CsvField(corner);
  for (Eigen::Index c = 0; c < w.cols(); ++c) {
    out += ',';
    out += CsvField(c < (Eigen::Index)source_tokens.size() ? source_tokens[(size_t)c] : std::to_string(c));
  }
  out += "\r\n";
  for (Eigen::Index r = 0; r < w.rows(); ++r) {
    out += CsvField(r < (Eigen::Index)target_tokens.size() ? target_tokens[(size_t)r] : std::to_string(r));
    for (Eigen::Index c = 0; c < w.cols(); ++c) {
      out += ',';
      AppendNumber(w(r, c), &out);
    }
    out += "\r\n";
  }
  return out;
}

}  // namespace attnviz
