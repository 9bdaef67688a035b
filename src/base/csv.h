#pragma once

// An RFC 4180 CSV reader for the accelerator database, override files and
// calibration tables. The whole text is parsed into memory: inputs are small
// (the largest expected is a few hundred KB).

#include <string>
#include <string_view>
#include <vector>

#include "mfu/status.h"

namespace mfu::base {

// A parsed CSV file: the header row and the data rows, each with as many
// fields as the header.
struct CsvTable {
  std::vector<std::string> header;             // column names, trimmed
  std::vector<std::vector<std::string>> rows;  // fields verbatim (not trimmed)
  std::vector<int> line_numbers;               // 1-based line where rows[i] starts
  int header_line = 1;                         // 1-based line of the header row

  // Returns the index of the column named `name` (exact match), or -1.
  int Column(std::string_view name) const;
};

// Parses `text` as CSV: comma-separated fields; fields in double quotes may
// hold commas, newlines and doubled quotes (""); records end in LF, CRLF or
// CR; the last record may lack a newline. A UTF-8 byte order mark is skipped
// and other bytes pass through unchanged. Blank lines are skipped. The first
// record is the header; its names must be non-empty and unique.
//
// Errors (kParse) are one line and start with "`origin`:LINE: ", e.g.
// "x.csv:7: unterminated quoted field" or
// "x.csv:9: row has 5 fields, header has 28".
StatusOr<CsvTable> ParseCsv(std::string_view text, std::string_view origin);

}  // namespace mfu::base
