#include <array>
#include <regex>
#include <span>
#include <string>
#include <utility>

#include "base/embedded_file.h"
#include "base/strings.h"
#include "base/table.h"
#include "mfu/trace_classify.h"
#include "mfu_embedded/trace_data.h"

namespace mfu {

namespace {

constexpr std::string_view kBuiltinPath = "kernels/kernel_classes.csv";

constexpr std::array<const char*, kNumKernelClasses> kClassNames = {
    "gemm", "attention", "convolution", "elementwise", "reduction", "communication", "memcpy", "memset", "unclassified",
};

using Match = KernelClassifier::Rule::Match;

StatusOr<Match> ParseMatch(std::string_view text) {
  if (text == "prefix")
    return Match::kPrefix;
  if (text == "contains")
    return Match::kContains;
  if (text == "regex")
    return Match::kRegex;
  return InvalidArgumentError("unknown match '" + std::string(text) + "' (expected prefix, contains or regex)");
}

std::string MatchName(Match match) {
  switch (match) {
    case Match::kPrefix:
      return "prefix";
    case Match::kContains:
      return "contains";
    case Match::kRegex:
      return "regex";
  }
  return "prefix";
}

// The name without its trailing parameter list: "void f<T>(int, float*)" ->
// "void f<T>". Demangled names balance their parentheses, so the '(' that
// opens the list is found by scanning back from the final ')'.
std::string_view StripParameters(std::string_view name) {
  if (name.empty() || name.back() != ')')
    return name;
  int depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    if (name[i] == ')') {
      ++depth;
    } else if (name[i] == '(' && --depth == 0) {
      return name.substr(0, i);
    }
  }
  return name;  // unbalanced: match the whole name
}

}  // namespace

struct KernelClassifier::Compiled {
  std::vector<std::regex> regexes;  // one per rule; empty for non-regex rules
};

const char* KernelClassName(KernelClass c) {
  auto i = static_cast<size_t>(c);
  return i < kClassNames.size() ? kClassNames[i] : "unclassified";
}

StatusOr<KernelClass> ParseKernelClass(std::string_view name) {
  for (size_t i = 0; i < kClassNames.size(); ++i) {
    if (name == kClassNames[i])
      return static_cast<KernelClass>(i);
  }
  std::string message = "unknown kernel class '" + std::string(name) + "'";
  std::string suggestion = base::ClosestMatch(name, std::vector<std::string>(kClassNames.begin(), kClassNames.end()));
  if (!suggestion.empty())
    message += " (did you mean '" + suggestion + "'?)";
  return InvalidArgumentError(message);
}

StatusOr<KernelClassifier> KernelClassifier::LoadBuiltin() {
  for (const base::EmbeddedFile& file : base::TraceDataFiles()) {
    if (file.path != kBuiltinPath)
      continue;
    KernelClassifier classifier;
    MFU_RETURN_IF_ERROR(classifier.AddCsv(file.bytes, "data/kernels/kernel_classes.csv"));
    return classifier;
  }
  return InternalError("data/kernels/kernel_classes.csv is not embedded in this binary");
}

Status KernelClassifier::AddFile(const FileSystem& fs, const std::string& path) {
  MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
  return AddCsv(text, path);
}

namespace {

// The rules' table: ordered (every row is added), columns beside these
// ignored, the pattern taken verbatim (spaces may matter in a prefix), an
// empty class, match or pattern an error ("column 'pattern' is empty").
// Errors name the line and the column: "u.csv:3: column 'class': unknown
// kernel class 'gem' (did you mean 'gemm'?)".
const base::TableSchema<KernelClassifier::Rule>& RuleSchema() {
  using Rule = KernelClassifier::Rule;
  static const base::TableSchema<Rule> schema = [] {
    base::TableSchema<Rule> s;
    s.noun = "kernel-class rule";
    s.ignore_unknown_columns = true;
    base::Column<Rule> cls = base::EnumColumn<Rule, KernelClass>("class", &Rule::cls, ParseKernelClass,
                                                                 [](KernelClass c) { return KernelClassName(c); });
    base::Column<Rule> match = base::EnumColumn<Rule, Match>("match", &Rule::match, ParseMatch, MatchName);
    base::Column<Rule> pattern = base::TextColumn<Rule>("pattern", &Rule::pattern);
    s.columns = {cls.Required(), match.Required(), pattern.Required().Verbatim(),
                 base::TextColumn<Rule>("source", &Rule::source)};
    return s;
  }();
  return schema;
}

}  // namespace

