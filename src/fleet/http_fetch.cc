#include "mfu/http_fetch.h"

#include <httplib.h>

#include <cctype>
#include <chrono>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/strings.h"

namespace mfu {
// Named, not anonymous: Impl below holds one, and a class with external
// linkage must not hold a type with internal linkage (-Wsubobject-linkage in
// the unity build).
namespace http_fetch_internal {

// A URL split for cpp-httplib: the client takes the origin, the request the
// path. `where` (the URL as given) starts every error message.
struct SplitUrl {
  std::string where;
  std::string origin;
  std::string path;
};

}  // namespace http_fetch_internal

namespace {

using http_fetch_internal::SplitUrl;

StatusOr<SplitUrl> Split(std::string_view url) {
  SplitUrl out;
  out.where = std::string(url);
  if (!IsHttpUrl(url))
    return InvalidArgumentError(out.where + ": not an http:// or https:// URL");
  const size_t scheme_end = url.find("://") + 3;
  const size_t path_start = url.find('/', scheme_end);
  out.origin = std::string(url.substr(0, path_start));
  out.path = path_start == std::string_view::npos ? "/" : std::string(url.substr(path_start));
  if (out.origin.size() <= scheme_end)
    return InvalidArgumentError(out.where + ": URL has no host");
  return out;
}

StatusOr<std::unique_ptr<httplib::Client>> MakeClient(const SplitUrl& url, const HttpFetchOptions& options,
                                                      bool keep_alive) {
  auto client = std::make_unique<httplib::Client>(url.origin);
  if (!client->is_valid())
    return InvalidArgumentError(url.where + ": URL does not parse");
  const auto seconds = static_cast<time_t>(options.timeout_s);
  const auto micros = static_cast<time_t>((options.timeout_s - static_cast<double>(seconds)) * 1e6);
  client->set_connection_timeout(seconds, micros);
  client->set_read_timeout(seconds, micros);
  client->set_write_timeout(seconds, micros);
  client->set_follow_location(true);
  client->set_keep_alive(keep_alive);
  // Measured: without it the kept-alive /metrics p99 was 0.1-0.3 ms higher.
  client->set_tcp_nodelay(true);
  return client;
}

// One GET on `client`. `transport_error` is set when no HTTP answer came
// (refused, reset, timed out), as opposed to a status or size error.
StatusOr<std::string> GetOn(httplib::Client& client, const SplitUrl& url, const HttpFetchOptions& options,
                            bool& transport_error) {
  transport_error = false;
  std::string body;
  bool too_large = false;
  httplib::Result result = client.Get(url.path, httplib::Headers{}, [&](const char* data, size_t length) {
    if (body.size() + length > options.max_bytes) {
      too_large = true;
      return false;
    }
    body.append(data, length);
    return true;
  });
  if (too_large)
    return OutOfRangeError(url.where + ": answer is larger than " + std::to_string(options.max_bytes) + " bytes");
  if (!result) {
    transport_error = true;
    return NotFoundError(url.where + ": " + httplib::to_string(result.error()));
  }
  if (result->status != 200)
    return NotFoundError(url.where + ": HTTP status " + std::to_string(result->status));
  return body;
}

}  // namespace

bool IsHttpUrl(std::string_view text) {
  return base::StartsWithNoCase(text, "http://") || base::StartsWithNoCase(text, "https://");
}

StatusOr<std::string> HttpGet(std::string_view url, const HttpFetchOptions& options) {
  MFU_ASSIGN_OR_RETURN(SplitUrl split, Split(url));
  MFU_ASSIGN_OR_RETURN(std::unique_ptr<httplib::Client> client, MakeClient(split, options, false));
  bool transport_error = false;
  return GetOn(*client, split, options, transport_error);
}

struct HttpKeepAliveClient::Impl {
  http_fetch_internal::SplitUrl url;
  HttpFetchOptions options;
  std::mutex mu;
  // Clients whose last request succeeded, each holding its open connection.
  std::vector<std::unique_ptr<httplib::Client>> idle;

  std::unique_ptr<httplib::Client> TakeIdle() {
    std::lock_guard lock(mu);
    if (idle.empty())
      return nullptr;
    std::unique_ptr<httplib::Client> client = std::move(idle.back());
    idle.pop_back();
    return client;
  }

  void GiveBack(std::unique_ptr<httplib::Client> client) {
    std::lock_guard lock(mu);
    if (idle.size() < static_cast<size_t>(kMaxIdle))
      idle.push_back(std::move(client));
  }
};

HttpKeepAliveClient::HttpKeepAliveClient() : impl_(std::make_unique<Impl>()) {}
HttpKeepAliveClient::~HttpKeepAliveClient() = default;

StatusOr<std::unique_ptr<HttpKeepAliveClient>> HttpKeepAliveClient::Create(std::string_view url,
                                                                           const HttpFetchOptions& options) {
  MFU_ASSIGN_OR_RETURN(SplitUrl split, Split(url));
  // Parse the origin once now, so that a bad URL fails here, not per scrape.
  MFU_RETURN_IF_ERROR(MakeClient(split, options, true).status());
  std::unique_ptr<HttpKeepAliveClient> out(new HttpKeepAliveClient());
  out->impl_->url = std::move(split);
  out->impl_->options = options;
  return out;
}

StatusOr<std::string> HttpKeepAliveClient::Get() {
  Impl& impl = *impl_;
  std::unique_ptr<httplib::Client> client = impl.TakeIdle();
  const bool reused = client != nullptr && client->is_socket_open() > 0;
  if (client == nullptr) {
    MFU_ASSIGN_OR_RETURN(client, MakeClient(impl.url, impl.options, true));
  }
  const auto start = std::chrono::steady_clock::now();
  bool transport_error = false;
  StatusOr<std::string> body = GetOn(*client, impl.url, impl.options, transport_error);
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // cpp-httplib replaces a connection it sees closed before sending; one the
  // server closes while the request is on its way fails fast: once more on a
  // new connection. A slow failure (a time-out) is not retried, so the
  // time-out still bounds the scrape.
  if (!body.ok() && transport_error && reused && elapsed_s < 0.5 * impl.options.timeout_s) {
    MFU_ASSIGN_OR_RETURN(client, MakeClient(impl.url, impl.options, true));
    body = GetOn(*client, impl.url, impl.options, transport_error);
  }
  if (body.ok())
    impl.GiveBack(std::move(client));
  return body;
}

}  // namespace mfu
