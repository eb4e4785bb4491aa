// ckptscope-notify: checks `run --notify` settings, or sends the messages,
// for `ckptscope run` (cli/notify_request.h says why it is its own program).
// Reads one JSON request on stdin; writes one JSON result per target on
// stdout, or a {"request_error": ...} object; exits 0 when it could answer, 2 on a
// bad request.
#include <cstdio>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "apps/cli/notify_request.h"

int main(int argc, char** /*argv*/) {
  if (argc != 1) {
    std::fprintf(stderr,
                 "usage: ckptscope-notify < REQUEST.json  (started by `ckptscope run --notify`)\n");
    return 2;
  }
  std::ostringstream in;
  in << std::cin.rdbuf();
  nlohmann::json request_json;
  try {
    request_json = nlohmann::json::parse(in.str());
  } catch (const nlohmann::json::exception& e) {
    std::printf(
        "%s\n",
        nlohmann::json{{"request_error", std::string("request: ") + e.what()}}.dump().c_str());
    return 2;
  }
  auto request = ckpt::cli::request_from_json(request_json);
  if (!request) {
    std::printf("%s\n", nlohmann::json{{"request_error", request.error().message}}.dump().c_str());
    return 2;
  }
  auto results = ckpt::cli::handle_request(*request);
  if (!results) {
    std::printf("%s\n", nlohmann::json{{"request_error", results.error().message}}.dump().c_str());
    return 0;
  }
  for (const auto& r : *results) std::printf("%s\n", ckpt::cli::to_json(r).dump().c_str());
  return 0;
}
