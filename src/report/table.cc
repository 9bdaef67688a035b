#include "report/table.h"

#include <algorithm>
#include <cctype>
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

}  // namespace

void Table::Print(std::ostream& out) const {
  std::vector<size_t> width(header_.size(), 0);
  for (size_t i = 0; i < header_.size(); ++i)
    width[i] = header_[i].size();
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], row[i].size());
  }
  auto print_row = [&](const std::vector<std::string>& row, bool header) {
    std::string line;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      std::string pad(width[i] - cell.size(), ' ');
      bool right = !header && i > 0 && LooksNumeric(cell);
      line += right ? pad + cell : cell + pad;
      if (i + 1 < width.size())
        line += "  ";
    }
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out << line << '\n';
  };
  size_t total = 0;
  for (size_t w : width)
    total += w + 2;
  print_row(header_, true);
  out << std::string(total > 2 ? total - 2 : 0, '-') << '\n';
  for (const auto& row : rows_) {
    if (row.empty()) {
      out << std::string(total > 2 ? total - 2 : 0, '-') << '\n';
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
