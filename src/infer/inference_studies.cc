// The studies of an inference report (inference_job.h): decode and prefill
// sweeps, speculative decoding with its drafter, and request-shape lists.

#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.h"
#include "base/table.h"
#include "mfu/inference_job.h"

namespace mfu {

std::vector<DecodePoint> DecodeSweep(const InferenceModel& model, double max_batch, double context) {
  std::vector<double> batches;
  for (double b = 1; b <= max_batch; b *= 2)
    batches.push_back(b);
  if (batches.empty() || batches.back() < max_batch)
    batches.push_back(max_batch);
  const auto pp = static_cast<double>(model.setup().pp);
  std::vector<DecodePoint> points;
  for (double b : batches) {
    DecodePoint p;
    p.batch = static_cast<int64_t>(b);
    p.step = model.Decode(b, context);
    p.output_tokens_per_s = pp * b / p.step.time_s;
    p.mfu = p.step.model_flops / (p.step.time_s * model.peak_flops());
    p.mbu = p.step.total_bytes() / (p.step.time_s * model.setup().gpu->memory_bw_tbps * 1e12);
    points.push_back(std::move(p));
  }
  return points;
}

std::vector<PrefillPoint> PrefillSweep(const InferenceModel& model, double input_len) {
  std::vector<double> prompts;
  for (double p = 128; p < input_len; p *= 4)
    prompts.push_back(p);
  prompts.push_back(input_len);
  std::vector<PrefillPoint> points;
  for (double prompt : prompts) {
    PrefillPoint p;
    p.prompt_len = static_cast<int64_t>(prompt);
    p.step = model.Prefill(1, prompt);
    p.mfu = p.step.model_flops / (p.step.time_s * model.peak_flops());
    points.push_back(std::move(p));
  }
  return points;
}

StatusOr<SpeculativeReport> SpeculativeDecoding(const FileSystem& fs, const InferenceModel& model, double batch,
                                                double context, int64_t draft_tokens, double acceptance,
                                                const std::string& drafter) {
  SpeculativeReport r;
  r.draft_tokens = draft_tokens;
  r.acceptance = acceptance;
  r.drafter = drafter;
  if (drafter.empty()) {
    MFU_ASSIGN_OR_RETURN(r.result, model.Speculative(batch, context, draft_tokens, acceptance, nullptr));
    return r;
  }
  // The draft model on one GPU, at the target's precisions and framework.
  MFU_ASSIGN_OR_RETURN(ModelSpec spec, LoadModel(fs, drafter));
  const auto draft_spec = std::make_unique<ModelSpec>(std::move(spec));
  InferenceSetup setup = model.setup();
  setup.model = draft_spec.get();
  setup.tp = 1;
  setup.pp = 1;
  setup.ep = 1;
  setup.attention_dp = false;
  MFU_ASSIGN_OR_RETURN(InferenceModel draft, InferenceModel::Create(setup));
  MFU_ASSIGN_OR_RETURN(r.result, model.Speculative(batch, context, draft_tokens, acceptance, &draft));
  return r;
}

namespace {

constexpr const char* kWorkload = "parameter 'workload'";

// A whole number of tokens or requests in [1, 1e9]; the message quotes
// `field`. kParse (a data error); the list reader makes it a usage error.
StatusOr<double> WholeNumber(std::string_view field) {
  StatusOr<double> v = base::ParseScaledNumber(base::Trim(field), "");
  if (!v.ok() || !(*v >= 1) || *v > 1e9 || std::floor(*v) < *v)
    return ParseError("'" + std::string(field) + "' is not a whole number in [1, 1e9]");
  return *v;
}

// WholeNumber as a usage error about `item` of parameter 'workload'.
Status ListNumber(std::string_view field, const std::string& item, double& out) {
  StatusOr<double> v = WholeNumber(field);
  if (!v.ok())
    return InvalidArgumentError(std::string(kWorkload) + " " + item + ": " + v.status().message());
  out = *v;
  return Status::Ok();
}

// The workload file: ordered rows, columns beside these ignored, every cell
// read (an empty one is not a whole number); requests defaults to 1.
const base::TableSchema<WorkloadPair>& WorkloadSchema() {
  static const base::TableSchema<WorkloadPair> schema = [] {
    base::TableSchema<WorkloadPair> s;
    s.noun = "request shape";
    s.skip_empty_cells = false;
    s.ignore_unknown_columns = true;
    auto column = [](std::string name, double WorkloadPair::*member) {
      base::Column<WorkloadPair> c = base::NumberColumn<WorkloadPair>(std::move(name), member, base::Bounds());
      c.parse = [member](std::string_view text, WorkloadPair& row) -> Status {
        MFU_ASSIGN_OR_RETURN(row.*member, WholeNumber(text));
        return Status::Ok();
      };
      return c;
    };
    s.columns = {column("input_len", &WorkloadPair::input_len).Required(),
                 column("output_len", &WorkloadPair::output_len).Required(),
                 column("requests", &WorkloadPair::requests)};
    return s;
  }();
  return schema;
}

StatusOr<std::vector<WorkloadPair>> ParseWorkloadList(std::string_view spec) {
  std::vector<WorkloadPair> pairs;
  for (const std::string& item : base::Split(spec, ',')) {
    const std::vector<std::string> parts = base::Split(item, ':');
    if (parts.size() < 2 || parts.size() > 3)
      return InvalidArgumentError(std::string(kWorkload) + ": '" + item + "' is not INPUT:OUTPUT[:REQUESTS]");
    WorkloadPair p;
    MFU_RETURN_IF_ERROR(ListNumber(parts[0], item, p.input_len));
    MFU_RETURN_IF_ERROR(ListNumber(parts[1], item, p.output_len));
    if (parts.size() == 3)
      MFU_RETURN_IF_ERROR(ListNumber(parts[2], item, p.requests));
    pairs.push_back(p);
  }
  return pairs;
}

}  // namespace

StatusOr<std::vector<WorkloadPair>> ParseWorkloadCsv(std::string_view text, std::string_view origin) {
  MFU_ASSIGN_OR_RETURN(std::vector<WorkloadPair> pairs, base::ParseTableCsv(WorkloadSchema(), text, origin));
  if (pairs.empty())
    return ParseError(std::string(origin) + ": no request shapes");
  return pairs;
}

StatusOr<std::vector<WorkloadPair>> ParseWorkload(const FileSystem& fs, std::string_view spec) {
  if (spec.find(':') != std::string_view::npos)
    return ParseWorkloadList(spec);
  MFU_ASSIGN_OR_RETURN(std::string content, fs.ReadFile(std::string(spec)));
  return ParseWorkloadCsv(content, spec);
}

}  // namespace mfu
