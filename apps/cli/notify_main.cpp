// ckptscope-notify: checks `run --notify` settings, or sends the messages,
// for `ckptscope run` (cli/notify_request.h says why it is its own program).
// Reads one JSON request on stdin; writes one JSON result per target on
// stdout, or a {"request_error": ...} object; exits 0 when it could answer, 2 on a
// bad request.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "apps/cli/notify_request.h"
#include "files/input_file.h"
#include "json/json_io.h"

int main(int argc, char** /*argv*/) {
  if (argc != 1) {
    std::fprintf(stderr,
                 "usage: ckptscope-notify < REQUEST.json  (started by `ckptscope run --notify`)\n");
    return 2;
  }
  // Every answer goes through dump_json: an error may quote the request,
  // which may hold any byte (dumping it threw type_error.316 and aborted).
  auto answer = [](const nlohmann::json& j) { std::printf("%s\n", ckpt::dump_json(j).c_str()); };
  // The request `run` writes: settings, the log's tail and the checkpoint
  // summary (a few KiB a checkpoint). 1 GiB is hundreds of thousands of
  // checkpoints; more is not a request from `run`.
  constexpr ckpt::InputLimit kRequestLimit{1u << 30, "no request from `ckptscope run` is", true};
  auto in = ckpt::read_fd_bounded(0, "<stdin>", kRequestLimit, "request");
  if (!in) {
    answer({{"request_error", in.error().message}});
    return 2;
  }
  auto request_json = ckpt::parse_json(*in, "request");
  if (!request_json) {
    answer({{"request_error", request_json.error().message}});
    return 2;
  }
  auto request = ckpt::cli::request_from_json(*request_json);
  if (!request) {
    answer({{"request_error", request.error().message}});
    return 2;
  }
  auto results = ckpt::cli::handle_request(*request);
  if (!results) {
    answer({{"request_error", results.error().message}});
    return 0;
  }
  for (const auto& r : *results) answer(ckpt::cli::to_json(r));
  return 0;
}
