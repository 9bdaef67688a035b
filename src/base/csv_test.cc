#include "base/csv.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mfu::base {
namespace {

using Row = std::vector<std::string>;

CsvTable MustParse(std::string_view text) {
  StatusOr<CsvTable> table = ParseCsv(text, "t.csv");
  EXPECT_TRUE(table.ok()) << table.status().message();
  return table.ok() ? *table : CsvTable{};
}

std::string ErrorOf(std::string_view text) {
  StatusOr<CsvTable> table = ParseCsv(text, "t.csv");
  EXPECT_FALSE(table.ok());
  if (table.ok())
    return "";
  EXPECT_EQ(table.status().code(), StatusCode::kParse);
  return table.status().message();
}

TEST(CsvTest, PlainRowsWithTrailingNewline) {
  CsvTable t = MustParse("a,b,c\n1,2,3\n4,5,6\n");
  EXPECT_EQ(t.header, (Row{"a", "b", "c"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0], (Row{"1", "2", "3"}));
  EXPECT_EQ(t.rows[1], (Row{"4", "5", "6"}));
  EXPECT_EQ(t.line_numbers, (std::vector<int>{2, 3}));
}

TEST(CsvTest, NoTrailingNewline) {
  CsvTable t = MustParse("a,b\n1,2");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0], (Row{"1", "2"}));
}

TEST(CsvTest, EmptyFieldsIncludingLast) {
  CsvTable t = MustParse("a,b,c\n,,\n1,,\n");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0], (Row{"", "", ""}));
  EXPECT_EQ(t.rows[1], (Row{"1", "", ""}));
}

TEST(CsvTest, TrailingCommaAtEndOfInput) {
  CsvTable t = MustParse("a,b\n1,");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0], (Row{"1", ""}));
}

TEST(CsvTest, QuotedFieldsWithCommasQuotesAndNewlines) {
  CsvTable t = MustParse(
      "name,note\n"
      "\"H100, SXM\",\"say \"\"hi\"\"\"\n"
      "x,\"two\nlines\"\n"
      "y,\"\"\n");
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0], (Row{"H100, SXM", "say \"hi\""}));
  EXPECT_EQ(t.rows[1], (Row{"x", "two\nlines"}));
  EXPECT_EQ(t.rows[2], (Row{"y", ""}));
  // A row after a multi-line field reports its own physical line.
  EXPECT_EQ(t.line_numbers, (std::vector<int>{2, 3, 5}));
}

TEST(CsvTest, CrLfLineEndings) {
  CsvTable t = MustParse("a,b\r\n1,2\r\n\"x\r\ny\",3\r\n");
  EXPECT_EQ(t.header, (Row{"a", "b"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0], (Row{"1", "2"}));
  EXPECT_EQ(t.rows[1], (Row{"x\r\ny", "3"}));
  EXPECT_EQ(t.line_numbers, (std::vector<int>{2, 3}));
}

TEST(CsvTest, Utf8PassesThroughAndBomIsSkipped) {
  CsvTable t = MustParse(
      "\xEF\xBB\xBFname,unit\nGr\xC3\xB6\xC3\x9F"
      "e,\xC2\xB5s\n");
  EXPECT_EQ(t.header, (Row{"name", "unit"}));
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0], (Row{"Gr\xC3\xB6\xC3\x9F"
                            "e",
                            "\xC2\xB5s"}));
}

TEST(CsvTest, BlankLinesAreSkippedButCounted) {
  CsvTable t = MustParse("\na,b\n\n1,2\n\n\n3,4\n\n");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.header_line, 2);
  EXPECT_EQ(t.line_numbers, (std::vector<int>{4, 7}));
}

TEST(CsvTest, HeaderNamesAreTrimmedAndLookedUp) {
  CsvTable t = MustParse(" id , bf16_tflops\nh100,989.4\n");
  EXPECT_EQ(t.Column("id"), 0);
  EXPECT_EQ(t.Column("bf16_tflops"), 1);
  EXPECT_EQ(t.Column("fp8_tflops"), -1);
  // Fields are verbatim: the caller decides whether to trim.
  CsvTable u = MustParse("a\n  x  \n");
  EXPECT_EQ(u.rows[0], (Row{"  x  "}));
}

TEST(CsvTest, StrayQuoteInsideUnquotedFieldIsLiteral) {
  CsvTable t = MustParse("a,b\n12\" disk,2\n");
  EXPECT_EQ(t.rows[0], (Row{"12\" disk", "2"}));
}

TEST(CsvTest, UnterminatedQuoteNamesTheLineItStarts) {
  EXPECT_EQ(ErrorOf("a,b\n1,2\n3,\"open\n4,5\n"), "t.csv:3: unterminated quoted field");
}

TEST(CsvTest, TextAfterClosingQuoteIsAnError) {
  EXPECT_EQ(ErrorOf("a,b\n1,\"x\"y\n"), "t.csv:2: field 2: unexpected text after closing quote");
}

TEST(CsvTest, WrongFieldCountNamesLineAndCounts) {
  EXPECT_EQ(ErrorOf("a,b,c\n1,2,3\n1,2\n"), "t.csv:3: row has 2 fields, header has 3");
  EXPECT_EQ(ErrorOf("a,b\n\"x\ny\",2\n1,2,3\n"), "t.csv:4: row has 3 fields, header has 2");
}

TEST(CsvTest, EmptyInputAndBadHeaders) {
  EXPECT_EQ(ErrorOf(""), "t.csv:1: empty file (no header row)");
  EXPECT_EQ(ErrorOf("\n\r\n"), "t.csv:1: empty file (no header row)");
  EXPECT_EQ(ErrorOf("a,,c\n"), "t.csv:1: empty column name (column 2)");
  EXPECT_EQ(ErrorOf("a,b,a\n"), "t.csv:1: duplicate column 'a'");
}

TEST(CsvTest, HeaderOnlyHasNoRows) {
  CsvTable t = MustParse("a,b\n");
  EXPECT_EQ(t.header.size(), 2u);
  EXPECT_TRUE(t.rows.empty());
}

TEST(CsvTest, LargeInputParses) {
  // Calibration CSVs are ~200 KB; make sure a table that size is handled.
  std::string text = "run,model,mfu\n";
  for (int i = 0; i < 5000; ++i) {
    text += std::to_string(i) + ",\"llama, 70b\",0." + std::to_string(i % 100) + "\n";
  }
  CsvTable t = MustParse(text);
  ASSERT_EQ(t.rows.size(), 5000u);
  EXPECT_EQ(t.rows[4999][1], "llama, 70b");
  EXPECT_EQ(t.line_numbers.back(), 5001);
}

}  // namespace
}  // namespace mfu::base
