#include "fleet/goodput_counters.h"

#include <functional>
#include <string_view>
#include <utility>

#include "mfu/goodput.h"

namespace mfu::fleet {
namespace {

constexpr uint64_t kMaxEventFileBytes = uint64_t{1} << 30;

}  // namespace

GoodputCounters::GoodputCounters(const FileSystem* fs, const std::map<std::string, std::vector<std::string>>& events)
    : fs_(fs) {
  for (const auto& [id, files] : events)
    jobs_.push_back({id, files, std::vector<uint64_t>(files.size(), 0), 0, {}, false, {}});
}

Status GoodputCounters::Read(Job& job) {
  job.read_at = std::chrono::steady_clock::now();
  std::vector<GoodputEvent> events;
  std::vector<uint64_t> sizes;
  size_t hash = 0;
  for (const std::string& file : job.files) {
    const std::string where = "parameter 'goodput_events' " + job.id + "=" + file + ": ";
    StatusOr<std::string> text = fs_->ReadFile(file, kMaxEventFileBytes);
    if (!text.ok())
      return Status(text.status().code(), where + text.status().message());
    sizes.push_back(text->size());
    hash = hash * 31 + std::hash<std::string_view>()(*text);
    StatusOr<std::vector<GoodputEvent>> read = ReadGoodputEvents(*text, file);
    if (!read.ok())
      return Status(read.status().code(), where + read.status().message());
    events.insert(events.end(), std::make_move_iterator(read->begin()), std::make_move_iterator(read->end()));
  }
  job.sizes = sizes;
  if (job.have && hash == job.content_hash)
    return Status::Ok();  // rewritten with the same content
  StatusOr<GoodputReport> report = ComputeGoodput(events);
  if (!report.ok())
    return Status(report.status().code(), "parameter 'goodput_events' " + job.id + ": " + report.status().message());
  job.content_hash = hash;
  job.have = true;
  job.totals.job_id = job.id;
  job.totals.productive_s = report->productive_s;
  job.totals.badput_s = report->badput_s;
  return Status::Ok();
}

Status GoodputCounters::Load() {
  if (fs_ == nullptr && !jobs_.empty())
    return InvalidArgumentError("parameter 'goodput_events': no file system to read the event files");
  for (Job& job : jobs_)
    MFU_RETURN_IF_ERROR(Read(job));
  return Status::Ok();
}

void GoodputCounters::Refresh(std::vector<std::string>& errors) {
  const auto now = std::chrono::steady_clock::now();
  for (Job& job : jobs_) {
    bool changed = std::chrono::duration<double>(now - job.read_at).count() >= kRereadS;
    for (size_t i = 0; i < job.files.size() && !changed; ++i) {
      StatusOr<FileInfo> info = fs_->Stat(job.files[i]);
      changed = !info.ok() || info->kind != FileKind::kRegular || info->size_bytes != job.sizes[i];
    }
    if (!changed)
      continue;
    if (Status s = Read(job); !s.ok())
      errors.push_back(s.message());
  }
}

std::vector<FleetJobGoodput> GoodputCounters::Totals() const {
  std::vector<FleetJobGoodput> out;
  for (const Job& job : jobs_)
    if (job.have)
      out.push_back(job.totals);
  return out;
}

}  // namespace mfu::fleet
