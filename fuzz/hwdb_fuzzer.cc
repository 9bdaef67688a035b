// Fuzzes the accelerator CSV loader and name lookup: any bytes must give a
// database or a Status, never a crash, and lookups on a parsed database must
// return an entry or a Status; three invariants are checked below. Seeds:
// fuzz/corpus/hwdb/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mfu/hwdb.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  mfu::StatusOr<mfu::HardwareDb> db = mfu::HardwareDb::ParseCsv(text, "fuzz.csv");
  if (!db.ok())
    return 0;
  for (std::string_view name : {"h100", "NVIDIA H100 80GB HBM3", "a100 pcie", "x", "", "h1000"}) {
    (void)db->Find(name);
  }
  // Invariant: every entry is found by its own id (ids are unique).
  for (const mfu::Accelerator& a : db->all()) {
    mfu::StatusOr<const mfu::Accelerator*> found = db->Find(a.id);
    if (!found.ok() || *found != &a)
      __builtin_trap();
    (void)db->Find(a.display_name());
  }
  // Invariant: merging valid input onto itself succeeds (every id exists and
  // aliases are deduplicated).
  if (!db->AddCsv(text, "fuzz.csv").ok())
    __builtin_trap();
  // Invariant: the table written back reads back the same.
  const std::string written = db->ToCsv();
  mfu::StatusOr<mfu::HardwareDb> again = mfu::HardwareDb::ParseCsv(written, "written.csv");
  if (!again.ok() || again->ToCsv() != written)
    __builtin_trap();
  return 0;
}
