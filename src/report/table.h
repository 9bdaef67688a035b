#pragma once

// A plain-text table for terminal output: columns padded to their widest
// cell, numbers right-aligned.

#include <iosfwd>
#include <string>
#include <vector>

namespace mfu::report {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void AddSeparator() { rows_.emplace_back(); }
  void Print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;  // empty row = separator
};

// Fixed-precision helpers so output is deterministic.
std::string Fixed(double value, int decimals);
std::string Percent(double fraction, int decimals = 1);  // 0.3374 -> "33.7%"
std::string Sci(double value, int digits = 4);           // 5.791e+10
std::string Bytes(double bytes);                         // 1.50 GiB

}  // namespace mfu::report
