#include "cli/output_files.h"

#include <filesystem>
#include <fstream>
#include <system_error>

#include "cli/command.h"

namespace mfu::cli {

Status WriteOutputFiles(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return NotFoundError(dir + ": cannot create directory (" + ec.message() + ")");
  for (const auto& [name, content] : files) {
    std::ofstream f(std::filesystem::path(dir) / name);
    if (!(f << InFlagSpelling(content)))  // the library's "parameter 'python'" as --python
      return NotFoundError(dir + "/" + name + ": cannot write");
  }
  return Status::Ok();
}

Status WriteOutputFile(const std::string& dir, const std::string& name,
                       const std::function<void(std::ostream&)>& write) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return NotFoundError(dir + ": cannot create directory (" + ec.message() + ")");
  std::ofstream f(std::filesystem::path(dir) / name, std::ios::binary);
  if (f)
    write(f);
  if (!f.flush())
    return NotFoundError(dir + "/" + name + ": cannot write");
  return Status::Ok();
}

}  // namespace mfu::cli
