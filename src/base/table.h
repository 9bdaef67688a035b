#pragma once

// A typed data-table loader: a CSV table described once as a schema of
// columns over a row struct (name, header aliases, unit, bounds, required for
// a new id), parsed with base/csv.h, merged over existing rows all or nothing
// and written back as CSV (parse(write(t)) == t).
//
// Two shapes of table:
//   - keyed (schema.id set): each row has an id; a row whose id exists
//     overrides that row's non-empty cells (an override), a new id adds a row
//     that must give every required column. Ids, and the names `keys` returns,
//     are unique across the table, case-insensitively.
//   - ordered (schema.id unset): every row is appended (kernel-class rules,
//     workloads); there is nothing to override.
//
// Errors are one line and start with "origin:LINE: "; a cell's error with
// "origin:LINE: column 'NAME': ", e.g.
// "my.csv:3: column 'scaleout_gbps_per_gpu': 'x' is not a number".

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/csv.h"
#include "base/strings.h"
#include "mfu/status.h"

namespace mfu::base {

// One side of a numeric column's range. `message` is what a violation says
// after "column 'NAME': ", with "{}" standing for the cell text, e.g.
// "{} must not be negative".
struct Bound {
  double value = 0;
  bool exclusive = false;  // the value itself is out of range
  std::string message;
  StatusCode code = StatusCode::kOutOfRange;
};

struct Bounds {
  std::optional<Bound> min;
  std::optional<Bound> max;

  // [min, max], violations reading "{} is not in [min, max]".
  static Bounds Interval(double min, double max);
  Bounds& Min(double value, std::string message, bool exclusive = false) {
    min = Bound{value, exclusive, std::move(message)};
    return *this;
  }
  Bounds& Max(double value, std::string message, bool exclusive = false) {
    max = Bound{value, exclusive, std::move(message)};
    return *this;
  }
  // Status::Ok, or the violated bound's code and message (text substituted).
  Status Check(double value, std::string_view text) const;
};

// Cell parsers: each returns the message that follows "column 'NAME': ".
// `not_a_number` is the message of text that is not a number ("{}" = text).
StatusOr<double> ParseNumberCell(std::string_view text, const Bounds& bounds,
                                 std::string_view not_a_number = "'{}' is not a number");
StatusOr<int64_t> ParseIntegerCell(std::string_view text, const Bounds& bounds,
                                   std::string_view not_an_integer = "'{}' is not an integer");
// "0" or "1".
StatusOr<bool> ParseBoolCell(std::string_view text);
// `text` split at ';', each item trimmed, empty items dropped.
std::vector<std::string> ParseListCell(std::string_view text);
// `message` with each "{}" replaced by `text`.
std::string Substitute(std::string_view message, std::string_view text);
// kParse unless `id` is lowercase letters, digits, '-', '_' or '.'.
Status CheckSlugId(std::string_view id);
// `field` quoted for CSV when it holds a comma, quote, newline or edge space
// (or always, when `quote`).
std::string CsvField(std::string_view field, bool quote = false);

// The header of a table: the index of each file column in `names` (a column
// may also be spelled by one of its aliases). kParse "origin:LINE: unknown
// column 'x' (did you mean 'y'?)" / "unknown columns 'x', 'y'", "column 'x'
// given twice" (a name and its alias), "missing column 'X'" for a non-empty
// name of `required` the header lacks. `aliases[i]` are the other spellings
// of `names[i]`. With `ignore_unknown`, a column of no name is allowed and
// maps to names.size() (the reader skips it), and a missing column's message
// names the unknown header it looks like: "missing column 'input_len' (the
// header has 'input')".
StatusOr<std::vector<size_t>> MapTableHeader(const CsvTable& table, const std::vector<std::string>& names,
                                             const std::vector<std::vector<std::string>>& aliases,
                                             const std::vector<std::string>& required, const std::string& where,
                                             bool ignore_unknown = false);

// How one column reads into, merges into and writes from a `Row`.
template <typename Row>
struct Column {
  std::string name;                  // the header name, with the unit: "scaleup_gbs_per_gpu"
  std::vector<std::string> aliases;  // other header spellings accepted
  std::string unit;                  // "GB/s", "" for text
  std::string doc;                   // one line for the data README and `--help`
  bool required_for_new = false;     // a new id must give it; an override may omit it
  bool in_header = false;            // the header must name it; its cells may be empty
  bool always_quote = false;         // written in double quotes even when plain (prose)
  bool verbatim = false;             // the cell is not trimmed (a pattern whose spaces matter)
  // Parses trimmed `text` into `row`; the error's message follows "column 'NAME': ".
  std::function<Status(std::string_view text, Row& row)> parse;
  // Copies this column of `from` (an override row) into `to`.
  std::function<void(const Row& from, Row& to)> merge;
  // The cell written back for `row` (unquoted).
  std::function<std::string(const Row& row)> write;

