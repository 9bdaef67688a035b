#include "report/json_common.h"

#include <fmt/format.h>

#include <cmath>
#include <ostream>
#include <string>

#include "base/strings.h"
#include "mfu/version.h"
#include "report/table.h"

namespace mfu::report {

nlohmann::json JsonEnvelope() {
  nlohmann::json j;
  j["schema_version"] = kSchemaVersion;
  j["mfu_version"] = kVersion;
  return j;
}

std::string JsonText(const nlohmann::json& value) {
  // Invalid UTF-8 from a user's file is replaced rather than thrown on.
  return value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void PrintJson(std::ostream& out, const nlohmann::json& value) {
  out << JsonText(value);
}

nlohmann::json GpuJson(const Accelerator& gpu) {
  return {{"id", gpu.id}, {"name", gpu.display_name()}};
}

nlohmann::json ConventionJson(Convention convention) {
  return {{"name", ConventionName(convention)}, {"summary", ConventionSummary(convention)}};
}

nlohmann::json WaterfallJson(const Waterfall& w) {
  nlohmann::json buckets = nlohmann::json::object();
  for (size_t b = 0; b < kNumWaterfallBuckets; ++b)
    buckets[WaterfallBucketName(static_cast<WaterfallBucket>(b))] = w.bucket_ns[b];
  return {{"step_ns", w.step_ns},
          {"buckets_ns", buckets},
          {"compute_share", w.compute_share},
          {"matrix_share", w.matrix_share},
          {"matrix_efficiency", w.matrix_efficiency},
          {"mfu_hw", w.mfu_hw}};
}

nlohmann::json UtilizationJson(const Utilization& u) {
  return {{"convention", ConventionName(u.convention)},
          {"precision", DTypeName(u.precision)},
          {"model_flops_per_s", u.model_flops_per_s},
          {"hardware_flops_per_s", u.hardware_flops_per_s},
          {"peak_flops_per_s", u.peak_flops_per_s},
          {"mfu", u.mfu},
          {"hfu", u.hfu}};
}

nlohmann::json NotesJson(const std::vector<Note>& notes) {
  nlohmann::json out = nlohmann::json::array();
  for (const Note& note : notes)
    out.push_back({{"kind", NoteKindName(note.kind)}, {"code", note.code}, {"message", note.message}});
  return out;
}

void PrintNotes(std::ostream& out, const std::vector<Note>& notes, int width) {
  // "assumed: ..." / "warning: ..." with continuation lines indented under
  // the message, wrapped to `width` (0: one line per note).
  constexpr size_t kIndent = 9;
  const size_t room = width > 0 && static_cast<size_t>(width) > kIndent + 20 ? static_cast<size_t>(width) - kIndent : 0;
  for (const Note& note : notes) {
    const std::vector<std::string> lines = WrapText(note.message, room);
    for (size_t i = 0; i < lines.size(); ++i)
      out << (i > 0 ? "         " : note.kind == NoteKind::kAssumption ? "assumed: " : "warning: ") << lines[i] << "\n";
  }
}

void PrintNotes(std::ostream& out, const std::vector<Note>& notes, const TextOptions& text) {
  std::vector<Note> spelled = notes;
  for (Note& note : spelled)
    note.message = text.Spelled(note.message);
  PrintNotes(out, spelled, text.width);
}

nlohmann::json JsonNumber(double value) {
  return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
}

int64_t JsonInt(double value) {
  return std::isfinite(value) ? std::llround(value) : 0;
}

nlohmann::json ModelJson(const ModelSpec& s) {
  nlohmann::json j;
  j["name"] = s.name;
  j["family"] = s.family;
  j["source"] = s.source;
  j["arch"] = s.arch == ArchKind::kDiT ? "dit" : "decoder";
  j["layers"] = s.num_layers;
  j["hidden"] = s.hidden;
  j["heads"] = s.heads;
  j["kv_heads"] = s.kv_heads;
  j["head_dim"] = s.head_dim;
  j["ffn"] = s.ffn;
  j["vocab"] = s.vocab;
  j["attention"] = s.attention == AttentionKind::kMla ? "mla" : (s.kv_heads == s.heads ? "mha" : "gqa");
  if (s.arch == ArchKind::kDecoder)
    j["tied_embeddings"] = s.tied_embeddings;
  if (s.is_moe()) {
    j["moe"] = {{"experts", s.moe.num_experts},
                {"top_k", s.moe.top_k},
                {"expert_ffn", s.moe.expert_ffn},
                {"shared_ffn", s.moe.shared_ffn},
                {"moe_layers", s.num_moe_layers()}};
  }
  int64_t sliding = 0;
  for (const auto& l : s.layers)
    sliding += l.window > 0;
  if (sliding > 0)
    j["sliding_window_layers"] = sliding;
  if (s.mtp_layers > 0)
    j["mtp_layers"] = s.mtp_layers;
  j["notes"] = s.notes;
  return j;
}

nlohmann::json ParamsJson(const ParamCounts& p) {
  return {{"total", JsonInt(p.total)},
          {"active", JsonInt(p.active)},
          {"embedding", JsonInt(p.embedding)},
          {"position_embedding", JsonInt(p.position_embedding)},
          {"lm_head", JsonInt(p.lm_head)},
          {"non_embedding", JsonInt(p.non_embedding)},
          {"active_non_embedding", JsonInt(p.active_non_embedding)},
          {"attention", JsonInt(p.attention)},
          {"mlp", JsonInt(p.dense_mlp)},
          {"routed_experts", JsonInt(p.routed_experts)},
          {"shared_experts", JsonInt(p.shared_experts)},
          {"router", JsonInt(p.router)},
          {"norms", JsonInt(p.norms)},
          {"mtp", JsonInt(p.mtp)},
          {"dit_embedders", JsonInt(p.dit_embedders)}};
}

void PrintModelSummary(std::ostream& out, const ModelSpec& s, const ParamCounts& p, int width) {
  std::string shape = fmt::format("{} layers, hidden {}, {} heads", s.num_layers, s.hidden, s.heads);
  if (s.attention == AttentionKind::kMla) {
    shape += fmt::format(" (MLA, kv_lora {})", s.mla.kv_lora_rank);
  } else if (s.kv_heads != s.heads) {
    shape += fmt::format(" ({} kv)", s.kv_heads);
  }
  if (s.is_moe())
    shape += fmt::format(", {} experts top-{}", s.moe.num_experts, s.moe.top_k);
  out << LabelLine("model", fmt::format("{} ({}; {})", s.name, s.family, shape), width);
  out << LabelLine("source", s.source, width);
  out << LabelLine("parameters",
                   fmt::format("total {} | active {} | active without embeddings {}", base::FormatThousands(p.total),
                               base::FormatThousands(p.active), base::FormatThousands(p.active_non_embedding)),
                   width);
  if (s.arch == ArchKind::kDecoder) {
    out << LabelLine(
        "",
        fmt::format("embedding {} | non-embedding {} | LM head {}",
                    base::FormatThousands(p.embedding + p.position_embedding), base::FormatThousands(p.non_embedding),
                    s.tied_embeddings ? std::string("tied") : base::FormatThousands(p.lm_head)),
        width);
  }
  if (p.mtp > 0)
    out << fmt::format("            MTP modules {} (not in total)\n", base::FormatThousands(p.mtp));
  for (const auto& note : s.notes)
    out << LabelLine("note", note, width);
}

}  // namespace mfu::report
