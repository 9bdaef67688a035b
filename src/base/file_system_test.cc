// FileSystem::Map: the whole file as one view, on disk mapped (and marked
// file-backed, so a reader may drop its pages), in memory lent; the open
// errors are ReadFile's.

#include "mfu/file_system.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>

namespace mfu {
namespace {

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(FileSystemMap, DiskMapsAndMemoryLends) {
  const RealFileSystem disk;
  const std::string path = WriteTemp("map_me.txt", "hello, mapped world");
  StatusOr<std::unique_ptr<MappedFile>> mapped = disk.Map(path);
  ASSERT_TRUE(mapped.ok()) << mapped.status().message();
  EXPECT_EQ((*mapped)->bytes(), "hello, mapped world");
  EXPECT_TRUE((*mapped)->file_backed());
  // An empty file cannot be mapped: it is read, and empty.
  StatusOr<std::unique_ptr<MappedFile>> empty = disk.Map(WriteTemp("empty.txt", ""));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->bytes(), "");
  EXPECT_FALSE((*empty)->file_backed());

  InMemoryFileSystem memory;
  memory.AddFile("a/b.json", "{}");
  StatusOr<std::unique_ptr<MappedFile>> lent = memory.Map("a/b.json");
  ASSERT_TRUE(lent.ok());
  EXPECT_EQ((*lent)->bytes(), "{}");
  EXPECT_FALSE((*lent)->file_backed());
}

TEST(FileSystemMap, RefusesWhatIsNotARegularFile) {
  const RealFileSystem disk;
  EXPECT_EQ(disk.Map("/dev/null").status().message(), "/dev/null: not a regular file (character device)");
  EXPECT_EQ(disk.Map(::testing::TempDir()).status().message(),
            ::testing::TempDir() + ": is a directory, expected a file");
  StatusOr<std::unique_ptr<MappedFile>> missing = disk.Map("/no/such/file.json");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "/no/such/file.json: cannot open file (No such file or directory)");
  InMemoryFileSystem memory;
  memory.AddFile("secret.json", "{}");
  memory.Deny("secret.json");
  EXPECT_EQ(memory.Map("secret.json").status().message(), "secret.json: permission denied");
}

}  // namespace
}  // namespace mfu