  Column& Required() {
    required_for_new = true;
    return *this;
  }
  Column& InHeader() {
    in_header = true;
    return *this;
  }
  Column& Quoted() {
    always_quote = true;
    return *this;
  }
  Column& Verbatim() {
    verbatim = true;
    return *this;
  }
  Column& Aliases(std::vector<std::string> names) {
    aliases = std::move(names);
    return *this;
  }
  Column& Unit(std::string u, std::string d = "") {
    unit = std::move(u);
    doc = std::move(d);
    return *this;
  }
};

// A row read as text, cell by column name: for a reader that interprets its
// cells itself (kernel figures, whose columns depend on the row's kind;
// training runs, whose rows are skipped with a reason; operator profiles,
// one row of several samples). The loader still checks the header, reads
// the CSV, trims the cells and locates each row ("origin:LINE").
struct TextCells {
  std::map<std::string, std::string, std::less<>> cells;
  // The trimmed cell of `column`, "" when empty or when the header lacks it.
  std::string_view Get(std::string_view column) const {
    auto it = cells.find(column);
    return it == cells.end() ? std::string_view() : std::string_view(it->second);
  }
};

// A reference to one field of a row: a member pointer or any accessor.
template <typename Row, typename T>
using Field = std::function<T&(Row&)>;

template <typename Row, typename T>
Field<Row, T> Member(T Row::*member) {
  return [member](Row& row) -> T& { return row.*member; };
}

namespace table_internal {
template <typename Row, typename T>
Column<Row> Make(std::string name, Field<Row, T> field, std::function<StatusOr<T>(std::string_view)> parse,
                 std::function<std::string(const T&)> write) {
  Column<Row> c;
  c.name = std::move(name);
  c.parse = [field, parse](std::string_view text, Row& row) -> Status {
    MFU_ASSIGN_OR_RETURN(field(row), parse(text));
    return Status::Ok();
  };
  c.merge = [field](const Row& from, Row& to) { field(to) = field(const_cast<Row&>(from)); };
  c.write = [field, write](const Row& row) { return write(field(const_cast<Row&>(row))); };
  return c;
}
}  // namespace table_internal

// Text, stored as given (trimmed).
template <typename Row>
Column<Row> TextColumn(std::string name, std::string Row::*member) {
  return table_internal::Make<Row, std::string>(
      std::move(name), Member(member), [](std::string_view t) -> StatusOr<std::string> { return std::string(t); },
      [](const std::string& v) { return v; });
}

// Lowercased text; when `allowed` is not empty, one of those words (else
// kParse "'x' is not `what`").
template <typename Row>
Column<Row> WordColumn(std::string name, std::string Row::*member, std::vector<std::string> allowed = {},
                       std::string what = "") {
  Column<Row> c = TextColumn(std::move(name), member);
  c.parse = [member, allowed, what](std::string_view text, Row& row) -> Status {
    std::string word = ToLower(text);
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), word) == allowed.end())
      return ParseError("'" + word + "' is not " + what);
    row.*member = std::move(word);
    return Status::Ok();
  };
  return c;
}

// A finite number within `bounds`, stored as `scale` x the file value (the
// column's unit to the struct's: 1e9 for GB/s -> bytes/s).
template <typename Row>
Column<Row> NumberColumn(std::string name, Field<Row, double> field, Bounds bounds, double scale = 1,
                         std::string not_a_number = "'{}' is not a number") {
  return table_internal::Make<Row, double>(
      std::move(name), std::move(field),
      [bounds, scale, not_a_number](std::string_view t) -> StatusOr<double> {
        MFU_ASSIGN_OR_RETURN(double v, ParseNumberCell(t, bounds, not_a_number));
        return v * scale;
      },
      [scale](const double& v) { return FormatNumber(v / scale); });
}
template <typename Row>
Column<Row> NumberColumn(std::string name, double Row::*member, Bounds bounds, double scale = 1) {
  return NumberColumn<Row>(std::move(name), Member(member), std::move(bounds), scale);
}

