#include "base/table.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace mfu::base {

Bounds Bounds::Interval(double min, double max) {
  const std::string message = "{} is not in [" + FormatNumber(min) + ", " + FormatNumber(max) + "]";
  return Bounds().Min(min, message).Max(max, message);
}

Status Bounds::Check(double value, std::string_view text) const {
  if (min && (min->exclusive ? !(value > min->value) : value < min->value))
    return Status(min->code, Substitute(min->message, text));
  if (max && (max->exclusive ? !(value < max->value) : value > max->value))
    return Status(max->code, Substitute(max->message, text));
  return Status::Ok();
}

std::string Substitute(std::string_view message, std::string_view text) {
  std::string out;
  for (size_t i = 0; i < message.size(); ++i) {
    if (message.substr(i, 2) == "{}") {
      out += text;
      ++i;
    } else {
      out += message[i];
    }
  }
  return out;
}

StatusOr<double> ParseNumberCell(std::string_view text, const Bounds& bounds, std::string_view not_a_number) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value))
    return ParseError(Substitute(not_a_number, text));
  MFU_RETURN_IF_ERROR(bounds.Check(value, text));
  return value;
}

StatusOr<int64_t> ParseIntegerCell(std::string_view text, const Bounds& bounds, std::string_view not_an_integer) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return ParseError(Substitute(not_an_integer, text));
  MFU_RETURN_IF_ERROR(bounds.Check(static_cast<double>(value), text));
  return value;
}

StatusOr<bool> ParseBoolCell(std::string_view text) {
  if (text != "0" && text != "1")
    return ParseError("'" + std::string(text) + "' is not 0 or 1");
  return text == "1";
}

std::vector<std::string> ParseListCell(std::string_view text) {
  std::vector<std::string> items;
  for (const std::string& part : Split(text, ';')) {
    std::string item(Trim(part));
    if (!item.empty())
      items.push_back(std::move(item));
  }
  return items;
}

Status CheckSlugId(std::string_view id) {
  const bool ok = std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
  });
  if (!ok)
    return ParseError("'" + std::string(id) + "' must be lowercase letters, digits, '-', '_' or '.'");
  return Status::Ok();
}

std::string CsvField(std::string_view field, bool quote) {
  const bool plain = !quote && field.find_first_of(",\"\r\n") == std::string_view::npos &&
                     (field.empty() || (field.front() != ' ' && field.back() != ' '));
  if (plain)
    return std::string(field);
  std::string out = "\"";
  for (char c : field)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

TableSchema<TextCells> TextCellsSchema(const std::vector<std::string>& in_header,
                                       const std::vector<std::string>& optional, bool ignore_unknown) {
  TableSchema<TextCells> schema;
  schema.ignore_unknown_columns = ignore_unknown;
  for (const std::vector<std::string>* names : {&in_header, &optional}) {
    for (const std::string& name : *names) {
      Column<TextCells> c;
      c.name = name;
      c.in_header = names == &in_header;
      c.parse = [name](std::string_view text, TextCells& row) {
        row.cells.insert_or_assign(name, std::string(text));
        return Status::Ok();
      };
      c.merge = [name](const TextCells& from, TextCells& to) {
        to.cells.insert_or_assign(name, std::string(from.Get(name)));
      };
      c.write = [name](const TextCells& row) { return std::string(row.Get(name)); };
      schema.columns.push_back(std::move(c));
    }
  }
  return schema;
}

StatusOr<std::vector<size_t>> MapTableHeader(const CsvTable& table, const std::vector<std::string>& names,
                                             const std::vector<std::vector<std::string>>& aliases,
                                             const std::vector<std::string>& required, const std::string& where,
                                             bool ignore_unknown) {
  std::vector<size_t> map;
  std::vector<std::string> unknown;
  for (const std::string& name : table.header) {
    size_t found = names.size();
    for (size_t c = 0; c < names.size() && found == names.size(); ++c) {
      if (name == names[c] || std::find(aliases[c].begin(), aliases[c].end(), name) != aliases[c].end())
        found = c;
    }
    if (found == names.size()) {
      unknown.push_back("'" + name + "'");
    } else if (std::find(map.begin(), map.end(), found) != map.end()) {
      return ParseError(where + ": column '" + names[found] + "' given twice (as '" + name + "')");
    }
    map.push_back(found);
  }
  if (!unknown.empty() && !ignore_unknown) {
    std::string message = where + ": unknown column" + (unknown.size() > 1 ? "s " : " ") + Join(unknown, ", ");
    std::string guess = ClosestMatch(unknown[0].substr(1, unknown[0].size() - 2), names);
    if (!guess.empty())
      message += " (did you mean '" + guess + "'?)";
    return ParseError(message);
  }
  for (const std::string& name : required) {
    const size_t c = static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
    if (name.empty() || std::find(map.begin(), map.end(), c) != map.end())
      continue;
    std::string message = where + ": missing column '" + name + "'";
    std::vector<std::string> unknown_names;
    for (const std::string& u : unknown)
      unknown_names.push_back(u.substr(1, u.size() - 2));
    if (std::string guess = ClosestMatch(name, unknown_names); !guess.empty())
      message += " (the header has '" + guess + "')";
    return ParseError(message);
  }
  return map;
}

}  // namespace mfu::base
