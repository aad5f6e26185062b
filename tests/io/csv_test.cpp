// CSV export of a weight matrix: header of tokens, exact numbers, quoting, formula guard.
#include "io/csv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>

using namespace attnviz;

TEST(Csv, FieldsAreQuotedAndFormulasDisarmed) {
  EXPECT_EQ(CsvField("cat"), "cat");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("=HYPERLINK(1)"), "'=HYPERLINK(1)");
  EXPECT_EQ(CsvField("-"), "'-");
  EXPECT_EQ(CsvField("line\nbreak"), "\"line\nbreak\"");
}

TEST(Csv, MatrixReadsBackExactlyWithTokenHeaders) {
  MatrixRM w(2, 3);
  w << 0.1f, 0.2f, 0.7f, 1.0f / 3.0f, 0.0f, 2.0f / 3.0f;
  const std::string csv = MatrixCsv(w, {"the", "cat,", "sat"}, {"le", "chat"});
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "target\\source,the,\"cat,\",sat\r");
  for (int r = 0; r < 2; ++r) {
    std::getline(in, line);
    std::istringstream cells(line);
    std::string cell;
    std::getline(cells, cell, ',');
    EXPECT_EQ(cell, r == 0 ? "le" : "chat");
    for (int c = 0; c < 3; ++c) {
      std::getline(cells, cell, ',');
      EXPECT_EQ(std::strtof(cell.c_str(), nullptr), w(r, c)) << "row " << r << " col " << c;
    }
  }
}

// Numbers are written as before (the shortest of "%.6g" .. "%.9g" that strtof reads back), through
// the JSON writer's fast path (AppendShortestFloat): printf and strtof run in software long double in
// WebAssembly, and a CSV of a 4096 x 4096 head took 5-6 s of the page's thread.
TEST(Csv, NumbersAreTheShortestPrintfTextThatReadsBack) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-44, 38);
  MatrixRM w(64, 64);
  for (Eigen::Index i = 0; i < w.size(); ++i) {
    const int k = (int)(i % 4);
    w.data()[i] = k == 0   ? unit(rng)
                  : k == 1 ? unit(rng) * 1e-3f
                  : k == 2 ? std::ldexp(unit(rng) + 0.5f, exponent(rng) * 3)  // also beyond 1e13
                           : std::round(unit(rng) * 100.0f) / 100.0f;
  }
  w(0, 0) = 0.0f;
  w(0, 1) = -0.0f;
  w(0, 2) = 1.0f;
  const std::string csv = MatrixCsv(w, {}, {});
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // the header
  for (int r = 0; r < 64; ++r) {
    ASSERT_TRUE(std::getline(in, line));
    std::istringstream cells(line);
    std::string cell;
    std::getline(cells, cell, ',');
    for (int c = 0; c < 64; ++c) {
      std::getline(cells, cell, ',');
      if (!cell.empty() && cell.back() == '\r') cell.pop_back();
      char want[32];
      for (int prec = 6; prec <= 9; ++prec) {
        std::snprintf(want, sizeof(want), "%.*g", prec, (double)w(r, c));
        if (std::strtof(want, nullptr) == w(r, c)) break;
      }
      EXPECT_EQ(cell, want) << "row " << r << " col " << c;
      EXPECT_EQ(std::strtof(cell.c_str(), nullptr), w(r, c));
    }
  }
}
