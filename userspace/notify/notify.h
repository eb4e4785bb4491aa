// Job-completion messages for `ckptscope run --notify`: one structured report
// of how a job ended, sent as an email (libcurl SMTP, MIME with attachments)
// or as JSON to a webhook. Everything returns errors as values: a notification
// that cannot be sent must never change the job's exit code or hang ckptscope,
// so nothing here throws, exits, or blocks longer than the configured timeout.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "model/records.h"

namespace ckpt::notify {

// A line that made the failure classifier decide. Here source "" means the
// job's own log; otherwise "kmsg" (line = record number) or "exit_status" (line 0).
using Evidence = JobEvidence;

// What the caller knows when the job has ended.
struct JobOutcome {
  std::string job_name;  // empty: derived from the command (default_job_name)
  std::vector<std::string> command;
  std::string host;
  uint64_t start_wall_ns = 0;  // CLOCK_REALTIME
  uint64_t duration_ns = 0;
  std::optional<int> exit_code;  // set when the job exited
  std::optional<int> signal;     // set when a signal ended it
  bool core_dumped = false;
  std::string failure_class;  // empty: none found
  std::string failure_rule;
  std::vector<Evidence> evidence;
  std::vector<std::string> kernel_events;  // e.g. "NVRM: Xid (PCI:0000:3b:00): 79, ..."
  std::string checkpoint_summary_text;     // the rendered summary table
  nlohmann::json checkpoint_summary_json;  // the summary JSON (null: none)
  std::string log_path;
  // Why the log lacks part of the job's output (a full disk); "" when whole.
  std::string log_incomplete;
  std::vector<std::string> log_tail;  // last lines of the log (read_log_tail)
  std::string trace_path;
};

enum class TlsMode {
  kRequired,  // smtp://: STARTTLS or fail (CURLUSESSL_ALL)
  kTry,       // smtp://: STARTTLS when offered, plain text otherwise
  kNone,      // smtp://: never STARTTLS (a local relay)
};

struct NotifySettings {
  std::string smtp_url;         // smtp://HOST[:PORT] or smtps://...; empty: none given
  std::string smtp_url_source;  // "--smtp", "notify.smtp_url", "CKPTSCOPE_SMTP_URL"
  std::string from;             // header From; "ckptscope@<hostname>" unless configured
  std::string user;             // SMTP AUTH; empty: no AUTH
  std::string password;
  TlsMode tls = TlsMode::kRequired;  // ignored for smtps:// (always TLS)
  std::string ca_file;               // PEM bundle to verify the server; empty: system CAs
  uint64_t timeout_ms = 30'000;      // whole transfer
  uint64_t connect_timeout_ms = 10'000;
  uint64_t attach_budget = 10ull << 20;  // bytes of attached files, all together
  size_t log_tail_lines = 40;
  std::vector<std::string> attach;  // extra files to attach (notify.attach), after log and report
  std::string webhook_token;        // "Authorization: Bearer ..." for webhooks; empty: none
};

// Environment lookup, injectable for tests; nullopt or "" = unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_env();

// Resolves the settings from the config file's "notify" section (may be
// null), the --smtp flag (empty: not given) and the environment. The relay URL
// is taken from the flag, else the config, else CKPTSCOPE_SMTP_URL; credentials
// and the webhook token from the config, else the environment, never a flag.
// Errors name the field: "notify.timeout_s: must be a positive number ...".
Expected<NotifySettings> settings_from(const nlohmann::json* config_section,
                                       const std::string& smtp_flag, const EnvLookup& env);

// The config section with its secrets replaced, for storing in a trace.
nlohmann::json redact_secrets(const nlohmann::json& config_section);

// "512", "512K", "10M", "1G", "10MiB" (binary units) -> bytes.
Expected<uint64_t> parse_size(std::string_view text);

struct NotifyTarget {
  enum class Kind { kMail, kWebhook };
  Kind kind = Kind::kMail;
  std::vector<std::string> recipients;  // kMail: bare addresses
  std::string url;                      // kWebhook: the full URL (may hold a secret)
};

// "mailto:ops@example.com[,b@example.com]" or "https://..." ("http://" too,
// meant for loopback and tests). Anything else is an error saying what is
// accepted; errors do not name the flag (the caller prefixes "--notify ").
Expected<NotifyTarget> parse_target(std::string_view text);
// For messages: recipients, or the webhook URL without credentials, query and
// all but its first path segment (a webhook's path is often its secret).
std::string describe(const NotifyTarget& target);
// Whether `target` can be delivered with `settings` (mail needs a relay), so
// that a missing relay stops the run before the job starts.
Expected<void> check_target(const NotifyTarget& target, const NotifySettings& settings);

// A file offered for attachment, in priority order.
struct Candidate {
  std::string path;
  bool is_log = false;  // when it does not fit, attach its last lines that do
};

struct Attachment {
  std::string path;        // where it came from
  std::string name;        // file name in the message, unique ("job.log.tail" for a tail)
  std::string data;        // the bytes attached
  uint64_t file_size = 0;  // the whole file's size (> data.size() for a tail)
  bool tail = false;
};

struct LeftOut {
  std::string path;
  std::optional<uint64_t> size;  // nullopt when it could not be stat'ed
  std::string reason;            // "missing", "over budget: 48.2 MiB > 9.1 MiB left", ...
};

struct ArtifactPlan {
  uint64_t budget = 0;
  uint64_t used = 0;  // bytes attached
  std::vector<Attachment> attached;
  std::vector<LeftOut> left_out;
};

// Reads the candidates in order, attaching each whole while it fits in what is
// left of `budget`; everything else is listed in left_out with why. A log that
// does not fit is still listed, and its last part that fits (cut at a line
// boundary) is attached as NAME.tail.
ArtifactPlan plan_attachments(const std::vector<Candidate>& candidates, uint64_t budget);

// The last `lines` lines of a file (at most its last 1 MiB is read).
Expected<std::vector<std::string>> read_log_tail(const std::string& path, size_t lines);

struct Message {
  std::string subject;  // "[ckptscope] FAILED (cuda_oom) train.py on node01 after 1h02m"
  std::string text;     // the plain-text body
  nlohmann::json json;  // the webhook payload (schema in docs/notify.md)
};

// "train.py" for {"python", "-u", "train.py", ...}; the program's name otherwise.
std::string default_job_name(const std::vector<std::string>& command);
// "1h02m", "5m10s", "42s", "2d03h".
std::string format_duration(uint64_t ns);
// "48.2 MiB", "512 B".
std::string format_size(uint64_t bytes);

Message compose(const JobOutcome& outcome, const ArtifactPlan& plan);

// Sends one message to one target, within settings.timeout_ms. Mail carries
// the plan's attachments; a webhook gets message.json (attachments listed, not
// included). Errors name the target and what failed (curl's words, the SMTP or
// HTTP response code).
Expected<void> deliver(const NotifyTarget& target, const NotifySettings& settings,
                       const Message& message, const ArtifactPlan& plan);

}  // namespace ckpt::notify