// An integer within `bounds` (int, int64_t, ...).
template <typename Row, typename T>
Column<Row> IntegerColumn(std::string name, T Row::*member, Bounds bounds,
                          std::string not_an_integer = "'{}' is not an integer") {
  return table_internal::Make<Row, T>(
      std::move(name), Member(member),
      [bounds, not_an_integer](std::string_view t) -> StatusOr<T> {
        MFU_ASSIGN_OR_RETURN(int64_t v, ParseIntegerCell(t, bounds, not_an_integer));
        return static_cast<T>(v);
      },
      [](const T& v) { return std::to_string(v); });
}

// 0 or 1.
template <typename Row>
Column<Row> BoolColumn(std::string name, bool Row::*member) {
  return table_internal::Make<Row, bool>(
      std::move(name), Member(member), [](std::string_view t) { return ParseBoolCell(t); },
      [](const bool& v) { return std::string(v ? "1" : "0"); });
}

// An enumeration: `parse` reads a cell (its error message follows "column
// 'NAME': "), `name` writes one back.
template <typename Row, typename E>
Column<Row> EnumColumn(std::string name, E Row::*member, std::function<StatusOr<E>(std::string_view)> parse,
                       std::function<std::string(E)> write) {
  return table_internal::Make<Row, E>(std::move(name), Member(member), std::move(parse),
                                      [write](const E& v) { return write(v); });
}

// A ';'-separated list. An override appends the items the row lacks (so an
// override file can add a name without losing the built-in ones). `check`
// validates each item (its message follows "column 'NAME': ").
template <typename Row>
Column<Row> ListColumn(std::string name, std::vector<std::string> Row::*member,
                       std::function<Status(const std::string&)> check = nullptr) {
  Column<Row> c;
  c.name = std::move(name);
  c.parse = [member, check](std::string_view text, Row& row) -> Status {
    for (std::string& item : ParseListCell(text)) {
      if (check)
        MFU_RETURN_IF_ERROR(check(item));
      (row.*member).push_back(std::move(item));
    }
    return Status::Ok();
  };
  c.merge = [member](const Row& from, Row& to) {
    for (const std::string& item : from.*member) {
      if (std::find((to.*member).begin(), (to.*member).end(), item) == (to.*member).end())
        (to.*member).push_back(item);
    }
  };
  c.write = [member](const Row& row) { return Join(row.*member, ";"); };
  return c;
}

template <typename Row>
struct TableSchema {
  std::string noun = "row";  // "cluster": what a row is, in messages
  // The id column (keyed tables): its name and where it lives; unset for an
  // ordered table. The id column is columns[0] of a keyed table's file.
  std::string id_column;
  std::string Row::*id = nullptr;
  bool lowercase_id = false;  // ids are lowercased when read
  // Validates a (non-empty) id; the message follows "column 'ID': ".
  std::function<Status(std::string_view id)> check_id;
  std::vector<Column<Row>> columns;  // in file order, the id column first
  // Empty cells: true (hardware, clusters) leaves them unset, so an override
  // changes only what it gives; false parses every cell, "" included (a
  // number column then rejects an empty cell).
  bool skip_empty_cells = true;
  // Columns of no name: false rejects them ("unknown column", with a
  // did-you-mean); true skips them (a file exported with extra columns, e.g.
  // a user's workload or rules with notes).
  bool ignore_unknown_columns = false;
  // The names that must each find one row (besides the id), e.g. aliases,
  // compared case-insensitively; the id alone when unset.
  std::function<std::vector<std::string>(const Row&)> keys;
  // What a new id starts from (e.g. a default row's values), given the rows
  // as they were before this file; Row{} when unset.
  std::function<Row(const std::vector<Row>& rows)> new_row;
  // Checks what no single cell can, after a row is merged; the message is
  // whole (the hook gets "origin:LINE").
  std::function<Status(const Row& row, const std::string& where)> validate;
  // The message (after "origin:LINE: ") when a new id lacks `column`; by
  // default "column 'C': required for the new NOUN 'ID' (an override needs an
  // existing id)". `ids` are the table's ids, for a did-you-mean.
  std::function<std::string(const std::string& id, const std::string& column, const std::vector<std::string>& ids)>
      missing_required;

  bool keyed() const { return id != nullptr; }
};

// An ordered table of text cells (TextCells): `in_header` columns must be in
// the header (their cells may be empty), `optional` ones may be absent; any
// other column is rejected with a did-you-mean, or skipped with
// `ignore_unknown` (an export whose other columns describe the row).
TableSchema<TextCells> TextCellsSchema(const std::vector<std::string>& in_header,
                                       const std::vector<std::string>& optional = {}, bool ignore_unknown = false);

