// attnviz io: a weight matrix as CSV (RFC 4180), tokens as the header row and first column.
//
//   MatrixCsv   rows = target tokens, columns = source tokens; numbers that read back exactly
//   CsvField    one field, quoted when needed; text that a spreadsheet would run as a formula
//               (starting with = + - @) gets a leading apostrophe
#pragma once
#include <string>
#include <vector>

#include "core/attention.h"

namespace attnviz {

std::string CsvField(const std::string& text);  // "a,b" -> "\"a,b\""; "=1+1" -> "'=1+1"
// First row: corner, then the source tokens; each next row: its target token, then its weights.
std::string MatrixCsv(const MatrixRM& w, const std::vector<std::string>& source_tokens,
                      const std::vector<std::string>& target_tokens, const std::string& corner = "target\\source");

}  // namespace attnviz