Status KernelClassifier::AddCsv(std::string_view csv, std::string_view origin) {
  MFU_ASSIGN_OR_RETURN(std::vector<base::TableRow<Rule>> rows, base::ParseTableRows(RuleSchema(), csv, origin));
  std::vector<Rule> added;
  std::vector<std::regex> added_regexes;
  for (base::TableRow<Rule>& row : rows) {
    Rule& rule = row.value;
    std::regex compiled;
    if (rule.match == Match::kRegex) {
      try {
        compiled = std::regex(rule.pattern, std::regex::ECMAScript | std::regex::optimize);
      } catch (const std::regex_error& e) {
        return InvalidArgumentError(row.where + ": column 'pattern': invalid regex '" + rule.pattern +
                                    "': " + e.what());
      }
    }
    rule.origin = row.where;
    added.push_back(std::move(rule));
    added_regexes.push_back(std::move(compiled));
  }

  // New rules go first; copies of this classifier keep the old Compiled.
  auto compiled = std::make_shared<Compiled>();
  compiled->regexes = std::move(added_regexes);
  if (compiled_ != nullptr) {
    compiled->regexes.insert(compiled->regexes.end(), compiled_->regexes.begin(), compiled_->regexes.end());
  }
  added.insert(added.end(), rules_.begin(), rules_.end());
  rules_ = std::move(added);
  compiled_ = std::move(compiled);
  return Status::Ok();
}

int KernelClassifier::MatchingRule(std::string_view name) const {
  const std::string_view key = StripParameters(name);
  for (size_t i = 0; i < rules_.size(); ++i) {
    const Rule& rule = rules_[i];
    bool hit = false;
    switch (rule.match) {
      case Match::kPrefix:
        hit = key.substr(0, rule.pattern.size()) == rule.pattern;
        break;
      case Match::kContains:
        hit = key.find(rule.pattern) != std::string_view::npos;
        break;
      case Match::kRegex:
        hit = std::regex_search(key.begin(), key.end(), compiled_->regexes[i]);
        break;
    }
    if (hit)
      return static_cast<int>(i);
  }
  return -1;
}

KernelClass KernelClassifier::Classify(TraceEventKind kind, std::string_view name) const {
  switch (kind) {
    case TraceEventKind::kMemcpy:
      return KernelClass::kMemcpy;
    case TraceEventKind::kMemset:
      return KernelClass::kMemset;
    case TraceEventKind::kKernel: {
      int rule = MatchingRule(name);
      return rule < 0 ? KernelClass::kUnclassified : rules_[static_cast<size_t>(rule)].cls;
    }
    default:
      return KernelClass::kUnclassified;
  }
}

std::vector<KernelClass> ClassifyEvents(const RankTrace& trace, const KernelClassifier& classifier) {
  constexpr auto kUnknown = static_cast<uint8_t>(0xff);
  std::vector<KernelClass> classes(trace.num_events(), KernelClass::kUnclassified);
  std::vector<uint8_t> by_name(trace.strings.size(), kUnknown);  // kernel class per name id
  for (size_t i = 0; i < trace.num_events(); ++i) {
    const TraceEventKind kind = trace.kind[i];
    if (kind != TraceEventKind::kKernel) {
      classes[i] = classifier.Classify(kind, {});
      continue;
    }
    const uint32_t name = trace.name[i];
    if (name >= by_name.size()) {  // kNoString or a name interned after the table was sized
      classes[i] = classifier.Classify(kind, trace.strings.Get(name));
      continue;
    }
    if (by_name[name] == kUnknown) {
      by_name[name] = static_cast<uint8_t>(classifier.Classify(kind, trace.strings.Get(name)));
    }
    classes[i] = static_cast<KernelClass>(by_name[name]);
  }
  return classes;
}

}  // namespace mfu
