#include "trace/gzip_source.h"

#include <libdeflate.h>

#include <cerrno>

#include "mfu/status.h"
#include "mfu/trace.h"

namespace mfu::trace {

GzipSource::GzipSource(std::unique_ptr<ByteSource> in) : in_(std::move(in)), buffer_(1u << 20) {
  std::memset(&z_, 0, sizeof z_);
  ok_ = inflateInit2(&z_, 16 + MAX_WBITS) == Z_OK && inflateValidate(&z_, 0) == Z_OK;
}

GzipSource::~GzipSource() {
  inflateEnd(&z_);
}

size_t GzipSource::Read(char* out, size_t n, std::string& error) {
  if (!ok_) {
    error = "zlib initialisation failed";
    return 0;
  }
  z_.next_out = reinterpret_cast<Bytef*>(out);
  z_.avail_out = static_cast<uInt>(n);
  while (z_.avail_out > 0 && !done_) {
    if (z_.avail_in == 0) {
      // Keep the last bytes read: a member's trailer may straddle buffers.
      tail_ = LastConsumed();
      size_t k = in_->Read(buffer_.data(), buffer_.size(), error);
      if (k == 0) {
        if (!stream_end_)
          error = "truncated gzip stream";
        done_ = true;
        break;
      }
      z_.next_in = reinterpret_cast<Bytef*>(buffer_.data());
      z_.avail_in = static_cast<uInt>(k);
    }
    stream_end_ = false;
    Bytef* const before = z_.next_out;
    int rc = inflate(&z_, Z_NO_FLUSH);
    const auto produced = static_cast<size_t>(z_.next_out - before);
    crc_ = libdeflate_crc32(crc_, before, produced);
    size_ += produced;
    if (rc == Z_STREAM_END) {
      if (!TrailerMatches()) {
        error = "corrupt gzip data (CRC-32 or length of a member does not match its trailer)";
        done_ = true;
        break;
      }
      stream_end_ = true;
      crc_ = 0;
      size_ = 0;
      inflateReset(&z_);  // concatenated members
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      error = std::string("corrupt gzip data (") + (z_.msg ? z_.msg : "inflate error") + ")";
      done_ = true;
    }
  }
  return n - z_.avail_out;
}

// The last kTrailer bytes inflate consumed: the end of the current input
// buffer's consumed part, preceded by the previous buffers' last bytes.
std::array<unsigned char, GzipSource::kTrailer> GzipSource::LastConsumed() const {
  const size_t used =
      z_.next_in != nullptr ? static_cast<size_t>(z_.next_in - reinterpret_cast<const Bytef*>(buffer_.data())) : 0;
  std::array<unsigned char, kTrailer> last{};
  for (size_t i = 0; i < kTrailer; ++i) {
    last[i] = used + i >= kTrailer ? static_cast<unsigned char>(buffer_[used + i - kTrailer]) : tail_[i + used];
  }
  return last;
}

// The member's trailer (the last bytes consumed at its end) against the
// CRC-32 and the length mod 2^32 of what it produced.
bool GzipSource::TrailerMatches() const {
  const std::array<unsigned char, kTrailer> t = LastConsumed();
  auto le32 = [&](size_t at) {
    return static_cast<uint32_t>(t[at]) | static_cast<uint32_t>(t[at + 1]) << 8 |
           static_cast<uint32_t>(t[at + 2]) << 16 | static_cast<uint32_t>(t[at + 3]) << 24;
  };
  return le32(0) == crc_ && le32(4) == static_cast<uint32_t>(size_);
}

bool IsGzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string ReadAll(ByteSource& source, std::string& error) {
  std::string out;
  std::vector<char> buffer(1u << 20);
  while (size_t n = source.Read(buffer.data(), buffer.size(), error)) {
    out.append(buffer.data(), n);
    if (!error.empty())
      break;
  }
  return out;
}

}  // namespace mfu::trace

namespace mfu {

StatusOr<std::string> ReadTraceBytes(const FileSystem& fs, const std::string& path) {
  MFU_ASSIGN_OR_RETURN(std::unique_ptr<MappedFile> file, fs.Map(path));
  if (!trace::IsGzip(file->bytes()))
    return std::string(file->bytes());
  trace::GzipSource source(std::make_unique<trace::MemorySource>(file->bytes()));
  std::string error;
  std::string bytes = trace::ReadAll(source, error);
  if (!error.empty())
    return ParseError(path + ": " + error);
  return bytes;
}

}  // namespace mfu
