#include "mfu/status.h"

namespace mfu {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kParse:
      return "parse error";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kOutOfRange:
      return "out of range";
    case StatusCode::kInternal:
      return "internal error";
  }
  return "unknown";
}

Status Status::WithPrefix(const std::string& prefix) const {
  if (ok())
    return *this;
  return Status(code_, prefix + ": " + message_);
}

Status InvalidArgumentError(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
Status NotFoundError(std::string m) {
  return {StatusCode::kNotFound, std::move(m)};
}
Status ParseError(std::string m) {
  return {StatusCode::kParse, std::move(m)};
}
Status UnsupportedError(std::string m) {
  return {StatusCode::kUnsupported, std::move(m)};
}
Status OutOfRangeError(std::string m) {
  return {StatusCode::kOutOfRange, std::move(m)};
}
Status InternalError(std::string m) {
  return {StatusCode::kInternal, std::move(m)};
}

}  // namespace mfu