// A keyed table of `noun`s whose id lives in column `id_column`, member `id`.
template <typename Row>
TableSchema<Row> KeyedSchema(std::string noun, std::string id_column, std::string Row::*id) {
  TableSchema<Row> s;
  s.noun = std::move(noun);
  s.id_column = std::move(id_column);
  s.id = id;
  return s;
}

// Whether new ids must give every required column (a user's file) or not (a
// table built from scratch, whose rows are all new).
enum class MergeMode { kOverride, kBase };

// One row of a file as read: its cells parsed over Row{}.
template <typename Row>
struct TableRow {
  Row value;
  std::vector<size_t> set;  // schema column indices with a cell
  int line = 0;
  std::string where;  // "origin:LINE", the prefix of errors about this row

  // Copies the cells this row gave into `target` (an override).
  void MergeInto(const TableSchema<Row>& schema, Row& target) const {
    for (size_t c : set)
      schema.columns[c].merge(value, target);
  }
};

// The rows of `text` as read, before any merge: the header checked, every
// cell parsed, ids (of a keyed table) present, valid and unique in the file.
// For a table that joins its rows to other data itself (errors name
// row.where).
template <typename Row>
StatusOr<std::vector<TableRow<Row>>> ParseTableRows(const TableSchema<Row>& schema, std::string_view text,
                                                    std::string_view origin) {
  MFU_ASSIGN_OR_RETURN(CsvTable table, ParseCsv(text, origin));
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> aliases;
  std::vector<std::string> required = {schema.id_column};
  for (const Column<Row>& c : schema.columns) {
    names.push_back(c.name);
    aliases.push_back(c.aliases);
    if ((!schema.keyed() && c.required_for_new) || c.in_header)
      required.push_back(c.name);
  }
  MFU_ASSIGN_OR_RETURN(
      std::vector<size_t> map,
      MapTableHeader(table, names, aliases, required, std::string(origin) + ":" + std::to_string(table.header_line),
                     schema.ignore_unknown_columns));
  std::vector<TableRow<Row>> rows;
  std::map<std::string, int> first_line;  // id -> line
  for (size_t r = 0; r < table.rows.size(); ++r) {
    TableRow<Row> row;
    row.line = table.line_numbers[r];
    row.where = std::string(origin) + ":" + std::to_string(row.line);
    for (size_t i = 0; i < table.header.size(); ++i) {
      if (map[i] == schema.columns.size())
        continue;  // an unknown column the schema ignores
      const Column<Row>& column = schema.columns[map[i]];
      std::string_view cell = column.verbatim ? std::string_view(table.rows[r][i]) : Trim(table.rows[r][i]);
      if (cell.empty() && schema.skip_empty_cells)
        continue;
      std::string lowered;
      if (schema.keyed() && column.name == schema.id_column && schema.lowercase_id) {
        lowered = ToLower(cell);
        cell = lowered;
      }
      if (Status s = column.parse(cell, row.value); !s.ok())
        return Status(s.code(), row.where + ": column '" + column.name + "': " + s.message());
      row.set.push_back(map[i]);
    }
    for (size_t c = 0; c < schema.columns.size() && !schema.keyed(); ++c) {
      const bool given = std::find(row.set.begin(), row.set.end(), c) != row.set.end();
      if (schema.columns[c].required_for_new && !given)
        return ParseError(row.where + ": column '" + schema.columns[c].name + "' is empty");
    }
    if (schema.keyed()) {
      const std::string& id = row.value.*schema.id;
      if (id.empty())
        return ParseError(row.where + ": column '" + schema.id_column + "' is empty");
      if (schema.check_id) {
        if (Status s = schema.check_id(id); !s.ok())
          return Status(s.code(), row.where + ": column '" + schema.id_column + "': " + s.message());
      }
      auto [it, inserted] = first_line.emplace(id, row.line);
      if (!inserted) {
        return ParseError(row.where + ": duplicate " + schema.id_column + " '" + id + "' (first on line " +
                          std::to_string(it->second) + ")");
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace table_internal {

// Fails when one key names two rows. `where[i]` locates row i ("" for rows
// already validated); the error names the located one.
template <typename Row>
Status CheckUniqueKeys(const TableSchema<Row>& schema, const std::vector<Row>& rows,
                       const std::vector<std::string>& where) {
  std::map<std::string, size_t> owner;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string> keys = schema.keys ? schema.keys(rows[i]) : std::vector{rows[i].*schema.id};
    for (const std::string& key : keys) {
      auto [it, inserted] = owner.emplace(ToLower(key), i);
      if (inserted || it->second == i)
        continue;
      size_t first = it->second;
      const std::string& location = where[i].empty() ? where[first] : where[i];
      return ParseError(location + ": '" + key + "' names both '" + rows[first].*schema.id + "' and '" +
                        rows[i].*schema.id + "'");
    }
  }
  return Status::Ok();
}

template <typename Row>
Status CheckRequired(const TableSchema<Row>& schema, const TableRow<Row>& row, const std::vector<Row>& rows) {
  for (size_t c = 0; c < schema.columns.size(); ++c) {
    const Column<Row>& column = schema.columns[c];
    if (!column.required_for_new || std::find(row.set.begin(), row.set.end(), c) != row.set.end())
      continue;
    const std::string& id = row.value.*schema.id;
    if (schema.missing_required) {
      std::vector<std::string> ids;
      for (const Row& r : rows)
        ids.push_back(r.*schema.id);
      return ParseError(row.where + ": " + schema.missing_required(id, column.name, ids));
    }
    return ParseError(row.where + ": column '" + column.name + "': required for the new " + schema.noun + " '" + id +
                      "' (an override needs an existing id)");
  }
  return Status::Ok();
}

}  // namespace table_internal

// Merges the CSV `text` into `rows`: see the top of this file. All or
// nothing: on error `rows` is unchanged. kParse for malformed CSV, unknown or
// missing columns, bad cells, duplicate ids or keys, a new id lacking a
// required column; kOutOfRange for a value outside its bounds; and what
// schema.validate returns.
template <typename Row>
Status MergeTableCsv(const TableSchema<Row>& schema, std::vector<Row>& rows, std::string_view text,
                     std::string_view origin, MergeMode mode = MergeMode::kOverride) {
  MFU_ASSIGN_OR_RETURN(std::vector<TableRow<Row>> parsed, ParseTableRows(schema, text, origin));
  // Merge into a copy so that a failed merge leaves `rows` unchanged.
  std::vector<Row> merged = rows;
  std::vector<std::string> where(merged.size());
  for (TableRow<Row>& row : parsed) {
    auto it = merged.end();
    if (schema.keyed()) {
      it = std::find_if(merged.begin(), merged.end(),
                        [&](const Row& r) { return r.*schema.id == row.value.*schema.id; });
    }
    if (it != merged.end()) {
      row.MergeInto(schema, *it);
      if (schema.validate)
        MFU_RETURN_IF_ERROR(schema.validate(*it, row.where));
      where[static_cast<size_t>(it - merged.begin())] = row.where;
      continue;
    }
    if (schema.keyed() && mode == MergeMode::kOverride)
      MFU_RETURN_IF_ERROR(table_internal::CheckRequired(schema, row, merged));
    if (schema.new_row) {
      Row fresh = schema.new_row(rows);
      row.MergeInto(schema, fresh);
      row.value = std::move(fresh);
    }
    if (schema.validate)
      MFU_RETURN_IF_ERROR(schema.validate(row.value, row.where));
    merged.push_back(std::move(row.value));
    where.push_back(std::move(row.where));
  }
  if (schema.keyed())
    MFU_RETURN_IF_ERROR(table_internal::CheckUniqueKeys(schema, merged, where));
  rows = std::move(merged);
  return Status::Ok();
}

// The rows of `text` as a table of their own (MergeMode::kBase).
template <typename Row>
StatusOr<std::vector<Row>> ParseTableCsv(const TableSchema<Row>& schema, std::string_view text,
                                         std::string_view origin) {
  std::vector<Row> rows;
  MFU_RETURN_IF_ERROR(MergeTableCsv(schema, rows, text, origin, MergeMode::kBase));
  return rows;
}

// `rows` as CSV with every column of the schema, in schema order.
template <typename Row>
std::string WriteTableCsv(const TableSchema<Row>& schema, const std::vector<Row>& rows) {
  std::string out;
  for (size_t c = 0; c < schema.columns.size(); ++c)
    out.append(c ? "," : "").append(CsvField(schema.columns[c].name));
  out += "\n";
  for (const Row& row : rows) {
    for (size_t c = 0; c < schema.columns.size(); ++c)
      out.append(c ? "," : "").append(CsvField(schema.columns[c].write(row), schema.columns[c].always_quote));
    out += "\n";
  }
  return out;
}

// The row whose id equals `id` case-insensitively, or nullptr.
template <typename Row>
const Row* FindTableRow(const TableSchema<Row>& schema, const std::vector<Row>& rows, std::string_view id) {
  const std::string key = ToLower(Trim(id));
  for (const Row& row : rows) {
    if (ToLower(row.*schema.id) == key)
      return &row;
  }
  return nullptr;
}

}  // namespace mfu::base
