#include "base/file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace mfu {

namespace {

std::string KindDescription(mode_t mode) {
  if (S_ISREG(mode))
    return "regular file";
  if (S_ISDIR(mode))
    return "directory";
  if (S_ISCHR(mode))
    return "character device";
  if (S_ISBLK(mode))
    return "block device";
  if (S_ISFIFO(mode))
    return "fifo";
  if (S_ISSOCK(mode))
    return "socket";
  return "special file";
}

FileKind KindOf(mode_t mode) {
  if (S_ISREG(mode))
    return FileKind::kRegular;
  if (S_ISDIR(mode))
    return FileKind::kDirectory;
  return FileKind::kOther;
}

// The one-line error for a failed open/stat/opendir: permission problems are
// said as such, everything else with the system's words.
Status ErrnoError(const std::string& path, int error, const char* what) {
  if (error == EACCES || error == EPERM)
    return NotFoundError(path + ": permission denied");
  if (error == ENOTDIR && std::string_view(what) == "cannot list directory")
    return NotFoundError(path + ": not a directory");
  return NotFoundError(path + ": " + what + " (" + std::strerror(error) + ")");
}

Status NotRegular(const std::string& path, FileKind kind, const std::string& description) {
  if (kind == FileKind::kDirectory)
    return NotFoundError(path + ": is a directory, expected a file");
  return NotFoundError(path + ": not a regular file (" + description + ")");
}

Status TooLarge(const std::string& path, uint64_t size, uint64_t max_bytes) {
  return NotFoundError(path + ": too large (" + (size > 0 ? std::to_string(size) + " bytes" : "over the limit") +
                       "; the limit is " + FormatByteLimit(max_bytes) + ")");
}

// Closes the descriptor on every path out of ReadFile.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// After open(path, O_RDONLY | O_NONBLOCK) gave `fd`: the open error, or
// what fstat says when `path` is not a regular file. O_NONBLOCK: opening a
// FIFO with no writer must not wait; this check refuses it before any read.
Status CheckOpenedRegular(const std::string& path, int fd, struct stat& st) {
  if (fd < 0)
    return ErrnoError(path, errno, "cannot open file");
  if (::fstat(fd, &st) != 0)
    return ErrnoError(path, errno, "cannot stat file");
  if (!S_ISREG(st.st_mode))
    return NotRegular(path, KindOf(st.st_mode), KindDescription(st.st_mode));
  return Status::Ok();
}

}  // namespace

std::string FormatByteLimit(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (uint64_t{1} << 20) && bytes % (uint64_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (uint64_t{1} << 10) && bytes % (uint64_t{1} << 10) == 0)
    return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

StatusOr<std::string> RealFileSystem::ReadFile(const std::string& path, uint64_t max_bytes) const {
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  MFU_RETURN_IF_ERROR(CheckOpenedRegular(path, fd.get(), st));
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes)
    return TooLarge(path, size, max_bytes);
  std::string out;
  out.resize(static_cast<size_t>(size));
  size_t done = 0;
  // A file that grows while read is still bounded: stop at max_bytes + 1.
  while (true) {
    if (done == out.size()) {
      if (out.size() > max_bytes)
        return TooLarge(path, 0, max_bytes);
      out.resize(std::min<size_t>(static_cast<size_t>(max_bytes) + 1, out.size() + 65536));
    }
    ssize_t n = ::read(fd.get(), out.data() + done, out.size() - done);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return ErrnoError(path, errno, "read error");
    }
    if (n == 0)
      break;
    done += static_cast<size_t>(n);
  }
  if (done > max_bytes)
    return TooLarge(path, done, max_bytes);
  out.resize(done);
  return out;
}

Status FileSystem::ReadFileInChunks(const std::string& path, uint64_t chunk_bytes,
                                    const std::function<Status(std::string_view)>& sink) const {
  StatusOr<std::string> text = ReadFile(path);
  if (!text.ok())
    return text.status();
  const std::string_view all = *text;
  const size_t step = static_cast<size_t>(std::max<uint64_t>(chunk_bytes, 1));
  for (size_t at = 0; at < all.size(); at += step)
    MFU_RETURN_IF_ERROR(sink(all.substr(at, step)));
  return Status::Ok();
}

namespace {

// Bytes a MappedFile owns: read, not mapped.
class OwnedFile final : public MappedFile {
 public:
  explicit OwnedFile(std::string bytes) : bytes_(std::move(bytes)) {}
  std::string_view bytes() const override { return bytes_; }

 private:
  std::string bytes_;
};

// Reads the open descriptor `fd` of `path` to its end in pieces of
// `chunk_bytes` and hands each to `sink`; stops at its first error.
Status ReadChunks(const std::string& path, int fd, size_t chunk_bytes,
                  const std::function<Status(std::string_view)>& sink) {
  std::string buffer(chunk_bytes, '\0');
  while (true) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return ErrnoError(path, errno, "read error");
    }
    if (n == 0)
      return Status::Ok();
    MFU_RETURN_IF_ERROR(sink(std::string_view(buffer.data(), static_cast<size_t>(n))));
  }
}

// A private read-only mapping, unmapped with the object.
class MappedRegion final : public MappedFile {
 public:
  MappedRegion(void* data, size_t size) : data_(data), size_(size) {}
  ~MappedRegion() override { ::munmap(data_, size_); }
  MappedRegion(const MappedRegion&) = delete;
  MappedRegion& operator=(const MappedRegion&) = delete;
  std::string_view bytes() const override { return {static_cast<const char*>(data_), size_}; }
  bool file_backed() const override { return true; }

 private:
  void* data_;
  size_t size_;
};

}  // namespace

StatusOr<std::unique_ptr<MappedFile>> FileSystem::Map(const std::string& path) const {
  MFU_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return std::unique_ptr<MappedFile>(std::make_unique<OwnedFile>(std::move(bytes)));
}

