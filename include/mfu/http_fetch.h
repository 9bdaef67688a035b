#pragma once

// Bounded HTTP(S) GETs for the fleet inputs: a Prometheus query_range URL
// (`mfu fleet analyze URL`, one-shot: HttpGet) and an upstream exporter's
// /metrics (`mfu fleet serve`, scraped again and again over kept-alive
// connections: HttpKeepAliveClient). Both are bounded in time (connect + read
// time-outs) and in size, and never follow more than a few redirects.

#include <cstdint>
#include <memory>
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

// The body of a 200 answer, over a connection opened for this one request.
// Errors name the URL: kNotFound for a refused or timed-out connection or a
// non-200 status ("http://h:1/metrics: connection refused"), kOutOfRange for a
// body over max_bytes, kInvalidArgument for a URL that does not parse.
StatusOr<std::string> HttpGet(std::string_view url, const HttpFetchOptions& options = {});

// GETs of one URL over persistent (keep-alive) connections: a connection is
// opened on first use and reused by later Get()s; one the server closed (a
// restart, its idle time-out) is noticed before reuse and replaced, and a
// request that fails at once on a reused connection (the server closed it in
// between) is retried once on a new one. Thread-safe: concurrent Get()s each
// take an idle connection or open one; at most `kMaxIdle` idle connections
// are kept. Same time-outs, size cap and error messages as HttpGet.
class HttpKeepAliveClient {
 public:
  static constexpr int kMaxIdle = 4;

  // kInvalidArgument for a URL that is not http(s):// or does not parse
  // (HttpGet's messages).
  static StatusOr<std::unique_ptr<HttpKeepAliveClient>> Create(std::string_view url,
                                                               const HttpFetchOptions& options = {});
  ~HttpKeepAliveClient();
  HttpKeepAliveClient(const HttpKeepAliveClient&) = delete;
  HttpKeepAliveClient& operator=(const HttpKeepAliveClient&) = delete;

  // The body of a 200 answer; errors as HttpGet's.
  StatusOr<std::string> Get();

 private:
  HttpKeepAliveClient();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mfu
