#pragma once

// A plain-text table for terminal output: columns padded to their widest
// cell, numbers right-aligned. Given a width, a table wider than it wraps its
// text (note) columns, widest first, at spaces; columns holding figures are
// never wrapped or cut, so a table of figures alone may stay wider.

#include <iosfwd>
#include <string>
#include <vector>

namespace mfu::report {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void AddSeparator() { rows_.emplace_back(); }
  // `width`: columns available, 0 (TextOptions::kUnlimited) for no limit.
  void Print(std::ostream& out, int width = 0) const;

 private:
  // Column widths: the widest cells, text columns (`text`) narrowed to fit
  // `limit`, then the `gap` between columns cut from 2 spaces to 1.
  std::vector<size_t> FitWidths(int limit, std::vector<bool>& text, size_t& gap) const;

  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;  // empty row = separator
};

// `text` in lines of at most `width` characters, broken at spaces (a word
// longer than `width` is split); one line when `width` is 0.
std::vector<std::string> WrapText(const std::string& text, size_t width);

// `text` wrapped to `width` (0: no limit), each line ending in a newline.
std::string WrapParagraph(const std::string& text, int width);

// "label       text" with `text` wrapped to `width` (0: no limit), the
// continuation lines indented under it; `label` is padded to 12 columns.
std::string LabelLine(const std::string& label, const std::string& text, int width);

// Fixed-precision helpers so output is deterministic.
std::string Fixed(double value, int decimals);
std::string Percent(double fraction, int decimals = 1);  // 0.3374 -> "33.7%"
// The same, or "-" for a value that is not finite (not measured, no peak).
std::string FixedOrDash(double value, int decimals);
std::string PercentOrDash(double fraction, int decimals = 1);
std::string Sci(double value, int digits = 4);  // 5.791e+10
std::string Bytes(double bytes);                // 1.50 GiB

}  // namespace mfu::report
