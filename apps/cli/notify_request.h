// What `run` hands to `ckptscope-notify`, the separate program that checks
// notification settings before a job starts and sends the messages after it
// ends. Sending lives in its own process for two reasons: libcurl and the TLS
// and Kerberos libraries it loads cost ~4 ms of start-up that `run` must not
// pay for every job, and whatever they do (crash, hang past every timeout)
// cannot touch the exit code `run` returns, since `run` kills a sender that
// overruns its deadline.
//
// The request travels on the sender's stdin (it may hold SMTP credentials
// from the config: never in a file or on a command line); the results come
// back on its stdout, one JSON object per target.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "notify/notify.h"

namespace ckpt::cli {

struct NotifyRequest {
  enum class Mode { Check, Send };
  Mode mode = Mode::Check;
  std::vector<std::string> targets;       // as given to --notify
  std::string smtp_flag;                  // --smtp
  std::string config_section;             // the config's "notify" section as JSON text, "" if none
  std::optional<uint64_t> attach_budget;  // --attach-budget
  std::vector<notify::Candidate> candidates;
  notify::JobOutcome outcome;  // Send only
};

nlohmann::json to_json(const NotifyRequest& request);
Expected<NotifyRequest> request_from_json(const nlohmann::json& j);

struct DeliveryResult {
  std::string target;  // notify::describe(): no secret in it
  bool ok = false;
  std::string error;
  uint64_t timeout_ms = 0;  // Check: how long sending to it may take (the settings' timeout)
};
nlohmann::json to_json(const DeliveryResult& result);
Expected<DeliveryResult> result_from_json(const nlohmann::json& j);

// The work of `ckptscope-notify` (cli/notify_sender.cpp, linked only there):
// Check validates everything and returns one result per target (or the
// settings error); Send also composes and delivers.
Expected<std::vector<DeliveryResult>> handle_request(const NotifyRequest& request);

// The wrapper's side: runs `sender` (the ckptscope-notify binary) with the
// request on its stdin and waits at most `deadline_ms`, killing it after.
// An error is either the sender rejecting the request (bad settings or
// targets: *rejected is set) or no usable answer at all (not started,
// killed at the deadline, garbage).
Expected<std::vector<DeliveryResult>> run_sender(const std::string& sender,
                                                 const NotifyRequest& request, uint64_t deadline_ms,
                                                 bool* rejected = nullptr);
// ckptscope-notify beside this binary (as installed and as built), else PATH.
std::string find_sender();

}  // namespace ckpt::cli
