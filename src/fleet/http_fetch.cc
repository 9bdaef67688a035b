#include "mfu/http_fetch.h"

#include <httplib.h>

#include <cctype>
#include <string>

namespace mfu {
namespace {

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size())
    return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i])
      return false;
  return true;
}

}  // namespace

bool IsHttpUrl(std::string_view text) {
  return StartsWithNoCase(text, "http://") || StartsWithNoCase(text, "https://");
}

StatusOr<std::string> HttpGet(std::string_view url, const HttpFetchOptions& options) {
  const std::string where(url);
  if (!IsHttpUrl(url))
    return InvalidArgumentError(where + ": not an http:// or https:// URL");
  const size_t scheme_end = url.find("://") + 3;
  const size_t path_start = url.find('/', scheme_end);
  const std::string origin(url.substr(0, path_start));
  const std::string path = path_start == std::string_view::npos ? "/" : std::string(url.substr(path_start));
  if (origin.size() <= scheme_end)
    return InvalidArgumentError(where + ": URL has no host");

  httplib::Client client(origin);
  if (!client.is_valid())
    return InvalidArgumentError(where + ": URL does not parse");
  const auto seconds = static_cast<time_t>(options.timeout_s);
  const auto micros = static_cast<time_t>((options.timeout_s - static_cast<double>(seconds)) * 1e6);
  client.set_connection_timeout(seconds, micros);
  client.set_read_timeout(seconds, micros);
  client.set_write_timeout(seconds, micros);
  client.set_follow_location(true);

  std::string body;
  bool too_large = false;
  httplib::Result result = client.Get(path, httplib::Headers{}, [&](const char* data, size_t length) {
    if (body.size() + length > options.max_bytes) {
      too_large = true;
      return false;
    }
    body.append(data, length);
    return true;
  });
  if (too_large)
    return OutOfRangeError(where + ": answer is larger than " + std::to_string(options.max_bytes) + " bytes");
  if (!result)
    return NotFoundError(where + ": " + httplib::to_string(result.error()));
  if (result->status != 200)
    return NotFoundError(where + ": HTTP status " + std::to_string(result->status));
  return body;
}

}  // namespace mfu
