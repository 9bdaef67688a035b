#pragma once

// The accelerator database: dense peak FLOP/s per dtype, memory, bandwidths
// and interconnect for 40+ accelerators, shipped in data/hardware/ and
// extensible with a user's CSV file. Sparse (2:4) figures are never peaks.

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/status.h"

namespace mfu {

enum class DType {
  kFp64 = 0,
  kFp64Tensor,
  kFp32,
  kTf32,
  kBf16,
  kFp16,
  kFp8,
  kFp6,
  kFp4,
  kInt8,
};
inline constexpr size_t kNumDTypes = 10;

// "bf16", "fp8", ... (the CSV column prefix).
const char* DTypeName(DType dtype);
// Parses a dtype or precision name, case-insensitively, with common spellings
// ("bfloat16", "float16", "half", "fp8-e4m3", "int8"). kInvalidArgument lists
// the accepted names.
StatusOr<DType> ParseDType(std::string_view text);
// A storage dtype (weights, gradients, KV cache) for memory and serving
// estimates: ParseDType plus the 4-bit storage formats, all half a byte per
// element ("int4", "nvfp4", "mxfp4" -> kFp4). One rule for `mfu memory` and
// `mfu infer`.
StatusOr<DType> ParseStorageDType(std::string_view text);
// The name to echo for a storage dtype spelled `text`: the 4-bit storage
// formats keep their own name ("int4", "nvfp4", "mxfp4"; all kFp4 for bytes),
// every other spelling its DTypeName ("bfloat16" -> "bf16"). "" when `text`
// does not parse.
std::string StorageDTypeName(std::string_view text);
// Bytes per element of `dtype` for memory estimates (fp6/fp4 fractional).
double DTypeBytes(DType dtype);

struct Accelerator {
  std::string id;                    // unique, lowercase, e.g. "h100-sxm5-80gb"
  std::string vendor;                // "NVIDIA"
  std::string name;                  // "H100"
  std::string form_factor;           // "SXM5 80GB"
  std::vector<std::string> aliases;  // extra names, e.g. Kineto's device name
  // Dense TFLOP/s (TOP/s for int8) of one device as the framework counts it
  // (an MI250X GCD, a TPU7x TensorCore); 0 = not supported or unknown.
  std::array<double, kNumDTypes> peak_tflops{};
  double memory_gb = 0;
  std::string memory_type;
  double memory_bw_tbps = 0;
  double l2_mb = 0;
  int sm_count = 0;
  double boost_clock_mhz = 0;
  // Sustained / boost tensor clock of a power-capped part (0: not capped,
  // the datasheet clock). The datasheet peaks stay the MFU denominator; the
  // performance model runs compute at peak x this.
  double power_cap_clock_fraction = 0;
  double tdp_w = 0;
  std::string scaleup_interconnect;
  double scaleup_bw_per_direction_gbs = 0;
  double scaleup_bw_bidir_gbs = 0;
  std::string scaleout_nic;
  std::string sparse_note;  // what the vendor's headline sparse figure is
  std::string confidence;   // high / medium / low
  std::string source;
  std::string notes;

  // Dense peak in FLOP/s (not TFLOP/s) for `dtype`; 0 when unsupported.
  double peak_flops(DType dtype) const { return peak_tflops[static_cast<size_t>(dtype)] * 1e12; }
  std::string display_name() const;  // "NVIDIA H100 SXM5 80GB"
};

class HardwareDb {
 public:
  // The database compiled into the binary (data/hardware/accelerators.csv).
  // kInternal only if the embedded file is missing or invalid (a build bug).
  static StatusOr<HardwareDb> LoadBuiltin();
  // A database of the rows of `csv` alone, which has the columns of
  // data/hardware/accelerators.csv (a subset is fine: id plus the columns to
  // set; a new id needs no 'accelerator' here). `origin` names the file in
  // errors ("my.csv:12: column 'bf16_tflops': 'abc' is not a number").
  // kParse for malformed CSV, unknown columns, a missing 'id' column, text in
  // a numeric column, duplicate ids or a name shared by two entries;
  // kOutOfRange for negative numbers or peaks >= 1e5 TFLOP/s.
  static StatusOr<HardwareDb> ParseCsv(std::string_view csv, std::string_view origin);

  // Adds the entries of CSV text: a row whose id exists replaces the
  // non-empty columns of that entry (aliases are appended); a new id adds an
  // entry and needs a non-empty 'accelerator'. All or nothing: on error the
  // database is unchanged. Errors as ParseCsv. Invalidates pointers returned
  // by Find.
  Status AddCsv(std::string_view csv, std::string_view origin);
  // As AddCsv for the file at `path` read through `fs`; kNotFound if it
  // cannot be read.
  Status AddFile(const FileSystem& fs, const std::string& path);
  // The database as CSV with every column (ParseCsv reads it back equal).
  std::string ToCsv() const;

  // Finds an accelerator by id, alias or a forgiving name ("h100",
  // "H100 SXM5 80GB", "NVIDIA H100 80GB HBM3"): vendor words are ignored and
  // whole words must match, so "H20" never finds "H200". kInvalidArgument when
  // nothing matches (with a "did you mean") or several entries match equally
  // well (listing the candidates). The pointer lives as long as this database
  // is neither destroyed nor merged into.
  StatusOr<const Accelerator*> Find(std::string_view name) const;

  const std::vector<Accelerator>& all() const { return accelerators_; }

 private:
  std::vector<Accelerator> accelerators_;
};

}  // namespace mfu
