#include "base/file_system.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace mfu {

StatusOr<std::string> RealFileSystem::ReadFile(const std::string& path) const {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return NotFoundError(path + ": cannot open file (" + std::strerror(errno) + ")");
  }
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad())
    return NotFoundError(path + ": read error");
  return out.str();
}

StatusOr<std::string> InMemoryFileSystem::ReadFile(const std::string& path) const {
  auto it = files_.find(path);
  if (it == files_.end())
    return NotFoundError(path + ": cannot open file (no such file)");
  return it->second;
}

}  // namespace mfu
