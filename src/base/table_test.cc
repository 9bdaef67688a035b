#include "base/table.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mfu::base {
namespace {

enum class Color { kRed, kGreen };

StatusOr<Color> ParseColor(std::string_view text) {
  if (text == "red")
    return Color::kRed;
  if (text == "green")
    return Color::kGreen;
  return ParseError("'" + std::string(text) + "' is not red or green");
}

// A row with one column of every type.
struct Pump {
  std::string id;
  std::vector<std::string> aliases;
  std::string name;
  int64_t ports = 0;
  double flow_lps = 0;  // litres/s; the file says ml/s
  bool sealed = false;
  Color color = Color::kRed;
  std::string notes;

  bool operator==(const Pump&) const = default;
};

const TableSchema<Pump>& Schema() {
  static const TableSchema<Pump> schema = [] {
    TableSchema<Pump> s;
    s.noun = "pump";
    s.id_column = "id";
    s.id = &Pump::id;
    s.check_id = CheckSlugId;
    s.keys = [](const Pump& p) {
      std::vector<std::string> keys = {p.id};
      keys.insert(keys.end(), p.aliases.begin(), p.aliases.end());
      return keys;
    };
    s.validate = [](const Pump& p, const std::string& where) {
      if (p.sealed && p.ports > 2)
        return OutOfRangeError(where + ": a sealed pump has at most 2 ports");
      return Status::Ok();
    };
    s.columns = {
        TextColumn("id", &Pump::id),
        ListColumn<Pump>("aliases", &Pump::aliases),
        TextColumn("name", &Pump::name).Required().Aliases({"title"}),
        IntegerColumn("ports", &Pump::ports, Bounds().Min(1, "{} must be positive").Max(64, "{} is over 64")),
        NumberColumn("flow_mlps", &Pump::flow_lps, Bounds::Interval(0, 5000), 1e-3).Unit("ml/s").Required(),
        BoolColumn("sealed", &Pump::sealed),
        EnumColumn<Pump, Color>("color", &Pump::color, ParseColor,
                                [](Color c) { return std::string(c == Color::kRed ? "red" : "green"); }),
        TextColumn("notes", &Pump::notes),
    };
    return s;
  }();
  return schema;
}

const char kBase[] =
    "id,aliases,name,ports,flow_mlps,sealed,color,notes\n"
    "p1,one;first,Pump One,2,1500,1,green,\"small, quiet\"\n"
    "p2,,Pump Two,8,250,0,red,\n";

std::vector<Pump> Base() {
  StatusOr<std::vector<Pump>> rows = ParseTableCsv(Schema(), kBase, "base.csv");
  EXPECT_TRUE(rows.ok()) << rows.status().message();
  return rows.ok() ? *rows : std::vector<Pump>{};
}

// The error of merging `csv` into Base(), which must leave it unchanged.
Status MergeError(const std::string& csv) {
  std::vector<Pump> rows = Base();
  Status s = MergeTableCsv(Schema(), rows, csv, "my.csv");
  EXPECT_EQ(rows, Base()) << csv;
  EXPECT_FALSE(s.ok()) << csv;
  return s;
}

TEST(Table, ParsesEveryColumnType) {
  std::vector<Pump> rows = Base();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].id, "p1");
  EXPECT_EQ(rows[0].aliases, (std::vector<std::string>{"one", "first"}));
  EXPECT_EQ(rows[0].name, "Pump One");
  EXPECT_EQ(rows[0].ports, 2);
  EXPECT_DOUBLE_EQ(rows[0].flow_lps, 1.5);
  EXPECT_TRUE(rows[0].sealed);
  EXPECT_EQ(rows[0].color, Color::kGreen);
  EXPECT_EQ(rows[0].notes, "small, quiet");  // a quoted cell with a comma
  EXPECT_TRUE(rows[1].aliases.empty());
  EXPECT_EQ(rows[1].color, Color::kRed);
  EXPECT_EQ(FindTableRow(Schema(), rows, " P2 "), &rows[1]);
  EXPECT_EQ(FindTableRow(Schema(), rows, "p3"), nullptr);
}

TEST(Table, OverrideChangesOnlyGivenCellsAndAppendsAliases) {
  std::vector<Pump> rows = Base();
  ASSERT_TRUE(MergeTableCsv(Schema(), rows, "id,aliases,ports,notes\np2,deux,4,\n", "my.csv").ok());
  EXPECT_EQ(rows[1].ports, 4);
  EXPECT_EQ(rows[1].name, "Pump Two");  // not in the file
  EXPECT_DOUBLE_EQ(rows[1].flow_lps, 0.25);
  EXPECT_EQ(rows[1].aliases, (std::vector<std::string>{"deux"}));
  ASSERT_TRUE(MergeTableCsv(Schema(), rows, "id,aliases\np2,deux;zwei\n", "my.csv").ok());
  EXPECT_EQ(rows[1].aliases, (std::vector<std::string>{"deux", "zwei"}));
}

