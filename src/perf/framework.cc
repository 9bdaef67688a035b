// Framework profiles (framework.h): data/frameworks/frameworks.csv and user
// override files.

#include "mfu/framework.h"

#include <algorithm>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "base/embedded_file.h"
#include "base/param.h"
#include "base/strings.h"
#include "base/table.h"
#include "mfu_embedded/perf_data.h"

namespace mfu {
namespace {

// An alias is spelled as a name is (lowercase letters, digits, - _ .).
Status CheckAlias(const std::string& alias) {
  return base::CheckSlugId(alias);
}

constexpr std::string_view kBuiltinFrameworksPath = "frameworks/frameworks.csv";
constexpr const char* kRecipes[] = {"", "delayed", "tensorwise", "rowwise", "blockwise", "mxfp8", "nvfp4"};

using Col = base::Column<FrameworkProfile>;

Col Share(const char* name, double FrameworkProfile::*field) {
  return base::NumberColumn(name, field, base::Bounds::Interval(0, 1));
}

StatusOr<CpMode> ParseCpMode(std::string_view text) {
  const std::string v = base::ToLower(text);
  if (v == "ring" || v == "p2p")
    return CpMode::kRing;
  if (v == "allgather" || v == "all-gather")
    return CpMode::kAllGather;
  if (v == "alltoall" || v == "a2a" || v == "ulysses")
    return CpMode::kAllToAll;
  return ParseError("'" + v + "' is not ring, allgather or alltoall");
}

StatusOr<EpDispatch> ParseEpDispatchCell(std::string_view text) {
  StatusOr<EpDispatch> d = ParseEpDispatch(text);
  if (!d.ok())
    return ParseError(d.status().message());
  return d;
}

StatusOr<Elementwise> ParseElementwise(std::string_view text) {
  const std::string v = base::ToLower(text);
  for (Elementwise e : {Elementwise::kFused, Elementwise::kEager, Elementwise::kCompiled}) {
    if (v == ElementwiseName(e))
      return e;
  }
  return ParseError("'" + v + "' is not fused, eager or compiled");
}

StatusOr<SelectiveAc> ParseSelectiveAc(std::string_view text) {
  const std::string v = base::ToLower(text);
  for (SelectiveAc s : {SelectiveAc::kAttention, SelectiveAc::kOp}) {
    if (v == SelectiveAcName(s))
      return s;
  }
  return ParseError("'" + v + "' is not attention or op");
}

// Eager bytes per element beyond one fused kernel (FrameworkProfile::eager).
Col EagerBytesColumn(const char* name, double EagerTraffic::*member) {
  return base::NumberColumn<FrameworkProfile>(
             name, [member](FrameworkProfile& row) -> double& { return row.eager.*member; },
             base::Bounds::Interval(0, 512))
      .Unit("bytes", "HBM bytes per element an eager op moves beyond one fused kernel");
}

// A column of the training state (FrameworkProfile::state); an empty cell
// (serving rows) keeps the row's value.
template <typename T>
Col StateColumn(const char* name, T TrainingStateDtypes::*member, std::function<StatusOr<T>(std::string_view)> parse,
                std::function<std::string(T)> write) {
  Col c;
  c.name = name;
  c.parse = [member, parse](std::string_view text, FrameworkProfile& row) -> Status {
    if (text.empty())
      return Status::Ok();
    MFU_ASSIGN_OR_RETURN(row.state.*member, parse(text));
    return Status::Ok();
  };
  c.merge = [member](const FrameworkProfile& from, FrameworkProfile& to) { to.state.*member = from.state.*member; };
  c.write = [member, write](const FrameworkProfile& row) { return write(row.state.*member); };
  return c;
}

// A stored dtype: fp32, bf16, fp16 or fp8.
Col StateDType(const char* name, DType TrainingStateDtypes::*member) {
  return StateColumn<DType>(
      name, member,
      [](std::string_view text) -> StatusOr<DType> {
        const std::string v = base::ToLower(text);
        for (DType d : {DType::kFp32, DType::kBf16, DType::kFp16, DType::kFp8}) {
          if (v == DTypeName(d))
            return d;
        }
        return ParseError("'" + v + "' is not fp32, bf16, fp16 or fp8");
      },
      [](DType d) { return std::string(DTypeName(d)); });
}

Col StateFlag(const char* name, bool TrainingStateDtypes::*member) {
  return StateColumn<bool>(
      name, member, [](std::string_view text) { return base::ParseBoolCell(text); },
      [](bool v) { return std::string(v ? "1" : "0"); });
}

// Optimizer moments per parameter: 0 (plain SGD), 1 (momentum), 2 (Adam).
Col StateMoments() {
  return StateColumn<int>(
      "moments", &TrainingStateDtypes::moments_per_param,
      [](std::string_view text) -> StatusOr<int> {
        MFU_ASSIGN_OR_RETURN(int64_t v,
                             base::ParseIntegerCell(text, base::Bounds::Interval(0, 2), "'{}' is not 0, 1 or 2"));
        return static_cast<int>(v);
      },
      [](int v) { return std::to_string(v); });
}

constexpr const char* kNotAStage = "'{}' is not a ZeRO stage (0, 1, 2 or 3)";
const base::Bounds& StageBounds() {
  static const base::Bounds bounds = base::Bounds().Min(0, kNotAStage).Max(3, kNotAStage);
  return bounds;
}

// The ZeRO stages a framework implements: "0;1;3", each 0-3, ascending
// and unique when read. Under PP (`zero_stages_pp`) an empty cell means
// the same as without.
Col ZeroStages(const char* name, std::vector<int> FrameworkProfile::*member, bool may_be_empty) {
  Col c;
  c.name = name;
  c.parse = [member, may_be_empty](std::string_view text, FrameworkProfile& row) -> Status {
    std::vector<int> stages;
    for (const std::string& item : base::ParseListCell(text)) {
      MFU_ASSIGN_OR_RETURN(int64_t v, base::ParseIntegerCell(item, StageBounds(), kNotAStage));
      stages.push_back(static_cast<int>(v));
    }
    if (stages.empty() && !may_be_empty)
      return ParseError("needs at least one ZeRO stage (e.g. 0;1;3)");
    std::sort(stages.begin(), stages.end());
    stages.erase(std::unique(stages.begin(), stages.end()), stages.end());
    row.*member = std::move(stages);
    return Status::Ok();
  };
  c.merge = [member](const FrameworkProfile& from, FrameworkProfile& to) { to.*member = from.*member; };
  c.write = [member](const FrameworkProfile& row) {
    std::vector<std::string> items;
    for (int s : row.*member)
      items.push_back(std::to_string(s));
    return base::Join(items, ";");
  };
  return c;
}

// The stages `f` implements with `pp` pipeline stages.
const std::vector<int>& StagesWith(const FrameworkProfile& f, int64_t pp) {
  return pp > 1 && !f.zero_stages_pp.empty() ? f.zero_stages_pp : f.zero_stages;
}

// A row's default ZeRO stage is one it implements, and so is the stage of
// its FSDP under PP; it implements under PP only stages it implements.
Status CheckZeroDefault(const FrameworkProfile& row, const std::string& where) {
  if (!row.Implements(row.zero_stage))
    return ParseError(where + ": column 'zero_stage': " + std::to_string(row.zero_stage) +
                      " is not one of its zero_stages");
  for (int s : row.zero_stages_pp) {
    if (!row.Implements(s))
      return ParseError(where + ": column 'zero_stages_pp': " + std::to_string(s) + " is not one of its zero_stages");
  }
  return Status::Ok();
}

StatusOr<AttentionKernel> ParseAttentionCell(std::string_view text) {
  StatusOr<AttentionKernel> k = ParseAttentionKernel(text);
  if (!k.ok())
    return ParseError(k.status().message());
  return k;
}

// data/frameworks/frameworks.csv. Every cell of a row is read, an empty one
// too (an empty number is an error, an empty summary clears it); a new name
// starts from FrameworkProfile's defaults as a training framework.
const base::TableSchema<FrameworkProfile>& Schema() {
  static const base::TableSchema<FrameworkProfile> schema = [] {
    base::TableSchema<FrameworkProfile> s = base::KeyedSchema("framework", "name", &FrameworkProfile::name);
    s.lowercase_id = true;
    s.skip_empty_cells = false;
    s.keys = [](const FrameworkProfile& p) {
      std::vector<std::string> keys = {p.name};
      keys.insert(keys.end(), p.aliases.begin(), p.aliases.end());
      return keys;
    };
    s.validate = CheckZeroDefault;
    s.new_row = [](const std::vector<FrameworkProfile>&) {
      FrameworkProfile fresh;
      fresh.kind = "training";
      return fresh;
    };
    s.columns = {
        base::TextColumn("name", &FrameworkProfile::name),
        base::ListColumn<FrameworkProfile>("aliases", &FrameworkProfile::aliases, CheckAlias),
        base::WordColumn("kind", &FrameworkProfile::kind, {"training", "serving"}, "training or serving"),
        base::TextColumn("summary", &FrameworkProfile::summary),
        Share("dp_grad_overlap", &FrameworkProfile::dp_grad_overlap),
        Share("dp_param_overlap", &FrameworkProfile::dp_param_overlap),
        Share("fsdp_prefetch", &FrameworkProfile::fsdp_prefetch),
        base::BoolColumn("tp_overlap_supported", &FrameworkProfile::tp_overlap_supported),
        base::BoolColumn("tp_overlap_default", &FrameworkProfile::tp_overlap_default),
        base::EnumColumn<FrameworkProfile, CpMode>("cp_mode", &FrameworkProfile::cp_mode, ParseCpMode,
                                                   [](CpMode m) { return std::string(CpModeName(m)); }),
        base::EnumColumn<FrameworkProfile, EpDispatch>("ep_dispatch", &FrameworkProfile::ep_dispatch,
                                                       ParseEpDispatchCell,
                                                       [](EpDispatch d) { return std::string(EpDispatchName(d)); }),
        Share("cp_overlap", &FrameworkProfile::cp_overlap),
        Share("ep_overlap", &FrameworkProfile::ep_overlap),
        base::EnumColumn<FrameworkProfile, AttentionKernel>(
            "attention", &FrameworkProfile::attention, ParseAttentionCell,
            [](AttentionKernel k) { return std::string(AttentionKernelName(k)); }),
        base::BoolColumn("sequence_parallel", &FrameworkProfile::sequence_parallel),
        base::BoolColumn("fused_norm_residual", &FrameworkProfile::fused_norm_residual),
        base::EnumColumn<FrameworkProfile, Elementwise>("elementwise", &FrameworkProfile::elementwise, ParseElementwise,
                                                        [](Elementwise e) { return std::string(ElementwiseName(e)); }),
        EagerBytesColumn("eager_norm_fwd_bytes", &EagerTraffic::norm_fwd),
        EagerBytesColumn("eager_norm_bwd_bytes", &EagerTraffic::norm_bwd),
        EagerBytesColumn("eager_act_fwd_bytes", &EagerTraffic::act_fwd),
        EagerBytesColumn("eager_act_bwd_bytes", &EagerTraffic::act_bwd),
        EagerBytesColumn("eager_rope_fwd_bytes", &EagerTraffic::rope_fwd),
        EagerBytesColumn("eager_rope_bwd_bytes", &EagerTraffic::rope_bwd),
        base::EnumColumn<FrameworkProfile, SelectiveAc>(
            "selective_ac", &FrameworkProfile::selective_ac, ParseSelectiveAc,
            [](SelectiveAc ac) { return std::string(SelectiveAcName(ac)); }),
        base::WordColumn("fp8_recipe", &FrameworkProfile::fp8_recipe, {std::begin(kRecipes), std::end(kRecipes)},
                         "delayed, tensorwise, rowwise, blockwise, mxfp8 or nvfp4"),
        base::NumberColumn("fp8_cast_bytes", &FrameworkProfile::fp8_cast_bytes, base::Bounds::Interval(0, 32))
            .Unit("bytes", "HBM bytes per quantized FP8 operand element"),
        base::NumberColumn("fp8_saved_input_bytes", &FrameworkProfile::fp8_saved_input_bytes,
                           base::Bounds::Interval(1, 4))
            .Unit("bytes", "bytes per linear-layer input element kept for backward under FP8"),
        base::BoolColumn("zero3_per_tensor", &FrameworkProfile::zero3_per_tensor),
        base::BoolColumn("zero3_recompute_gather", &FrameworkProfile::zero3_recompute_gather),
        base::BoolColumn("zero3_list_collectives", &FrameworkProfile::zero3_list_collectives),
        base::BoolColumn("pp_scatter_gather", &FrameworkProfile::pp_scatter_gather),
        base::NumberColumn("moe_sync_us", &FrameworkProfile::moe_sync_us, base::Bounds::Interval(0, 10000))
            .Unit("us", "host synchronisation per MoE layer and pass"),
        base::IntegerColumn("zero_stage", &FrameworkProfile::zero_stage, StageBounds(), kNotAStage),
        ZeroStages("zero_stages", &FrameworkProfile::zero_stages, false),
        ZeroStages("zero_stages_pp", &FrameworkProfile::zero_stages_pp, true),
        base::IntegerColumn("fsdp_stage_pp", &FrameworkProfile::fsdp_stage_pp, base::Bounds::Interval(2, 3),
                            "'{}' is not 2 or 3"),
        StateDType("weights_dtype", &TrainingStateDtypes::weights),
        StateDType("compute_dtype", &TrainingStateDtypes::compute),
        StateDType("main_grads_dtype", &TrainingStateDtypes::main_grads),
        StateFlag("fp32_master", &TrainingStateDtypes::fp32_master),
        StateFlag("fp32_grad_copy", &TrainingStateDtypes::fp32_grad_copy),
        StateDType("moments_dtype", &TrainingStateDtypes::moments),
        StateMoments(),
        base::TextColumn("source", &FrameworkProfile::source),
    };
    return s;
  }();
  return schema;
}

}  // namespace

bool FrameworkProfile::Implements(int stage, int64_t pp) const {
  const std::vector<int>& stages = StagesWith(*this, pp);
  return std::find(stages.begin(), stages.end(), stage) != stages.end();
}

Recompute FrameworkProfile::RecomputeOf(Recompute asked) const {
  return asked == Recompute::kSelective && selective_ac == SelectiveAc::kOp ? Recompute::kSelectiveOp : asked;
}

int FrameworkProfile::FsdpStage(int64_t pp) const {
  return pp > 1 ? fsdp_stage_pp : 3;
}

int FrameworkProfile::DefaultZeroStage(int64_t pp) const {
  const int wanted = zero_stage == 3 ? FsdpStage(pp) : zero_stage;
  int stage = StagesWith(*this, pp).front();
  for (int s : StagesWith(*this, pp)) {
    if (s <= wanted)
      stage = s;
  }
  return stage;
}

Status CheckZeroStage(const FrameworkProfile& framework, int stage, int64_t pp) {
  if (stage < 0 || stage > 3 || framework.Implements(stage, pp))
    return Status::Ok();
  std::vector<std::string> runs;
  for (int s : StagesWith(framework, pp))
    runs.push_back(std::to_string(s));
  const std::string with_pp = pp > 1 ? " with pipeline parallelism (pp " + std::to_string(pp) + ")" : "";
  return InvalidArgumentError(base::Param("zero") + " " + std::to_string(stage) + ": framework " + framework.name +
                              " does not implement ZeRO stage " + std::to_string(stage) + with_pp + " (it runs " +
                              base::Join(runs, ", ") + (pp > 1 ? " there" : "") + "; data/frameworks/frameworks.csv)");
}

const char* AttentionKernelName(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::kBest:
      return "best";
    case AttentionKernel::kFa2:
      return "fa2";
    case AttentionKernel::kTriton:
      return "triton";
    case AttentionKernel::kUnfused:
      return "unfused";
  }
  return "?";
}

