// LoadModel: from a name or a path to a ModelSpec. A path (file, snapshot
// directory), a shipped preset (name, alias or Hugging Face repo id, matched
// forgivingly) or a repo id in the local Hugging Face cache. The rules are in
// docs/models.md, "Model names".

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/embedded_file.h"
#include "base/param.h"
#include "base/strings.h"
#include "mfu/model.h"
#include "mfu_embedded/model_data.h"

namespace mfu {

namespace {

constexpr std::string_view kPresetDir = "models/";
constexpr std::string_view kPresetExt = ".json";
constexpr uint64_t kMaxRefBytes = 4096;  // refs/main holds one commit hash

struct Preset {
  std::string name;
  std::string origin;
  std::string repo_id;
  std::vector<std::string> aliases;  // repo id first when known
  std::string_view bytes;
};

std::string_view EmbeddedText(std::string_view path) {
  for (const auto& file : base::ModelDataFiles()) {
    if (file.path == path)
      return file.bytes;
  }
  return {};
}

// "name,text": the text after the first comma, for `name`.
std::string LookupLine(std::string_view csv, const std::string& name) {
  for (const auto& line : base::Split(csv, '\n')) {
    auto comma = line.find(',');
    if (comma != std::string::npos && line.substr(0, comma) == name)
      return line.substr(comma + 1);
  }
  return "";
}

std::vector<Preset> Presets() {
  std::vector<Preset> out;
  const std::string_view sources = EmbeddedText("models/SOURCES.csv");
  const std::string_view aliases = EmbeddedText("models/ALIASES.csv");
  for (const auto& file : base::ModelDataFiles()) {
    std::string_view path = file.path;
    if (!base::StartsWith(path, kPresetDir) || !path.ends_with(kPresetExt))
      continue;
    path.remove_prefix(kPresetDir.size());
    path.remove_suffix(kPresetExt.size());
    Preset p;
    p.name = std::string(path);
    p.origin = LookupLine(sources, p.name);
    p.bytes = file.bytes;
    // ALIASES.csv: preset,repo_id,alias;alias...
    std::vector<std::string> fields = base::Split(LookupLine(aliases, p.name), ',');
    if (!fields.empty() && !fields[0].empty()) {
      p.repo_id = std::string(base::Trim(fields[0]));
      p.aliases.push_back(p.repo_id);
    }
    if (fields.size() > 1) {
      for (const auto& alias : base::Split(fields[1], ';')) {
        if (!base::Trim(alias).empty())
          p.aliases.emplace_back(base::Trim(alias));
      }
    }
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [](const Preset& a, const Preset& b) { return a.name < b.name; });
  return out;
}

bool IsVersion(std::string_view token) {
  return !token.empty() && std::isdigit(static_cast<unsigned char>(token[0])) &&
         std::all_of(token.begin(), token.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
}

// Lowercase words: '-', '_', ' ' and '/' separate them, and a family word
// glued to its version splits ("llama3.1" -> "llama", "3.1"; "qwen2.5" ->
// "qwen", "2.5"). One-letter prefixes stay ("v0.3", "a22b", "k2").
std::vector<std::string> Tokens(std::string_view name) {
  std::string normalized = base::ToLower(name);
  for (char& c : normalized) {
    if (c == '_' || c == ' ' || c == '/')
      c = '-';
  }
  std::vector<std::string> out;
  for (const auto& t : base::Split(normalized, '-')) {
    size_t letters = 0;
    while (letters < t.size() && std::isalpha(static_cast<unsigned char>(t[letters])))
      ++letters;
    if (letters >= 2 && letters < t.size() && IsVersion(t.substr(letters))) {
      out.push_back(t.substr(0, letters));
      out.push_back(t.substr(letters));
    } else if (!t.empty()) {
      out.push_back(t);
    }
  }
  return out;
}

// True when every word of `query` is a word of `names`.
bool TokensMatch(const std::vector<std::string>& query, const std::vector<std::string>& words) {
  return std::all_of(query.begin(), query.end(),
                     [&](const std::string& t) { return std::find(words.begin(), words.end(), t) != words.end(); });
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Presets whose name or an alias holds every word of `query`; a preset whose
// name has exactly the query's words wins over longer ones.
std::vector<const Preset*> TokenMatches(const std::vector<Preset>& presets, const std::vector<std::string>& query) {
  std::vector<const Preset*> matches;
  for (const auto& p : presets) {
    bool hit = TokensMatch(query, Tokens(p.name));
    for (const auto& alias : p.aliases)
      hit = hit || TokensMatch(query, Tokens(alias));
    if (hit)
      matches.push_back(&p);
  }
  if (matches.size() > 1) {
    for (const Preset* p : matches) {
      if (Sorted(Tokens(p->name)) == Sorted(query))
        return {p};
    }
  }
  return matches;
}

// Words naming a fine-tune or packaging of the same architecture.
bool IsVariantWord(const std::string& t) {
  return t == "instruct" || t == "it" || t == "chat" || t == "hf" || t == "base";
}

// The family word and version of a name ("llama", "3" for "llama-3-70b").
std::pair<std::string, std::string> FamilyAndVersion(const std::vector<std::string>& tokens) {
  std::string family = tokens.empty() ? "" : tokens[0];
  for (const auto& t : tokens) {
    if (IsVersion(t))
      return {family, t};
  }
  return {family, ""};
}

// A did-you-mean for `query`: among presets of the same family and version
// ("3" takes "3", "3.1", "3.3") first, else among all names.
std::string Suggestion(const std::vector<Preset>& presets, std::string_view query) {
  auto [family, version] = FamilyAndVersion(Tokens(query));
  std::vector<std::string> same, all;
  for (const auto& p : presets) {
    all.push_back(p.name);
    auto [f, v] = FamilyAndVersion(Tokens(p.name));
    if (f == family && !family.empty() && (version.empty() || v == version || base::StartsWith(v, version + ".")))
      same.push_back(p.name);
  }
  std::string lowered = base::ToLower(query);
  std::string best = base::ClosestMatch(lowered, same);
  if (best.empty() && same.size() == 1)
    best = same[0];
  if (!best.empty())
    return "did you mean '" + best + "'?";
  if (!same.empty() && same.size() <= 6)
    return "presets of that family: " + base::Join(same, ", ");
  best = base::ClosestMatch(lowered, all);
  return best.empty() ? "" : "did you mean '" + best + "'?";
}

StatusOr<const Preset*> ResolvePreset(const std::vector<Preset>& presets, std::string_view query) {
  const std::string lowered = base::ToLower(base::Trim(query));
  for (const auto& p : presets) {
    if (p.name == lowered)
      return &p;
    for (const auto& alias : p.aliases) {
      if (base::ToLower(alias) == lowered)
        return &p;
    }
  }
  std::vector<std::string> words = Tokens(lowered);
  std::vector<const Preset*> matches = TokenMatches(presets, words);
  if (matches.empty()) {
    std::vector<std::string> core;
    std::copy_if(words.begin(), words.end(), std::back_inserter(core), [](const auto& t) { return !IsVariantWord(t); });
    if (!core.empty() && core.size() < words.size())
      matches = TokenMatches(presets, core);
  }
  if (matches.size() == 1)
    return matches[0];
  if (matches.size() > 1) {
    std::vector<std::string> names;
    for (const Preset* p : matches)
      names.push_back(p->name);
    return InvalidArgumentError("model '" + std::string(query) +
                                "' is ambiguous; candidates: " + base::Join(names, ", "));
  }
  std::string hint = Suggestion(presets, query);
  return InvalidArgumentError("model '" + std::string(query) + "': no such file or preset" +
                              (hint.empty() ? "" : " (" + hint + ")") + "; see " + base::CommandRef("models"));
}

// "org/name" as a Hugging Face repo id: one '/', both parts of letters,
// digits, '.', '_' and '-', starting with a letter or digit, no ".json".
bool IsRepoId(std::string_view s) {
  auto slash = s.find('/');
  if (slash == std::string_view::npos || s.find('/', slash + 1) != std::string_view::npos || s.ends_with(".json"))
    return false;
  auto part_ok = [](std::string_view part) {
    return !part.empty() && std::isalnum(static_cast<unsigned char>(part[0])) &&
           std::all_of(part.begin(), part.end(), [](char c) {
             return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
           });
  };
  return part_ok(s.substr(0, slash)) && part_ok(s.substr(slash + 1));
}

std::string Join(const std::string& dir, const std::string& name) {
  return dir.ends_with('/') ? dir + name : dir + "/" + name;
}

// The repo id of a path inside a hub cache (".../models--org--name/..."), or "".
std::string RepoIdOfCachePath(const std::string& path) {
  auto start = path.rfind("models--");
  if (start == std::string::npos)
    return "";
  std::string segment = path.substr(start + 8, path.find('/', start) - start - 8);
  auto sep = segment.find("--");
  if (sep == std::string::npos)
    return "";
  std::string id = segment.substr(0, sep) + "/" + segment.substr(sep + 2);
  return IsRepoId(id) ? id : "";
}

// How a model read from `path` is shown (see LoadModel's contract).
std::string DisplayName(const std::string& path, const std::string& config_name) {
  if (std::string id = RepoIdOfCachePath(path); !id.empty())
    return id;
  if (IsRepoId(config_name))
    return config_name;
  std::string trimmed = path;
  auto slash = trimmed.rfind('/');
  std::string file = slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
  if (file == "config.json" && slash != std::string::npos && slash > 0) {
    std::string dir = trimmed.substr(0, slash);
    auto parent = dir.rfind('/');
    std::string name = parent == std::string::npos ? dir : dir.substr(parent + 1);
    if (!name.empty() && name != "." && name != "..")
      return name;
  }
  auto dot = file.rfind('.');
  return dot == std::string::npos || dot == 0 ? file : file.substr(0, dot);
}

StatusOr<ModelSpec> LoadConfigFile(const FileSystem& fs, const std::string& path) {
  MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path, kMaxConfigFileBytes));
  MFU_ASSIGN_OR_RETURN(ModelSpec spec, ParseModelConfig(text, path));
  spec.name = DisplayName(path, spec.name);
  return spec;
}

// The config.json of a hub cache repo directory (models--org--name).
StatusOr<std::string> SnapshotConfig(const FileSystem& fs, const std::string& repo_dir,
                                     std::vector<std::string>& notes) {
  const std::string ref = Join(repo_dir, "refs/main");
  MFU_ASSIGN_OR_RETURN(FileInfo ref_info, fs.Stat(ref));
  if (ref_info.kind == FileKind::kRegular) {
    MFU_ASSIGN_OR_RETURN(std::string hash, fs.ReadFile(ref, kMaxRefBytes));
    std::string config = Join(repo_dir, "snapshots/" + std::string(base::Trim(hash)) + "/config.json");
    MFU_ASSIGN_OR_RETURN(FileInfo info, fs.Stat(config));
    if (info.kind != FileKind::kMissing)
      return config;
  }
  const std::string snapshots = Join(repo_dir, "snapshots");
  MFU_ASSIGN_OR_RETURN(std::vector<DirectoryEntry> entries, fs.ListDirectory(snapshots));
  std::vector<std::string> found;
  for (const auto& entry : entries) {
    std::string config = Join(snapshots, entry.name + "/config.json");
    MFU_ASSIGN_OR_RETURN(FileInfo info, fs.Stat(config));
    if (entry.kind == FileKind::kDirectory && info.kind != FileKind::kMissing)
      found.push_back(config);
  }
  if (found.empty())
    return NotFoundError(snapshots + ": no snapshot holds a config.json");
  if (found.size() > 1)
    notes.push_back("several snapshots and no refs/main: used " + found[0]);
  return found[0];
}

StatusOr<ModelSpec> LoadDirectory(const FileSystem& fs, const std::string& dir) {
  const std::string config = Join(dir, "config.json");
  MFU_ASSIGN_OR_RETURN(FileInfo info, fs.Stat(config));
  if (info.kind != FileKind::kMissing)
    return LoadConfigFile(fs, config);
  MFU_ASSIGN_OR_RETURN(FileInfo snapshots, fs.Stat(Join(dir, "snapshots")));
  if (snapshots.kind == FileKind::kDirectory) {  // a hub cache repo directory
    std::vector<std::string> notes;
    MFU_ASSIGN_OR_RETURN(std::string path, SnapshotConfig(fs, dir, notes));
    MFU_ASSIGN_OR_RETURN(ModelSpec spec, LoadConfigFile(fs, path));
    spec.notes.insert(spec.notes.end(), notes.begin(), notes.end());
    return spec;
  }
  return NotFoundError(dir +
                       ": a directory without a config.json (give a Hugging Face snapshot directory or a config file)");
}

StatusOr<ModelSpec> LoadPreset(const Preset& p) {
  MFU_ASSIGN_OR_RETURN(ModelSpec spec, ParseModelConfig(p.bytes, "preset " + p.name));
  spec.name = p.name;
  spec.source = "preset " + p.name + " (" + p.origin + ")";
  return spec;
}

// A repo id that is no preset: the hub cache, else an error saying where
// mfu looked.
StatusOr<ModelSpec> LoadFromHubCache(const FileSystem& fs, const std::vector<Preset>& presets, const std::string& id,
                                     const ModelLookup& lookup) {
  std::string looked = "no Hugging Face cache is set (HF_HUB_CACHE, HF_HOME, HOME)";
  if (!lookup.hf_hub_cache.empty()) {
    std::string folder = id;
    folder.replace(folder.find('/'), 1, "--");
    const std::string repo_dir = Join(lookup.hf_hub_cache, "models--" + folder);
    MFU_ASSIGN_OR_RETURN(FileInfo info, fs.Stat(repo_dir));
    if (info.kind == FileKind::kDirectory)
      return LoadDirectory(fs, repo_dir);
    looked = "not in the Hugging Face cache: looked for " + repo_dir + "/snapshots/*/config.json";
  }
  std::vector<std::string> ids;
  for (const auto& p : presets) {
    if (!p.repo_id.empty())
      ids.push_back(p.repo_id);
  }
  std::string guess = base::ClosestMatch(id, ids);
  return NotFoundError("model '" + id + "': no such file or preset repo id, and " + looked +
                       (guess.empty() ? "" : " (did you mean '" + guess + "'?)") +
                       "; download it (huggingface-cli download " + id + " config.json) or pass its config.json");
}

}  // namespace

ModelLookup ModelLookupFromEnvironment() {
  ModelLookup lookup;
  auto env = [](const char* name) {
    const char* value = std::getenv(name);
    return value == nullptr ? std::string() : std::string(value);
  };
  if (std::string cache = env("HF_HUB_CACHE"); !cache.empty()) {
    lookup.hf_hub_cache = cache;
  } else if (std::string home = env("HF_HOME"); !home.empty()) {
    lookup.hf_hub_cache = Join(home, "hub");
  } else if (std::string user = env("HOME"); !user.empty()) {
    lookup.hf_hub_cache = Join(user, ".cache/huggingface/hub");
  }
  return lookup;
}

StatusOr<ModelSpec> LoadModel(const FileSystem& fs, std::string_view name_or_path) {
  return LoadModel(fs, name_or_path, ModelLookupFromEnvironment());
}

StatusOr<ModelSpec> LoadModel(const FileSystem& fs, std::string_view name_or_path, const ModelLookup& lookup) {
  const std::string arg(name_or_path);
  if (arg.empty())
    return InvalidArgumentError("model name is empty; see " + base::CommandRef("models"));
  MFU_ASSIGN_OR_RETURN(FileInfo info, fs.Stat(arg));
  if (info.kind == FileKind::kDirectory)
    return LoadDirectory(fs, arg);
  if (info.kind != FileKind::kMissing)
    return LoadConfigFile(fs, arg);  // ReadFile refuses devices, FIFOs, sockets
  const std::vector<Preset> presets = Presets();
  if (IsRepoId(arg)) {
    for (const auto& p : presets) {
      for (const auto& alias : p.aliases) {
        if (base::ToLower(alias) == base::ToLower(arg))
          return LoadPreset(p);
      }
    }
    return LoadFromHubCache(fs, presets, arg, lookup);
  }
  if (arg.find('/') != std::string::npos || arg.ends_with(".json"))
    return LoadConfigFile(fs, arg);  // names the missing file
  MFU_ASSIGN_OR_RETURN(const Preset* preset, ResolvePreset(presets, arg));
  return LoadPreset(*preset);
}

std::vector<PresetInfo> ListModelPresets() {
  std::vector<PresetInfo> out;
  for (const auto& p : Presets()) {
    PresetInfo info;
    info.name = p.name;
    auto spec = ParseModelConfig(p.bytes, p.name);
    info.family = spec.ok() ? spec->family : "?";
    info.origin = p.origin;
    info.repo_id = p.repo_id;
    info.aliases = p.aliases;
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace mfu
