#pragma once

// The goodput side of `mfu fleet serve --goodput-events JOB=FILE...`: each
// job's event files read, merged and accounted (ComputeGoodput), re-read
// when a file changes. Used by the refreshing thread only (the exporter
// lets one refresh run at a time), so it has no lock of its own.

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mfu/file_system.h"
#include "mfu/fleet_exporter.h"
#include "mfu/status.h"

namespace mfu::fleet {

class GoodputCounters {
 public:
  // A same-size rewrite of a file is noticed this long after the last read.
  static constexpr double kRereadS = 30;

  GoodputCounters(const FileSystem* fs, const std::map<std::string, std::vector<std::string>>& events);

  // Reads every job's files now. The first error, prefixed
  // "--goodput-events JOB=FILE: ".
  Status Load();

  // Re-reads the jobs whose files changed (size, or kRereadS since the last
  // read). A job whose files now fail keeps its last totals; its error is
  // returned in `errors` (one line each).
  void Refresh(std::vector<std::string>& errors);

  // The totals, in job id order.
  std::vector<FleetJobGoodput> Totals() const;

 private:
  struct Job {
    std::string id;
    std::vector<std::string> files;
    std::vector<uint64_t> sizes;
    size_t content_hash = 0;
    std::chrono::steady_clock::time_point read_at;
    bool have = false;
    FleetJobGoodput totals;
  };
  Status Read(Job& job);

  const FileSystem* fs_;
  std::vector<Job> jobs_;
};

}  // namespace mfu::fleet
