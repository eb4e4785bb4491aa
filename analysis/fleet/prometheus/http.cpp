#include "analysis/fleet/prometheus/http.h"

#include <curl/curl.h>

#include <cmath>
#include <memory>
#include <mutex>

#include <fmt/format.h>

namespace ckpt::fleet::http {
namespace {

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// The most of one answer kept. A range query is chunked under the API's
// 11,000 points a series (the client's max_points_per_chunk), some 30 bytes
// a point: 1 GiB is thousands of series at the cap. A server (or something
// posing as one) that sends more is cut off rather than let fill memory.
constexpr size_t kMaxBodyBytes = size_t{1} << 30;

struct Body {
  std::string* text;
  bool too_large = false;
};

size_t append_body(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<Body*>(user);
  if (body->text->size() + size * count > kMaxBodyBytes) {
    body->too_large = true;
    return 0;  // curl stops with CURLE_WRITE_ERROR
  }
  body->text->append(data, size * count);
  return size * count;
}

std::string encode(CURL* curl, const Form& form) {
  std::string out;
  for (const auto& [key, value] : form) {
    if (!out.empty()) out += '&';
    char* k = curl_easy_escape(curl, key.c_str(), static_cast<int>(key.size()));
    char* v = curl_easy_escape(curl, value.c_str(), static_cast<int>(value.size()));
    out += k;
    out += '=';
    out += v;
    curl_free(k);
    curl_free(v);
  }
  return out;
}

// The causes a user can act on, in words; curl's own text otherwise.
std::string describe(CURLcode code, const char* detail) {
  std::string cause;
  switch (code) {
    case CURLE_COULDNT_CONNECT:
      cause = "connection refused (nothing listening there?)";
      break;
    case CURLE_OPERATION_TIMEDOUT:
      cause = "timed out";
      break;
    case CURLE_COULDNT_RESOLVE_HOST:
      cause = "host name not found";
      break;
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      cause = "not a usable http:// or https:// URL";
      break;
    default:
      cause = curl_easy_strerror(code);
  }
  if (detail != nullptr && detail[0] != '\0') cause += fmt::format(" ({})", detail);
  return cause;
}

Expected<Response> perform(const std::string& url, const Form& form, bool post, double timeout_s) {
  init_curl_once();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return make_error("cannot initialise libcurl");
  CURL* h = curl.get();
  const std::string encoded = encode(h, form);
  const std::string full_url = (!post && !encoded.empty()) ? url + "?" + encoded : url;
  Response response;
  char error_text[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(h, CURLOPT_URL, full_url.c_str());
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_text);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, append_body);
  Body body{&response.body};
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(std::ceil(timeout_s * 1000)));
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // gzip: range answers compress ~10x
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  if (post) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, encoded.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(encoded.size()));
  }
  const CURLcode code = curl_easy_perform(h);
  if (body.too_large)
    return make_error(
        fmt::format("{}: the answer is larger than 1 GiB; query a shorter range "
                    "or fewer series",
                    url));
  if (code != CURLE_OK) return make_error(fmt::format("{}: {}", url, describe(code, error_text)));
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

}  // namespace

Expected<Response> get(const std::string& url, const Form& query, double timeout_s) {
  return perform(url, query, /*post=*/false, timeout_s);
}

Expected<Response> post_form(const std::string& url, const Form& form, double timeout_s) {
  return perform(url, form, /*post=*/true, timeout_s);
}

}  // namespace ckpt::fleet::http