StatusOr<AttentionKernel> ParseAttentionKernel(std::string_view name) {
  const std::string v = base::ToLower(name);
  if (v == "best" || v == "cudnn" || v == "fa3" || v == "fa4" || v == "te")
    return AttentionKernel::kBest;
  if (v == "fa2" || v == "sdpa" || v == "flash")
    return AttentionKernel::kFa2;
  if (v == "triton")
    return AttentionKernel::kTriton;
  if (v == "unfused" || v == "eager" || v == "math")
    return AttentionKernel::kUnfused;
  return InvalidArgumentError("attention kernel '" + v + "' is not best (cudnn, fa3, fa4), fa2, triton or unfused");
}

const char* SelectiveAcName(SelectiveAc s) {
  return s == SelectiveAc::kOp ? "op" : "attention";
}

const char* ElementwiseName(Elementwise e) {
  switch (e) {
    case Elementwise::kFused:
      return "fused";
    case Elementwise::kEager:
      return "eager";
    case Elementwise::kCompiled:
      return "compiled";
  }
  return "?";
}

StatusOr<Elementwise> ApplyCompile(const FrameworkProfile& framework, std::string_view setting, std::string_view what) {
  const std::string v = base::ToLower(base::Trim(setting));
  if (v.empty())
    return framework.elementwise;
  bool on = false;
  if (v == "on" || v == "yes" || v == "1" || v == "true") {
    on = true;
  } else if (!(v == "off" || v == "no" || v == "0" || v == "false")) {
    return InvalidArgumentError(std::string(what) + ": '" + v + "' is not on or off");
  }
  if (framework.elementwise == Elementwise::kFused) {
    return InvalidArgumentError(std::string(what) + " " + v + ": framework " + framework.name +
                                " runs its own fused elementwise kernels (elementwise fused, "
                                "data/frameworks/frameworks.csv); torch.compile does not apply");
  }
  return on ? Elementwise::kCompiled : Elementwise::kEager;
}

