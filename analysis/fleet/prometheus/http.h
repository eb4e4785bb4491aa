// The client's HTTP: one libcurl easy handle per request (requests are few
// and large; connection reuse would not pay for the state).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/expected.h"

namespace ckpt::fleet::http {

struct Response {
  long status = 0;
  std::string body;
};

using Form = std::vector<std::pair<std::string, std::string>>;

// GET url?query (query form-encoded; empty: none).
Expected<Response> get(const std::string& url, const Form& query, double timeout_s);
// POST url with an application/x-www-form-urlencoded body (the API accepts it
// for query, query_range and series, and it has no URL length limit).
Expected<Response> post_form(const std::string& url, const Form& form, double timeout_s);

}  // namespace ckpt::fleet::http