TEST(Table, NewIdNeedsRequiredColumns) {
  std::vector<Pump> rows = Base();
  ASSERT_TRUE(MergeTableCsv(Schema(), rows, "id,title,flow_mlps\np3,Pump Three,10\n", "my.csv").ok());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].name, "Pump Three");  // through the header alias 'title'
  EXPECT_DOUBLE_EQ(rows[2].flow_lps, 0.01);
  EXPECT_EQ(MergeError("id,name\np4,Pump Four\n").message(),
            "my.csv:2: column 'flow_mlps': required for the new pump 'p4' (an override needs an existing id)");
  // A table built from scratch needs none.
  EXPECT_TRUE(ParseTableCsv(Schema(), "id\np9\n", "t.csv").ok());
}

TEST(Table, CellErrorsNameFileLineAndColumn) {
  Status s = MergeError("id,flow_mlps\np1,fast\n");
  EXPECT_EQ(s.code(), StatusCode::kParse);
  EXPECT_EQ(s.message(), "my.csv:2: column 'flow_mlps': 'fast' is not a number");
  s = MergeError("id,flow_mlps\np1,6000\n");
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "my.csv:2: column 'flow_mlps': 6000 is not in [0, 5000]");
  EXPECT_EQ(MergeError("id,ports\np1,0\n").message(), "my.csv:2: column 'ports': 0 must be positive");
  EXPECT_EQ(MergeError("id,ports\np1,65\n").message(), "my.csv:2: column 'ports': 65 is over 64");
  EXPECT_EQ(MergeError("id,ports\np1,2.5\n").message(), "my.csv:2: column 'ports': '2.5' is not an integer");
  EXPECT_EQ(MergeError("id,sealed\np1,yes\n").message(), "my.csv:2: column 'sealed': 'yes' is not 0 or 1");
  EXPECT_EQ(MergeError("id,color\np1,blue\n").message(), "my.csv:2: column 'color': 'blue' is not red or green");
  EXPECT_EQ(MergeError("id,ports\nP1,2\n").message(),
            "my.csv:2: column 'id': 'P1' must be lowercase letters, digits, '-', '_' or '.'");
  EXPECT_EQ(MergeError("id,ports\n,2\n").message(), "my.csv:2: column 'id' is empty");
  // The row validator runs on the merged row.
  EXPECT_EQ(MergeError("id,ports\np1,3\n").message(), "my.csv:2: a sealed pump has at most 2 ports");
}

TEST(Table, AllOrNothingOnABadSecondRow) {
  EXPECT_EQ(MergeError("id,ports\np1,4\np2,x\n").code(), StatusCode::kParse);  // p1's change is not kept
  EXPECT_EQ(MergeError("id,name,flow_mlps\np5,Five,1\np6,Six,-1\n").code(), StatusCode::kOutOfRange);
}

TEST(Table, HeaderErrors) {
  EXPECT_EQ(MergeError("id,port\np1,2\n").message(), "my.csv:1: unknown column 'port' (did you mean 'ports'?)");
  EXPECT_EQ(MergeError("id,foo,bar\np1,1,2\n").message(), "my.csv:1: unknown columns 'foo', 'bar'");
  EXPECT_EQ(MergeError("name,ports\nx,2\n").message(), "my.csv:1: missing column 'id'");
  EXPECT_EQ(MergeError("id,name,title\np1,a,b\n").message(), "my.csv:1: column 'name' given twice (as 'title')");
}

TEST(Table, DuplicateIdsAndKeys) {
  EXPECT_EQ(MergeError("id,ports\np1,2\np2,3\np1,4\n").message(), "my.csv:4: duplicate id 'p1' (first on line 2)");
  // An alias of one row naming another, case-insensitively.
  EXPECT_EQ(MergeError("id,aliases\np2,ONE\n").message(), "my.csv:2: 'ONE' names both 'p1' and 'p2'");
  EXPECT_EQ(ParseTableCsv(Schema(), "id,aliases\na,x\nb,X\n", "t.csv").status().message(),
            "t.csv:3: 'X' names both 'a' and 'b'");
}

TEST(Table, EmptyFileAndHeaderOnly) {
  EXPECT_EQ(MergeError("").message(), "my.csv:1: empty file (no header row)");
  std::vector<Pump> rows = Base();
  ASSERT_TRUE(MergeTableCsv(Schema(), rows, "id,ports\n", "my.csv").ok());
  EXPECT_EQ(rows, Base());
}

TEST(Table, WritesBackWhatItReads) {
  std::vector<Pump> rows = Base();
  ASSERT_TRUE(
      MergeTableCsv(Schema(), rows, "id,name,ports,flow_mlps,notes\np3,\"Three, \"\"big\"\"\",3,0.5,\n", "my.csv")
          .ok());
  const std::string csv = WriteTableCsv(Schema(), rows);
  EXPECT_EQ(csv,
            "id,aliases,name,ports,flow_mlps,sealed,color,notes\n"
            "p1,one;first,Pump One,2,1500,1,green,\"small, quiet\"\n"
            "p2,,Pump Two,8,250,0,red,\n"
            "p3,,\"Three, \"\"big\"\"\",3,0.5,0,red,\n");
  StatusOr<std::vector<Pump>> again = ParseTableCsv(Schema(), csv, "again.csv");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, rows);
}