StatusOr<std::unique_ptr<MappedFile>> RealFileSystem::Map(const std::string& path) const {
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  MFU_RETURN_IF_ERROR(CheckOpenedRegular(path, fd.get(), st));
  const auto size = static_cast<size_t>(st.st_size);
  if (size > 0) {
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (map != MAP_FAILED) {
      ::madvise(map, size, MADV_SEQUENTIAL);
      return std::unique_ptr<MappedFile>(std::make_unique<MappedRegion>(map, size));
    }
  }
  // Empty, or not mappable: read it through the descriptor, unbounded.
  std::string bytes;
  MFU_RETURN_IF_ERROR(ReadChunks(path, fd.get(), size_t{1} << 20, [&bytes](std::string_view chunk) {
    bytes.append(chunk);
    return Status::Ok();
  }));
  return std::unique_ptr<MappedFile>(std::make_unique<OwnedFile>(std::move(bytes)));
}

Status RealFileSystem::ReadFileInChunks(const std::string& path, uint64_t chunk_bytes,
                                        const std::function<Status(std::string_view)>& sink) const {
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  MFU_RETURN_IF_ERROR(CheckOpenedRegular(path, fd.get(), st));
  return ReadChunks(path, fd.get(), static_cast<size_t>(std::clamp<uint64_t>(chunk_bytes, 1, uint64_t{1} << 30)), sink);
}

StatusOr<FileInfo> RealFileSystem::Stat(const std::string& path) const {
  struct stat st {};
  FileInfo info;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return info;
    return ErrnoError(path, errno, "cannot stat");
  }
  info.kind = KindOf(st.st_mode);
  info.description = KindDescription(st.st_mode);
  if (info.kind == FileKind::kRegular)
    info.size_bytes = static_cast<uint64_t>(st.st_size);
  return info;
}

StatusOr<std::vector<DirectoryEntry>> RealFileSystem::ListDirectory(const std::string& path) const {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr)
    return ErrnoError(path, errno, "cannot list directory");
  std::vector<DirectoryEntry> out;
  errno = 0;
  while (const dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..")
      continue;
    // d_type is unreliable on some file systems: stat the entry (following
    // links, as a later open would).
    struct stat st {};
    std::string full = path + (path.ends_with('/') ? "" : "/") + name;
    FileKind kind = ::stat(full.c_str(), &st) == 0 ? KindOf(st.st_mode) : FileKind::kMissing;
    out.push_back({std::move(name), kind});
  }
  const int error = errno;
  ::closedir(dir);
  if (error != 0)
    return ErrnoError(path, error, "cannot list directory");
  std::sort(out.begin(), out.end(), [](const DirectoryEntry& a, const DirectoryEntry& b) { return a.name < b.name; });
  return out;
}

namespace {
std::string Normalized(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.ends_with('/'))
    p.pop_back();
  return p;
}
}  // namespace

bool InMemoryFileSystem::IsDirectory(const std::string& path) const {
  const std::string p = Normalized(path);
  if (directories_.count(p) > 0)
    return true;
  const std::string prefix = p + "/";
  auto it = files_.lower_bound(prefix);
  if (it != files_.end() && it->first.starts_with(prefix))
    return true;
  auto dir = directories_.lower_bound(prefix);
  return dir != directories_.end() && dir->starts_with(prefix);
}

StatusOr<std::string> InMemoryFileSystem::ReadFile(const std::string& path, uint64_t max_bytes) const {
  if (denied_.count(Normalized(path)) > 0)
    return NotFoundError(path + ": permission denied");
  auto it = files_.find(path);
  if (it == files_.end()) {
    if (IsDirectory(path))
      return NotRegular(path, FileKind::kDirectory, "directory");
    return NotFoundError(path + ": cannot open file (no such file or directory)");
  }
  if (it->second.size() > max_bytes)
    return TooLarge(path, it->second.size(), max_bytes);
  return it->second;
}

StatusOr<FileInfo> InMemoryFileSystem::Stat(const std::string& path) const {
  if (denied_.count(Normalized(path)) > 0)
    return NotFoundError(path + ": permission denied");
  FileInfo info;
  auto it = files_.find(path);
  if (it != files_.end()) {
    info.kind = FileKind::kRegular;
    info.description = "regular file";
    info.size_bytes = it->second.size();
  } else if (IsDirectory(path)) {
    info.kind = FileKind::kDirectory;
    info.description = "directory";
  }
  return info;
}

StatusOr<std::vector<DirectoryEntry>> InMemoryFileSystem::ListDirectory(const std::string& path) const {
  const std::string p = Normalized(path);
  if (denied_.count(p) > 0)
    return NotFoundError(path + ": permission denied");
  if (files_.count(path) > 0)
    return NotFoundError(path + ": not a directory");
  if (!IsDirectory(p))
    return NotFoundError(path + ": cannot list directory (no such file or directory)");
  const std::string prefix = p + "/";
  std::map<std::string, FileKind> entries;
  auto add = [&](const std::string& full, bool is_file) {
    if (!full.starts_with(prefix))
      return;
    std::string rest = full.substr(prefix.size());
    auto slash = rest.find('/');
    if (rest.empty())
      return;
    if (slash == std::string::npos)
      entries[rest] = is_file ? FileKind::kRegular : FileKind::kDirectory;
    else
      entries[rest.substr(0, slash)] = FileKind::kDirectory;
  };
  for (const auto& [name, content] : files_)
    add(name, true);
  for (const auto& dir : directories_)
    add(dir, false);
  std::vector<DirectoryEntry> out;
  for (const auto& [name, kind] : entries)
    out.push_back({name, kind});
  return out;
}

}  // namespace mfu