StatusOr<EpDispatch> ParseEpDispatch(std::string_view text) {
  const std::string v = base::ToLower(text);
  if (v == "alltoall" || v == "a2a")
    return EpDispatch::kAllToAll;
  if (v == "deepep" || v == "hybridep" || v == "flex")
    return EpDispatch::kDeepEp;
  return InvalidArgumentError("'" + v + "' is not alltoall or deepep");
}

const char* EpDispatchName(EpDispatch dispatch) {
  return dispatch == EpDispatch::kDeepEp ? "deepep" : "alltoall";
}

const char* CpModeName(CpMode mode) {
  switch (mode) {
    case CpMode::kRing:
      return "ring";
    case CpMode::kAllGather:
      return "allgather";
    case CpMode::kAllToAll:
      return "alltoall";
  }
  return "?";
}

StatusOr<FrameworkDb> FrameworkDb::LoadBuiltin() {
  for (const base::EmbeddedFile& file : base::PerfDataFiles()) {
    if (file.path != kBuiltinFrameworksPath)
      continue;
    FrameworkDb db;
    Status s = db.AddCsv(file.bytes, "data/frameworks/frameworks.csv");
    if (!s.ok())
      return InternalError("built-in framework table is invalid: " + s.message());
    return db;
  }
  return InternalError("built-in framework table missing from the binary");
}

