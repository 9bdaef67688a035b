#pragma once

// File access goes through this interface so tests and fuzzers never touch the
// disk (ninja's DiskInterface / VirtualFileSystem). Every library function
// that reads a file takes one; only front ends construct a RealFileSystem.

#include <map>
#include <string>

#include "mfu/status.h"

namespace mfu {

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // Returns the whole content of `path`, or kNotFound naming the path.
  virtual StatusOr<std::string> ReadFile(const std::string& path) const = 0;
};

// The real disk.
class RealFileSystem final : public FileSystem {
 public:
  StatusOr<std::string> ReadFile(const std::string& path) const override;
};

// An in-memory map from path to content, for tests.
class InMemoryFileSystem final : public FileSystem {
 public:
  void AddFile(const std::string& path, std::string content) { files_[path] = std::move(content); }
  StatusOr<std::string> ReadFile(const std::string& path) const override;

 private:
  std::map<std::string, std::string> files_;
};

}  // namespace mfu
