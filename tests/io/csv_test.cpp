// CSV export of a weight matrix: header of tokens, exact numbers, quoting, formula guard.
#include "io/csv.h"

#include <gtest/gtest.h>

#include <cstdlib>
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