StatusOr<const FrameworkDb*> FrameworkDb::Builtin() {
  static const StatusOr<FrameworkDb> db = LoadBuiltin();
  if (!db.ok())
    return db.status();
  return &*db;
}

Status FrameworkDb::AddCsv(std::string_view text, std::string_view origin) {
  return base::MergeTableCsv(Schema(), profiles_, text, origin);
}

Status FrameworkDb::AddFile(const FileSystem& fs, const std::string& path) {
  MFU_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(path));
  return AddCsv(text, path);
}

std::string FrameworkDb::ToCsv() const {
  return base::WriteTableCsv(Schema(), profiles_);
}

StatusOr<const FrameworkProfile*> FrameworkDb::Find(std::string_view name) const {
  const std::string key = base::ToLower(base::Trim(name));
  std::vector<std::string> names;
  for (const FrameworkProfile& p : profiles_) {
    if (p.name == key || std::find(p.aliases.begin(), p.aliases.end(), key) != p.aliases.end())
      return &p;
    names.push_back(p.name);
  }
  const std::string closest = base::ClosestMatch(key, names);
  return InvalidArgumentError("unknown framework '" + key + "'" +
                              (closest.empty() ? std::string() : " (did you mean '" + closest + "'?)") +
                              "; known: " + base::Join(names, ", "));
}

StatusOr<const FrameworkProfile*> FrameworkDb::FindTraining(std::string_view name) const {
  MFU_ASSIGN_OR_RETURN(const FrameworkProfile* p, Find(name));
  if (p->kind != "training")
    return InvalidArgumentError(p->name + " is a " + p->kind + " framework; training needs a training one");
  return p;
}

}  // namespace mfu
