#pragma once

// Sources of decompressed trace bytes, read in bounded chunks: memory (a
// mapped file's bytes: FileSystem::Map) and streaming gzip (multi-member)
// over it. The one gzip reader of
// the project: the trace parser, tools/trace_gen and bench use it (through
// ReadTraceBytes in mfu/trace.h or directly).

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mfu::trace {

// A source of decompressed bytes.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Fills up to `n` bytes; returns the count, 0 at the end. Sets `error`.
  virtual size_t Read(char* out, size_t n, std::string& error) = 0;
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view data) : data_(data) {}
  size_t Read(char* out, size_t n, std::string&) override {
    size_t k = std::min(n, data_.size() - pos_);
    std::memcpy(out, data_.data() + pos_, k);
    pos_ += k;
    return k;
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

// Streaming gzip (multi-member) decompression over another source. zlib
// inflates; the CRC-32 of each member is checked with libdeflate's
// carry-less-multiply CRC (3-4x faster than zlib's, which was an eighth of
// a gzip parse), against the member's trailer, as is its length.
class GzipSource final : public ByteSource {
 public:
  explicit GzipSource(std::unique_ptr<ByteSource> in);
  ~GzipSource() override;
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;
  size_t Read(char* out, size_t n, std::string& error) override;

 private:
  static constexpr size_t kTrailer = 8;  // CRC-32 and ISIZE, little-endian

  std::array<unsigned char, kTrailer> LastConsumed() const;
  bool TrailerMatches() const;

  std::unique_ptr<ByteSource> in_;
  std::vector<char> buffer_;
  std::array<unsigned char, kTrailer> tail_{};  // the last bytes of the previous input buffers
  z_stream z_;
  uint32_t crc_ = 0;
  uint64_t size_ = 0;
  bool ok_ = false;
  bool done_ = false;
  bool stream_end_ = false;
};

// True when the bytes (or the file, whose position is rewound) start with the
// gzip magic 1f 8b.
bool IsGzip(std::string_view bytes);

// Everything `source` yields; `error` set on a read or gzip error.
std::string ReadAll(ByteSource& source, std::string& error);

}  // namespace mfu::trace
