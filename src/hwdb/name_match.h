#pragma once

// Forgiving accelerator-name lookup for HardwareDb::Find. Kept apart from the
// CSV loader so the matching rules can be read (and tested) in one place.

#include <string>
#include <string_view>
#include <vector>

#include "mfu/hwdb.h"
#include "mfu/status.h"

namespace mfu::hwdb {

// Splits `name` into lowercase tokens. Separators are space, tab, '-', '_',
// '/', '(', ')', ',', ';', ':' and '+'. Vendor words (nvidia, amd, intel,
// google, aws, huawei, habana, instinct, tesla) are dropped, so
// "NVIDIA A100-SXM4-80GB" -> {"a100", "sxm4", "80gb"}.
std::vector<std::string> NameTokens(std::string_view name);

// The tokens of `name` joined by single spaces: two names with equal keys
// name the same thing ("NVIDIA H100 PCIe" and "h100-pcie").
std::string NameKey(std::string_view name);

// Every key under which `accelerator` can be found exactly: its id, its
// aliases and its display name.
std::vector<std::string> ExactKeys(const Accelerator& accelerator);

// Returns the index in `entries` of the accelerator `query` names, trying in
// order: exact id; exact key (alias or display name); token match, where every
// query token must be a token of the entry's id, vendor, name, form factor or
// aliases (whole tokens only, so "h20" never matches "h200"). When several
// entries match, the one with an alias or id made only of query tokens wins
// (the family default: "h100 80gb" -> the SXM part, which has the alias
// "h100").
//
// kInvalidArgument, prefixed "gpu '`query`': ", for an unknown name (with a
// "did you mean") or an ambiguous one (listing the candidate ids).
StatusOr<size_t> FindAccelerator(const std::vector<Accelerator>& entries, std::string_view query);

}  // namespace mfu::hwdb
