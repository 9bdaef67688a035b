#pragma once

// Status and StatusOr<T>: how every fallible libmfu function reports failure.
// The library never throws across its API, never prints and never exits
// (perfetto's base::Status, simdjson's error codes). C++20 has no
// std::expected, so this is a small own type.

#include <optional>
#include <string>
#include <utility>

namespace mfu {

// Error codes. The CLI maps kInvalidArgument to exit code 2 (usage: a bad flag,
// an unknown or ambiguous name, contradictory options) and every other error
// to exit code 1 (the data or the environment is wrong).
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller asked for something impossible or unknown
  kNotFound,         // a file could not be opened
  kParse,            // malformed input data (JSON, CSV)
  kUnsupported,      // valid input this version cannot handle
  kOutOfRange,       // a number outside its sane range
  kInternal,         // a bug in mfu
};

// Returns the lowercase name of `code`, e.g. "invalid argument".
const char* StatusCodeName(StatusCode code);

// The result of an operation: ok, or an error code with a one-line message.
// Messages are lowercase, carry their location ("llama.json: key
// 'hidden_size' must be a positive integer") and have no trailing period.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "`prefix`: message"; ok stays ok.
  Status WithPrefix(const std::string& prefix) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

Status InvalidArgumentError(std::string message);
Status NotFoundError(std::string message);
Status ParseError(std::string message);
Status UnsupportedError(std::string message);
Status OutOfRangeError(std::string message);
Status InternalError(std::string message);

// A value of type T, or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) {
      status_ = Status(StatusCode::kInternal, "ok status without a value");
    }
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  // Precondition: ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace mfu

#define MFU_STATUS_CONCAT_INNER_(a, b) a##b
#define MFU_STATUS_CONCAT_(a, b) MFU_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (a Status) is not ok.
#define MFU_RETURN_IF_ERROR(expr)       \
  do {                                  \
    ::mfu::Status mfu_status_ = (expr); \
    if (!mfu_status_.ok())              \
      return mfu_status_;               \
  } while (0)

// `lhs` = value of `rexpr` (a StatusOr), or returns its error.
#define MFU_ASSIGN_OR_RETURN(lhs, rexpr) \
  MFU_ASSIGN_OR_RETURN_IMPL_(MFU_STATUS_CONCAT_(mfu_statusor_, __LINE__), lhs, rexpr)
#define MFU_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                               \
  if (!tmp.ok())                                    \
    return tmp.status();                            \
  lhs = std::move(tmp).value()
