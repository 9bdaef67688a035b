#pragma once

// File access goes through this interface so tests and fuzzers never touch the
// disk (ninja's DiskInterface / VirtualFileSystem). Every library function
// that reads a file takes one; only front ends construct a RealFileSystem.
//
// Reads are bounded and refuse what is not a regular file, so a path such as
// /dev/zero, /dev/urandom or a FIFO fails at once with a one-line message
// naming it instead of filling memory or blocking. Errors are kNotFound (the
// environment is wrong: exit code 1) and their messages start with the path:
//   "<path>: cannot open file (no such file or directory)"
//   "<path>: permission denied"
//   "<path>: not a regular file (character device)"
//   "<path>: is a directory, expected a file"
//   "<path>: too large (70000000 bytes; the limit is 64 MiB)"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "mfu/status.h"

namespace mfu {

// What a path names. kOther covers FIFOs, sockets and devices
// (FileInfo::description says which).
enum class FileKind { kMissing, kRegular, kDirectory, kOther };

struct FileInfo {
  FileKind kind = FileKind::kMissing;
  std::string description;  // "regular file", "directory", "fifo", "character device", ...
  uint64_t size_bytes = 0;  // regular files only
};

// One entry of a directory listing (names only, no "." or "..").
struct DirectoryEntry {
  std::string name;
  FileKind kind = FileKind::kMissing;
};

// Read limits. A model config.json is a few kB (the largest shipped preset is
// under 10 kB); 64 MiB leaves room for configs that inline vocabularies. Data
// CSVs (hardware, clusters, training runs, kernel figures, operator
// profiles, efficiency tables) default to 256 MiB. Trace files have their own
// bounds (docs/trace.md).
inline constexpr uint64_t kMaxConfigFileBytes = uint64_t{64} << 20;
inline constexpr uint64_t kMaxDataFileBytes = uint64_t{256} << 20;

// A whole regular file as one read-only view (FileSystem::Map): the disk
// maps it, so a reader that scans it once pays no copy; an in-memory file
// system lends its string.
class MappedFile {
 public:
  virtual ~MappedFile() = default;
  virtual std::string_view bytes() const = 0;
  // A mapping of the file itself: pages a reader is done with may be dropped
  // from memory (madvise) and are read again from the file if touched. Not
  // so for bytes held in memory, which dropping would zero.
  virtual bool file_backed() const { return false; }
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // Returns the whole content of the regular file `path`, at most
  // kMaxDataFileBytes. Errors as in the header comment.
  StatusOr<std::string> ReadFile(const std::string& path) const { return ReadFile(path, kMaxDataFileBytes); }
  // As above with an explicit limit: a file larger than `max_bytes` is an
  // error naming the file and the limit, and no more than `max_bytes` + 1
  // bytes are ever read.
  virtual StatusOr<std::string> ReadFile(const std::string& path, uint64_t max_bytes) const = 0;
  // What `path` names, following symbolic links. A missing path is not an
  // error (kind kMissing); a permission problem on the way is kNotFound
  // "<path>: permission denied".
  virtual StatusOr<FileInfo> Stat(const std::string& path) const = 0;
  // The entries of directory `path`, sorted by name. kNotFound for a missing
  // path, "<path>: permission denied" for an unreadable directory and
  // "<path>: not a directory" for anything else.
  virtual StatusOr<std::vector<DirectoryEntry>> ListDirectory(const std::string& path) const = 0;
  // Streams the regular file `path` to `sink` in pieces of at most
  // `chunk_bytes` (> 0), in order, with no limit on the total size, so a
  // reader's memory follows what it keeps, not the file's size (training
  // logs of many GiB). Stops at the first error `sink` returns and returns
  // it. Open errors as in the header comment. The default reads the file
  // whole (bounded by kMaxDataFileBytes) and slices it; RealFileSystem reads
  // chunk by chunk.
  virtual Status ReadFileInChunks(const std::string& path, uint64_t chunk_bytes,
                                  const std::function<Status(std::string_view)>& sink) const;
  // The regular file `path` whole, as a view that lives as long as the
  // result, with no limit on its size (the trace parser's input: 526 MB
  // traces are scanned once, in place). Open errors as in the header
  // comment. The default reads the file (bounded by kMaxDataFileBytes) and
  // owns the bytes; RealFileSystem maps it (and reads it when it cannot be
  // mapped).
  virtual StatusOr<std::unique_ptr<MappedFile>> Map(const std::string& path) const;
};

// The real disk.
class RealFileSystem final : public FileSystem {
 public:
  using FileSystem::ReadFile;
  StatusOr<std::string> ReadFile(const std::string& path, uint64_t max_bytes) const override;
  StatusOr<FileInfo> Stat(const std::string& path) const override;
  StatusOr<std::vector<DirectoryEntry>> ListDirectory(const std::string& path) const override;
  Status ReadFileInChunks(const std::string& path, uint64_t chunk_bytes,
                          const std::function<Status(std::string_view)>& sink) const override;
  StatusOr<std::unique_ptr<MappedFile>> Map(const std::string& path) const override;
};

// An in-memory tree for tests: files by full path ("a/b/config.json"); the
// directories are implied by the files' parents plus AddDirectory. Paths are
// compared as given (no normalisation beyond a trailing '/').
class InMemoryFileSystem final : public FileSystem {
 public:
  void AddFile(const std::string& path, std::string content) { files_[path] = std::move(content); }
  void AddDirectory(const std::string& path) { directories_.insert(path); }
  // Makes `path` answer "permission denied" to every call.
  void Deny(const std::string& path) { denied_.insert(path); }
  using FileSystem::ReadFile;
  StatusOr<std::string> ReadFile(const std::string& path, uint64_t max_bytes) const override;
  StatusOr<FileInfo> Stat(const std::string& path) const override;
  StatusOr<std::vector<DirectoryEntry>> ListDirectory(const std::string& path) const override;

 private:
  bool IsDirectory(const std::string& path) const;
  std::map<std::string, std::string> files_;
  std::set<std::string> directories_;
  std::set<std::string> denied_;
};

// "64 MiB" for 64 << 20: how limits are written in messages.
std::string FormatByteLimit(uint64_t bytes);

}  // namespace mfu
