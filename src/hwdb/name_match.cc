#include "hwdb/name_match.h"

#include <algorithm>
#include <array>

#include "base/param.h"
#include "base/strings.h"

namespace mfu::hwdb {

namespace {

constexpr std::string_view kSeparators = " \t-_/(),;:+";

// Words that name a vendor or a brand rather than a part: users and profilers
// add or omit them freely ("Tesla V100", "AMD Instinct MI300X").
constexpr std::array<std::string_view, 9> kVendorWords = {"nvidia", "amd",    "intel",    "google", "aws",
                                                          "huawei", "habana", "instinct", "tesla"};

bool IsVendorWord(std::string_view token) {
  return std::find(kVendorWords.begin(), kVendorWords.end(), token) != kVendorWords.end();
}

bool Contains(const std::vector<std::string>& tokens, const std::string& t) {
  return std::find(tokens.begin(), tokens.end(), t) != tokens.end();
}

bool AllIn(const std::vector<std::string>& needles, const std::vector<std::string>& haystack) {
  return std::all_of(needles.begin(), needles.end(), [&](const std::string& t) { return Contains(haystack, t); });
}

// All tokens an entry answers to in token matching.
std::vector<std::string> EntryTokens(const Accelerator& a) {
  std::vector<std::string> tokens = NameTokens(a.id);
  auto add = [&tokens](std::string_view text) {
    for (std::string& t : NameTokens(text))
      tokens.push_back(std::move(t));
  };
  add(a.vendor);  // vendor words are dropped, but custom vendors are not
  add(a.name);
  add(a.form_factor);
  for (const std::string& alias : a.aliases)
    add(alias);
  return tokens;
}

// True when `a` claims a subset of the query as one of its own names, i.e.
// it is the family default for the query ("h100" in "h100 80gb").
bool IsFamilyDefault(const Accelerator& a, const std::vector<std::string>& query_tokens) {
  if (AllIn(NameTokens(a.id), query_tokens))
    return true;
  return std::any_of(a.aliases.begin(), a.aliases.end(), [&](const std::string& alias) {
    std::vector<std::string> tokens = NameTokens(alias);
    return !tokens.empty() && AllIn(tokens, query_tokens);
  });
}

Status UnknownError(const std::vector<Accelerator>& entries, std::string_view query) {
  // Suggest by key so that "NVIDIA H1000" still finds "h100".
  std::vector<std::string> keys;
  std::vector<std::string> shown;
  for (const Accelerator& a : entries) {
    keys.push_back(NameKey(a.id));
    shown.push_back(a.id);
    for (const std::string& alias : a.aliases) {
      keys.push_back(NameKey(alias));
      shown.push_back(alias);
    }
  }
  std::string message = "gpu '" + std::string(query) + "': unknown accelerator";
  std::string best = base::ClosestMatch(NameKey(query), keys);
  if (!best.empty()) {
    auto it = std::find(keys.begin(), keys.end(), best);
    message += " (did you mean '" + shown[static_cast<size_t>(it - keys.begin())] + "'?)";
  }
  return InvalidArgumentError(message + "; see " + base::CommandRef("hw list"));
}

}  // namespace

std::vector<std::string> NameTokens(std::string_view name) {
  std::vector<std::string> tokens;
  std::string lower = base::ToLower(name);
  size_t pos = 0;
  while (pos < lower.size()) {
    size_t start = lower.find_first_not_of(kSeparators, pos);
    if (start == std::string::npos)
      break;
    size_t end = lower.find_first_of(kSeparators, start);
    if (end == std::string::npos)
      end = lower.size();
    std::string token = lower.substr(start, end - start);
    if (!IsVendorWord(token))
      tokens.push_back(std::move(token));
    pos = end;
  }
  return tokens;
}

std::string NameKey(std::string_view name) {
  return base::Join(NameTokens(name), " ");
}

std::vector<std::string> ExactKeys(const Accelerator& accelerator) {
  std::vector<std::string> keys;
  auto add = [&keys](std::string key) {
    if (!key.empty())  // an id made of vendor words only ("nvidia")
      keys.push_back(std::move(key));
  };
  add(NameKey(accelerator.id));
  add(NameKey(accelerator.display_name()));
  for (const std::string& alias : accelerator.aliases)
    add(NameKey(alias));
  return keys;
}

StatusOr<size_t> FindAccelerator(const std::vector<Accelerator>& entries, std::string_view query) {
  const std::string trimmed(base::Trim(query));
  const std::string lower = base::ToLower(trimmed);
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].id == lower)
      return i;
  }
  const std::vector<std::string> tokens = NameTokens(trimmed);
  if (tokens.empty())
    return UnknownError(entries, trimmed);
  const std::string key = base::Join(tokens, " ");
  for (size_t i = 0; i < entries.size(); ++i) {
    if (Contains(ExactKeys(entries[i]), key))
      return i;
  }

  std::vector<size_t> candidates;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (AllIn(tokens, EntryTokens(entries[i])))
      candidates.push_back(i);
  }
  if (candidates.empty())
    return UnknownError(entries, trimmed);
  if (candidates.size() == 1)
    return candidates[0];

  std::vector<size_t> defaults;
  for (size_t i : candidates) {
    if (IsFamilyDefault(entries[i], tokens))
      defaults.push_back(i);
  }
  if (defaults.size() == 1)
    return defaults[0];
  std::vector<std::string> ids;
  for (size_t i : candidates)
    ids.push_back(entries[i].id);
  return InvalidArgumentError("gpu '" + trimmed + "': ambiguous, candidates: " + base::Join(ids, ", "));
}

}  // namespace mfu::hwdb
