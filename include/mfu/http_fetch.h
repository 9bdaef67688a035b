#pragma once

// One bounded HTTP(S) GET for the fleet inputs: a Prometheus query_range URL
// (`mfu fleet analyze URL`) and an upstream exporter's /metrics (`mfu fleet
// serve`). Bounded in time (connect + read time-outs) and in size; never
// follows more than a few redirects.

#include <cstdint>
#include <string>
#include <string_view>

#include "mfu/status.h"

namespace mfu {

struct HttpFetchOptions {
  double timeout_s = 5;               // connect, and each read
  uint64_t max_bytes = 256ull << 20;  // body cap
};

// True for "http://..." and "https://..." (case-insensitive scheme).
bool IsHttpUrl(std::string_view text);

// The body of a 200 answer. Errors name the URL: kNotFound for a refused or
// timed-out connection or a non-200 status ("http://h:1/metrics: connection
// refused"), kOutOfRange for a body over max_bytes, kInvalidArgument for a URL
// that does not parse.
StatusOr<std::string> HttpGet(std::string_view url, const HttpFetchOptions& options = {});

}  // namespace mfu
