#include "base/csv.h"

#include <cstddef>
#include <utility>

namespace mfu::base {

namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

// Splits `text` into records of fields. Tracks the physical line so that
// errors and rows can name it even when quoted fields span lines.
class CsvReader {
 public:
  CsvReader(std::string_view text, std::string_view origin) : text_(text), origin_(origin) {
    if (text_.substr(0, kUtf8Bom.size()) == kUtf8Bom) {
      text_.remove_prefix(kUtf8Bom.size());
    }
  }

  // Reads the next non-blank record into `fields` and the line it starts on
  // into `line`. Returns false at the end of the input.
  StatusOr<bool> NextRecord(std::vector<std::string>& fields, int& line) {
    fields.clear();
    while (!AtEnd() && IsNewline(text_[pos_]))
      ConsumeNewline();
    if (AtEnd())
      return false;
    line = line_;
    while (true) {
      std::string field;
      if (!AtEnd() && text_[pos_] == '"') {
        MFU_RETURN_IF_ERROR(ReadQuoted(field, fields.size() + 1));
      } else {
        ReadUnquoted(field);
      }
      fields.push_back(std::move(field));
      if (AtEnd())
        return true;
      if (text_[pos_] != ',') {  // a newline: ReadQuoted rejects anything else
        ConsumeNewline();
        return true;
      }
      ++pos_;
    }
  }

  Status Error(int line, const std::string& what) const {
    return ParseError(std::string(origin_) + ":" + std::to_string(line) + ": " + what);
  }

 private:
  static bool IsNewline(char c) { return c == '\n' || c == '\r'; }
  bool AtEnd() const { return pos_ >= text_.size(); }

  // Consumes LF, CRLF or a lone CR at pos_.
  void ConsumeNewline() {
    if (text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') {
      ++pos_;
    }
    ++pos_;
    ++line_;
  }

  // An unquoted field runs to the next comma or newline. A stray quote inside
  // it is kept literally (RFC 4180 forbids it, but spreadsheets write it).
  void ReadUnquoted(std::string& field) {
    size_t start = pos_;
    while (!AtEnd() && text_[pos_] != ',' && !IsNewline(text_[pos_]))
      ++pos_;
    field.assign(text_.substr(start, pos_ - start));
  }

  // Reads a quoted field starting at the opening quote at pos_.
  Status ReadQuoted(std::string& field, size_t field_number) {
    const int start_line = line_;
    ++pos_;
    while (true) {
      size_t quote = text_.find('"', pos_);
      if (quote == std::string_view::npos) {
        return Error(start_line, "unterminated quoted field");
      }
      CountLines(pos_, quote);
      field.append(text_.substr(pos_, quote - pos_));
      pos_ = quote + 1;
      if (!AtEnd() && text_[pos_] == '"') {  // "" is an escaped quote
        field.push_back('"');
        ++pos_;
        continue;
      }
      if (AtEnd() || text_[pos_] == ',' || IsNewline(text_[pos_])) {
        return Status::Ok();
      }
      return Error(line_, "field " + std::to_string(field_number) + ": unexpected text after closing quote");
    }
  }

  // Advances line_ over the line breaks in text_[begin, end).
  void CountLines(size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      if (text_[i] == '\n') {
        ++line_;
      } else if (text_[i] == '\r' && (i + 1 >= text_.size() || text_[i + 1] != '\n')) {
        ++line_;
      }
    }
  }

  std::string_view text_;
  std::string_view origin_;
  size_t pos_ = 0;
  int line_ = 1;
};

std::string TrimCopy(std::string_view s) {
  size_t begin = s.find_first_not_of(" \t");
  if (begin == std::string_view::npos)
    return {};
  size_t end = s.find_last_not_of(" \t");
  return std::string(s.substr(begin, end - begin + 1));
}

Status CheckHeader(const CsvReader& reader, int line, const std::vector<std::string>& header) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i].empty()) {
      return reader.Error(line, "empty column name (column " + std::to_string(i + 1) + ")");
    }
    for (size_t j = 0; j < i; ++j) {
      if (header[j] == header[i]) {
        return reader.Error(line, "duplicate column '" + header[i] + "'");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

int CsvTable::Column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name)
      return static_cast<int>(i);
  }
  return -1;
}

StatusOr<CsvTable> ParseCsv(std::string_view text, std::string_view origin) {
  CsvReader reader(text, origin);
  CsvTable table;
  std::vector<std::string> fields;
  int line = 1;
  MFU_ASSIGN_OR_RETURN(bool has_header, reader.NextRecord(fields, line));
  if (!has_header)
    return reader.Error(1, "empty file (no header row)");
  table.header_line = line;
  for (const std::string& name : fields)
    table.header.push_back(TrimCopy(name));
  MFU_RETURN_IF_ERROR(CheckHeader(reader, line, table.header));

  while (true) {
    MFU_ASSIGN_OR_RETURN(bool has_row, reader.NextRecord(fields, line));
    if (!has_row)
      break;
    if (fields.size() != table.header.size()) {
      return reader.Error(line, "row has " + std::to_string(fields.size()) + " fields, header has " +
                                    std::to_string(table.header.size()));
    }
    table.rows.push_back(std::move(fields));
    table.line_numbers.push_back(line);
  }
  return table;
}

}  // namespace mfu::base
