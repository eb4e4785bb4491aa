// Helpers shared by the notify sources; not part of the API.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

namespace ckpt::notify {

// curl_global_init once, before the first handle (it is not thread-safe).
void ensure_curl_global();
// local@domain, plain ASCII, nothing a header or SMTP command could be bent with.
bool valid_address(std::string_view addr);
// The bare address of a From value ("\"Name\" <a@b>" -> "a@b").
std::string envelope_address(const std::string& from);
// scheme://host[:port], plus the first path segment when keep_path; never
// credentials or a query, which may be secrets.
std::string display_url(const std::string& url, bool keep_path);
// Invalid UTF-8 sequences replaced by U+FFFD, so that the message and its JSON
// are valid whatever bytes the job logged.
std::string valid_utf8(std::string_view text);

inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace ckpt::notify
