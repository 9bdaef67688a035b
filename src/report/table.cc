#include "report/table.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace mfu::report {
namespace {

bool LooksNumeric(const std::string& cell) {
  if (cell.empty())
    return false;
  size_t i = (cell[0] == '-' || cell[0] == '+') ? 1 : 0;
  if (i < cell.size() && cell[i] == '.')
    ++i;
  return i < cell.size() && std::isdigit(static_cast<unsigned char>(cell[i]));
}

// Columns of prose that may start with a figure ("18 B/param ...").
bool IsNoteHeader(const std::string& header) {
  static constexpr const char* kNotes[] = {
      "note", "notes", "origin", "source", "what it counts", "configuration", "best configuration", "name", "from"};
  for (const char* n : kNotes) {
    if (header == n)
      return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> WrapText(const std::string& text, size_t width) {
  if (width == 0 || text.size() <= width)
    return {text};
  std::vector<std::string> lines;
  std::string line;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    // "parameter 'seq_len'" (how the library names a request field) stays on
    // one line, so the CLI can still rewrite it into its flag (--seq-len).
    while (end != std::string::npos && end >= at + 9 && text.compare(end - 9, 9, "parameter") == 0 &&
           end + 1 < text.size() && text[end + 1] == '\'')
      end = text.find(' ', end + 1);
    if (end == std::string::npos)
      end = text.size();
    std::string word = text.substr(at, end - at);
    at = end + 1;
    while (word.size() > width) {  // a word longer than the column
      if (!line.empty()) {
        lines.push_back(line);
        line.clear();
      }
      lines.push_back(word.substr(0, width));
      word = word.substr(width);
    }
    if (line.empty()) {
      line = word;
    } else if (line.size() + 1 + word.size() <= width) {
      line += " " + word;
    } else {
      lines.push_back(line);
      line = word;
    }
  }
  if (!line.empty() || lines.empty())
    lines.push_back(line);
  return lines;
}

std::string WrapParagraph(const std::string& text, int width) {
  std::string out;
  for (const std::string& line : WrapText(text, width > 0 ? static_cast<size_t>(width) : 0))
    out += line + "\n";
  return out;
}

std::string LabelLine(const std::string& label, const std::string& text, int width) {
  constexpr size_t kIndent = 12;
  const size_t indent = std::max(kIndent, label.size() + 1);
  const size_t room = width > 0 && static_cast<size_t>(width) > indent + 20 ? static_cast<size_t>(width) - indent : 0;
  std::string out;
  const std::vector<std::string> lines = WrapText(text, room);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string head = i == 0 ? label : "";
    out += head + std::string(indent - head.size(), ' ') + lines[i] + "\n";
  }
  return out;
}

std::vector<size_t> Table::FitWidths(int limit, std::vector<bool>& text, size_t& gap) const {
  std::vector<size_t> width(header_.size(), 0);
  text.assign(header_.size(), true);
  gap = 2;
  for (size_t i = 0; i < header_.size(); ++i)
    width[i] = header_[i].size();
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], row[i].size());
      if (LooksNumeric(row[i]) && !IsNoteHeader(header_[i]))
        text[i] = false;
    }
  }
  auto total = [&width, &gap] {
    size_t sum = 0;
    for (size_t w : width)
      sum += w + gap;
    return sum > gap ? sum - gap : 0;
  };
  if (limit <= 0)
    return width;
  // Narrow the widest text column (not the first, the row label) until the
  // table fits or every text column is down to kMinWidth.
  constexpr size_t kMinWidth = 10;
  while (total() > static_cast<size_t>(limit)) {
    size_t widest = 0;
    for (size_t i = 1; i < width.size(); ++i) {
      if (text[i] && width[i] > kMinWidth && (widest == 0 || width[i] > width[widest]))
        widest = i;
    }
    if (widest == 0 && gap == 2) {
      gap = 1;  // then one space between columns
      continue;
    }
    if (widest == 0)
      break;  // only figures left: a table of figures may stay wider
    width[widest] =
        std::max(kMinWidth, width[widest] - std::min(width[widest] - kMinWidth, total() - static_cast<size_t>(limit)));
  }
  return width;
}

void Table::Print(std::ostream& out, int limit) const {
  std::vector<bool> text;
  size_t gap = 2;
  const std::vector<size_t> width = FitWidths(limit, text, gap);
  auto print_row = [&](const std::vector<std::string>& row, bool header) {
    std::vector<std::vector<std::string>> cells(width.size());
    size_t lines = 1;
    for (size_t i = 0; i < width.size(); ++i) {
      cells[i] = WrapText(i < row.size() ? row[i] : "", width[i]);
      lines = std::max(lines, cells[i].size());
    }
    for (size_t k = 0; k < lines; ++k) {
      std::string line;
      for (size_t i = 0; i < width.size(); ++i) {
        const std::string cell = k < cells[i].size() ? cells[i][k] : "";
        std::string pad(width[i] > cell.size() ? width[i] - cell.size() : 0, ' ');
        bool right = !header && i > 0 && !text[i] && LooksNumeric(cell);
        line += right ? pad + cell : cell + pad;
        if (i + 1 < width.size())
          line += std::string(gap, ' ');
      }
      while (!line.empty() && line.back() == ' ')
        line.pop_back();
      out << line << '\n';
    }
  };
  size_t total = 0;
  for (size_t w : width)
    total += w + gap;
  const std::string rule(total > gap ? total - gap : 0, '-');
  print_row(header_, true);
  out << rule << '\n';
  for (const auto& row : rows_) {
    if (row.empty()) {
      out << rule << '\n';
    } else {
      print_row(row, false);
    }
  }
}

std::string Fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string Percent(double fraction, int decimals) {
  return Fixed(fraction * 100, decimals) + "%";
}

std::string FixedOrDash(double value, int decimals) {
  return std::isfinite(value) ? Fixed(value, decimals) : "-";
}

std::string PercentOrDash(double fraction, int decimals) {
  return std::isfinite(fraction) ? Percent(fraction, decimals) : "-";
}

std::string Sci(double value, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", digits - 1, value);
  return buf;
}

std::string Bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 5) {
    bytes /= 1024;
    ++unit;
  }
  return Fixed(bytes, unit == 0 ? 0 : 2) + " " + kUnits[unit];
}

}  // namespace mfu::report
