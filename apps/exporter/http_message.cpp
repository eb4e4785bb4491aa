#include "apps/exporter/http_message.h"

#include <time.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <vector>

#include <fmt/format.h>

namespace ckpt {
namespace {

// RFC 9110 5.6.2: the characters of a token (methods, header names).
bool is_tchar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar);
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A control character other than tab: never in a request line or a field
// value (RFC 9110 5.5); bytes from 0x80 (obs-text) are allowed.
bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (u < 0x20 && c != '\t') || u == 0x7f;
  });
}

// Calls `each` with every element of a comma-separated list, trimmed.
template <typename Each>
void for_each_element(std::string_view list, Each each) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view element = trim(list.substr(0, comma));
    if (!element.empty()) each(element);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

// A weight of exactly 0 ("q=0", "q=0.000") refuses the coding (RFC 9110 12.4.2).
bool weight_is_zero(std::string_view params) {
  for (;;) {
    const size_t semi = params.find(';');
    if (semi == std::string_view::npos) return false;
    params.remove_prefix(semi + 1);
    std::string_view param = trim(params.substr(0, params.find(';')));
    if (param.size() >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
      param.remove_prefix(2);
      return !param.empty() && param[0] == '0' &&
             param.find_first_not_of("0.", 1) == std::string_view::npos;
    }
  }
}

ParsedHead error(int status, std::string why) {
  ParsedHead out;
  out.error_status = status;
  out.why = std::move(why);
  return out;
}

// The request line's target as a path: origin-form "/p?q", absolute-form
// "http://host/p?q", or "*" (asterisk-form, only for OPTIONS: a path no
// resource has).
std::optional<std::string> target_path(std::string_view target) {
  if (target == "*") return std::string(target);
  for (std::string_view scheme : {"http://", "https://"}) {
    if (target.size() >= scheme.size() && iequals(target.substr(0, scheme.size()), scheme)) {
      target.remove_prefix(scheme.size());
      const size_t slash = target.find_first_of("/?#");
      target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
      if (target.front() != '/') target = "/";
      break;
    }
  }
  if (target.empty() || target.front() != '/') return std::nullopt;
  return std::string(target.substr(0, target.find_first_of("?#")));
}

}  // namespace

size_t find_head_end(std::string_view buffer, size_t from) {
  from = from > 3 ? from - 3 : 0;
  for (size_t i = buffer.find('\n', from); i != std::string_view::npos;
       i = buffer.find('\n', i + 1)) {
    // The line ending here is empty: "\n\n" or "\n\r\n".
    if (i >= 1 && buffer[i - 1] == '\n') return i + 1;
    if (i >= 2 && buffer[i - 1] == '\r' && buffer[i - 2] == '\n') return i + 1;
  }
  return std::string_view::npos;
}

size_t leading_empty_lines(std::string_view buffer) {
  size_t n = 0;
  while (n < buffer.size() && (buffer[n] == '\r' || buffer[n] == '\n')) ++n;
  return n;
}

ParsedHead parse_request_head(std::string_view head) {
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    const size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    head.remove_prefix(nl + 1);
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.empty()) return error(400, "no request line");

  // method SP request-target SP HTTP-version, single spaces (RFC 9112 3).
  const std::string_view request_line = lines.front();
  if (has_control(request_line)) return error(400, "a control character in the request line");
  const size_t sp1 = request_line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : request_line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || request_line.find(' ', sp2 + 1) != std::string_view::npos)
    return error(400, "the request line is not METHOD TARGET HTTP/1.1");
  const std::string_view method = request_line.substr(0, sp1);
  const std::string_view target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = request_line.substr(sp2 + 1);
  if (!is_token(method)) return error(400, "the method is not a token");
  if (version.size() != 8 || version.substr(0, 5) != "HTTP/" ||
      !std::isdigit(static_cast<unsigned char>(version[5])) || version[6] != '.' ||
      !std::isdigit(static_cast<unsigned char>(version[7])))
    return error(400, "the version is not HTTP/1.1");
  if (version[5] != '1') return error(505, "only HTTP/1.0 and HTTP/1.1 are served");

  ParsedHead out;
  RequestHead& r = out.head;
  r.method = std::string(method);
  auto path = target_path(target);
  if (!path) return error(400, "the target is not a path");
  r.path = std::move(*path);
  r.minor_version = version[7] - '0';
  r.keep_alive = r.minor_version >= 1;

  bool saw_content_length = false;
  uint64_t content_length = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    if (line.empty()) return error(400, "an empty line inside the header");
    // Folded lines (obs-fold) are refused, as RFC 9112 5.2 allows.
    if (line.front() == ' ' || line.front() == '\t') return error(400, "a folded header line");
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return error(400, "a header line without a colon");
    const std::string_view name = line.substr(0, colon);
    if (!is_token(name)) return error(400, "a header name that is not a token");
    const std::string_view value = trim(line.substr(colon + 1));
    if (has_control(value)) return error(400, "a control character in a header value");
    if (iequals(name, "Connection")) {
      for_each_element(value, [&r](std::string_view option) {
        if (iequals(option, "close")) r.keep_alive = false;
        if (iequals(option, "keep-alive") && r.minor_version == 0) r.keep_alive = true;
      });
    } else if (iequals(name, "Accept-Encoding")) {
      r.accepts_gzip = r.accepts_gzip || accepts_gzip(value);
    } else if (iequals(name, "Content-Length")) {
      uint64_t n = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size())
        return error(400, "Content-Length is not a number");
      if (saw_content_length && n != content_length)
        return error(400, "two different Content-Length headers");
      saw_content_length = true;
      content_length = n;
      r.has_body = r.has_body || n > 0;
    } else if (iequals(name, "Transfer-Encoding")) {
      r.has_body = true;
    }
  }
  return out;
}

bool accepts_gzip(std::string_view accept_encoding) {
  bool gzip = false;
  bool gzip_named = false;
  bool any = false;
  for_each_element(accept_encoding, [&](std::string_view element) {
    const std::string_view coding = trim(element.substr(0, element.find(';')));
    const bool allowed = !weight_is_zero(element);
    if (iequals(coding, "gzip") || iequals(coding, "x-gzip")) {
      gzip_named = true;
      gzip = gzip || allowed;
    } else if (coding == "*") {
      any = allowed;
    }
  });
  return gzip || (!gzip_named && any);
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

std::string format_response_head(const ResponseHead& h) {
  // RFC 9110 6.6.1: an origin server with a clock sends Date.
  char date[64] = "";
  const time_t now = time(nullptr);
  tm utc{};
  if (gmtime_r(&now, &utc) != nullptr)
    strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &utc);
  std::string out =
      fmt::format("HTTP/1.1 {} {}\r\nDate: {}\r\n", h.status, reason_phrase(h.status), date);
  if (!h.content_type.empty()) out += fmt::format("Content-Type: {}\r\n", h.content_type);
  if (!h.content_encoding.empty())
    out += fmt::format("Content-Encoding: {}\r\n", h.content_encoding);
  out += fmt::format("Content-Length: {}\r\n", h.content_length);
  if (h.allow_get_head) out += "Allow: GET, HEAD\r\n";
  if (!h.keep_alive)
    out += "Connection: close\r\n";
  else if (h.minor_version == 0)
    out += "Connection: keep-alive\r\n";
  out += "\r\n";
  return out;
}

}  // namespace ckpt