// An ordered table (no ids): every row is appended; a required column must
// be in the header and non-empty.
struct Workload {
  int64_t input_len = 0;
  int64_t output_len = 0;
  double rate = 1;
  bool operator==(const Workload&) const = default;
};

TEST(Table, OrderedTable) {
  TableSchema<Workload> s;
  s.columns = {
      IntegerColumn("input_len", &Workload::input_len, Bounds().Min(1, "{} must be positive")).Required(),
      IntegerColumn("output_len", &Workload::output_len, Bounds().Min(1, "{} must be positive")).Required(),
      NumberColumn("rate", &Workload::rate, Bounds().Min(0, "{} must be positive", true)),
  };
  StatusOr<std::vector<Workload>> rows = ParseTableCsv(s, "input_len,output_len,rate\n128,16,2\n128,16,\n", "w.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_EQ(*rows, (std::vector<Workload>{{128, 16, 2}, {128, 16, 1}}));
  std::vector<Workload> more = *rows;
  ASSERT_TRUE(MergeTableCsv(s, more, "output_len,input_len\n4,8\n", "w.csv").ok());
  EXPECT_EQ(more.back(), (Workload{8, 4, 1}));
  EXPECT_EQ(ParseTableCsv(s, "input_len\n1\n", "w.csv").status().message(), "w.csv:1: missing column 'output_len'");
  EXPECT_EQ(ParseTableCsv(s, "input_len,output_len\n1,\n", "w.csv").status().message(),
            "w.csv:2: column 'output_len' is empty");
  EXPECT_EQ(ParseTableCsv(s, "input_len,output_len,rate\n1,1,0\n", "w.csv").status().message(),
            "w.csv:2: column 'rate': 0 must be positive");
  StatusOr<std::vector<Workload>> again = ParseTableCsv(s, WriteTableCsv(s, more), "again.csv");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, more);
}

// ignore_unknown_columns: other columns are skipped (not parsed), a missing
// column points at the header it looks like; a verbatim column keeps its
// spaces while the others are trimmed.
struct Rule {
  std::string pattern;
  std::string note;
  bool operator==(const Rule&) const = default;
};

TEST(Table, IgnoredColumnsAndVerbatimCells) {
  TableSchema<Rule> s;
  s.ignore_unknown_columns = true;
  s.columns = {TextColumn("pattern", &Rule::pattern).Required().Verbatim(), TextColumn("note", &Rule::note)};
  StatusOr<std::vector<Rule>> rows = ParseTableCsv(s, "id,pattern,note,extra\n1, a b , x ,not a number\n", "r.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_EQ(*rows, (std::vector<Rule>{{" a b ", "x"}}));
  EXPECT_EQ(ParseTableCsv(s, "patern,note\na,b\n", "r.csv").status().message(),
            "r.csv:1: missing column 'pattern' (the header has 'patern')");
  EXPECT_EQ(ParseTableCsv(s, "note\nb\n", "r.csv").status().message(), "r.csv:1: missing column 'pattern'");
  s.ignore_unknown_columns = false;
  EXPECT_EQ(ParseTableCsv(s, "pattern,extra\na,b\n", "r.csv").status().message(), "r.csv:1: unknown column 'extra'");
}

// TextCellsSchema: a reader that interprets its cells itself. In-header
// columns must be named (their cells may be empty), optional ones may be
// absent, and each row keeps its trimmed cells and its location.
TEST(Table, TextCells) {
  const TableSchema<TextCells> s = TextCellsSchema({"id", "kind"}, {"notes"});
  StatusOr<std::vector<TableRow<TextCells>>> rows = ParseTableRows(s, "id,kind\n a ,\nb,gemm\n", "t.csv");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].value.Get("id"), "a");
  EXPECT_EQ((*rows)[0].value.Get("kind"), "");   // empty, yet in the header
  EXPECT_EQ((*rows)[0].value.Get("notes"), "");  // not in the header
  EXPECT_EQ((*rows)[1].where, "t.csv:3");
  EXPECT_EQ((*rows)[1].value.Get("kind"), "gemm");
  EXPECT_EQ(ParseTableRows(s, "id,notes\na,b\n", "t.csv").status().message(), "t.csv:1: missing column 'kind'");
  EXPECT_EQ(ParseTableRows(s, "id,knd\na,b\n", "t.csv").status().message(),
            "t.csv:1: unknown column 'knd' (did you mean 'kind'?)");
  const TableSchema<TextCells> lenient = TextCellsSchema({"id", "kind"}, {}, /*ignore_unknown=*/true);
  EXPECT_EQ(ParseTableRows(lenient, "id,knd\na,b\n", "t.csv").status().message(),
            "t.csv:1: missing column 'kind' (the header has 'knd')");
}

}  // namespace
}  // namespace mfu::base
