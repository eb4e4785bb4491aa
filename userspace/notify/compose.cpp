// The message: one subject a person can triage from an inbox, one text body,
// and the same facts as JSON for machines. Both are built from the same values
// so that they cannot disagree.
#include <signal.h>
#include <string.h>
#include <time.h>

#include <algorithm>

#include <fmt/format.h>

#include "notify/notify.h"
#include "notify/notify_internal.h"

namespace ckpt::notify {
namespace {

using nlohmann::json;

constexpr size_t kMaxLineBytes = 2000;   // a progress bar without newlines is not a line
constexpr size_t kMaxSubjectField = 60;  // job and host names in the subject

// Cuts at a UTF-8 character boundary.
std::string truncated(std::string s, size_t max) {
  if (s.size() <= max) return s;
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
  return s + "\xE2\x80\xA6";  // U+2026
}

// A log line fit for a mail body and a JSON string: valid UTF-8, no terminal
// control sequences or carriage returns (tqdm), bounded length.
std::string clean_line(std::string_view raw) {
  std::string s = valid_utf8(raw);
  for (char& c : s)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) c = ' ';
  return truncated(std::move(s), kMaxLineBytes);
}

std::string shell_quote(const std::string& arg) {
  if (!arg.empty() && std::all_of(arg.begin(), arg.end(), [](unsigned char c) {
        return std::isalnum(c) != 0 || std::strchr("_./=:,+-@%", c) != nullptr;
      }))
    return arg;
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string command_line(const std::vector<std::string>& command) {
  std::string out;
  for (const auto& a : command) out += (out.empty() ? "" : " ") + shell_quote(a);
  return clean_line(out);
}

std::string iso8601_utc(uint64_t wall_ns) {
  time_t t = static_cast<time_t>(wall_ns / 1'000'000'000ull);
  struct tm tm {};
  if (gmtime_r(&t, &tm) == nullptr) return "unknown";
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

std::string exit_description(const JobOutcome& o) {
  if (o.signal) {
    return fmt::format("killed by {} (signal {}){}", signal_name(*o.signal), *o.signal,
                       o.core_dumped ? ", core dumped" : "");
  }
  if (o.exit_code) return fmt::format("exit code {}", *o.exit_code);
  return "unknown (the job's end was not seen)";
}

struct Status {
  std::string word;    // OK, WARNING, FAILED, ENDED
  std::string detail;  // "cuda_oom", "SIGKILL", "exit 3"; empty for a clean OK
};

Status status_of(const JobOutcome& o) {
  const bool failed = o.signal.has_value() || (o.exit_code && *o.exit_code != 0);
  Status s;
  if (failed) {
    s.word = "FAILED";
  } else if (!o.failure_class.empty()) {
    s.word = "WARNING";  // exited 0, but something went wrong on the way
  } else {
    s.word = o.exit_code ? "OK" : "ENDED";
  }
  if (!o.failure_class.empty()) {
    s.detail = o.failure_class;
  } else if (o.signal) {
    s.detail = signal_name(*o.signal);
  } else if (failed) {
    s.detail = fmt::format("exit {}", *o.exit_code);
  }
  return s;
}

std::string one_line(const std::string& s, size_t max) {
  std::string out = clean_line(s);
  return truncated(std::move(out), max);
}

std::string indent(const std::string& text, const std::string& prefix) {
  std::string out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    if (nl == std::string::npos && line.empty()) break;
    out += prefix + line + "\n";
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return out;
}

}  // namespace

std::string valid_utf8(std::string_view in) {
  static const std::string kReplacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    const auto b = static_cast<unsigned char>(in[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (b < 0x80) {
      out += static_cast<char>(b);
      ++i;
      continue;
    }
    if ((b & 0xE0) == 0xC0) {
      len = 2;
      cp = b & 0x1F;
    } else if ((b & 0xF0) == 0xE0) {
      len = 3;
      cp = b & 0x0F;
    } else if ((b & 0xF8) == 0xF0) {
      len = 4;
      cp = b & 0x07;
    }
    bool ok = len > 0 && i + len <= in.size();
    for (size_t k = 1; ok && k < len; ++k) {
      const auto cont = static_cast<unsigned char>(in[i + k]);
      ok = (cont & 0xC0) == 0x80;
      cp = (cp << 6) | (cont & 0x3F);
    }
    // Overlong forms, UTF-16 surrogates and values past U+10FFFF are invalid too.
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (ok && (cp < kMin[len] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)) ok = false;
    if (ok) {
      out.append(in.substr(i, len));
      i += len;
    } else {
      out += kReplacement;
      ++i;
    }
  }
  return out;
}

std::string format_duration(uint64_t ns) {
  const double s = static_cast<double>(ns) / 1e9;
  const uint64_t secs = ns / 1'000'000'000ull;
  if (s < 10) return fmt::format("{:.1f}s", s);
  if (secs < 60) return fmt::format("{}s", secs);
  if (secs < 3600) return fmt::format("{}m{:02}s", secs / 60, secs % 60);
  if (secs < 86400) return fmt::format("{}h{:02}m", secs / 3600, secs % 3600 / 60);
  return fmt::format("{}d{:02}h", secs / 86400, secs % 86400 / 3600);
}

std::string format_size(uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes) / 1024;
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", v, kUnits[u]);
}

Message compose(const JobOutcome& o, const ArtifactPlan& plan) {
  Message m;
  try {
    const std::string job =
        clean_line(o.job_name.empty() ? default_job_name(o.command) : o.job_name);
    const std::string host = clean_line(o.host.empty() ? "unknown host" : o.host);
    const Status st = status_of(o);
    const std::string duration = format_duration(o.duration_ns);
    const std::string started = iso8601_utc(o.start_wall_ns);
    const std::string exit_text = exit_description(o);

    m.subject =
        fmt::format("[ckptscope] {}{} {} on {} after {}", st.word,
                    st.detail.empty() ? "" : " (" + one_line(st.detail, 40) + ")",
                    one_line(job, kMaxSubjectField), one_line(host, kMaxSubjectField), duration);

    std::string t;
    t += fmt::format("{} {}{} on {} after {}\n\n", job, st.word,
                     st.detail.empty() ? "" : " (" + clean_line(st.detail) + ")", host, duration);
    t += fmt::format("Job:       {}\n", job);
    t += fmt::format("Command:   {}\n", command_line(o.command));
    t += fmt::format("Host:      {}\n", host);
    t += fmt::format("Started:   {}\n", started);
    t += fmt::format("Duration:  {} ({:.3f} s)\n", duration,
                     static_cast<double>(o.duration_ns) / 1e9);
    t += fmt::format("Exit:      {}\n", exit_text);
    // Up front: the log tail below, and the log attached, lack part of the output.
    if (!o.log_incomplete.empty())
      t += fmt::format("Log:       INCOMPLETE: {}\n", clean_line(o.log_incomplete));

    json failure = nullptr;
    if (!o.failure_class.empty()) {
      t += fmt::format("\nFailure:   {}\n", clean_line(o.failure_class));
      if (!o.failure_rule.empty()) t += fmt::format("Rule:      {}\n", clean_line(o.failure_rule));
      json evidence = json::array();
      if (!o.evidence.empty()) t += "Evidence:\n";
      for (const auto& e : o.evidence) {
        std::string line = clean_line(e.text);
        t += fmt::format("  {}: {}\n",
                         evidence_where(e.line, clean_line(e.source), e.source.empty()), line);
        json item = {{"line", e.line}, {"text", line}};
        if (!e.source.empty()) item["source"] = clean_line(e.source);
        evidence.push_back(item);
      }
      failure = {{"class", clean_line(o.failure_class)},
                 {"rule", clean_line(o.failure_rule)},
                 {"evidence", evidence}};
    }

    json kernel = json::array();
    t += "\nKernel events during the job:";
    if (o.kernel_events.empty()) t += " none seen";
    t += "\n";
    for (const auto& k : o.kernel_events) {
      std::string line = clean_line(k);
      t += "  " + line + "\n";
      kernel.push_back(line);
    }

    const std::string ckpt_text = valid_utf8(o.checkpoint_summary_text);
    t += "\nCheckpoint I/O:\n";
    t += ckpt_text.empty() ? "  no checkpoint I/O recorded\n" : indent(ckpt_text, "  ");

    json tail = json::array();
    if (!o.log_path.empty() || !o.log_tail.empty()) {
      t += fmt::format("\nLog tail (last {} lines of {}):\n", o.log_tail.size(),
                       o.log_path.empty() ? "the log" : clean_line(o.log_path));
      for (const auto& l : o.log_tail) {
        std::string line = clean_line(l);
        t += "  | " + line + "\n";
        tail.push_back(line);
      }
      if (o.log_tail.empty()) t += "  (empty)\n";
    }

    if (!o.trace_path.empty()) t += fmt::format("\nTrace:     {}\n", clean_line(o.trace_path));

    json attachments = json::array();
    t += fmt::format("\nAttached ({} of {} budget):", format_size(plan.used),
                     format_size(plan.budget));
    if (plan.attached.empty()) t += " nothing";
    t += "\n";
    for (const auto& a : plan.attached) {
      if (a.tail) {
        t += fmt::format("  {} ({}, the end of {} {})\n", a.name, format_size(a.data.size()),
                         format_size(a.file_size), clean_line(a.path));
      } else {
        t += fmt::format("  {} ({}) from {}\n", a.name, format_size(a.data.size()),
                         clean_line(a.path));
      }
      attachments.push_back({{"name", a.name},
                             {"path", clean_line(a.path)},
                             {"bytes", a.data.size()},
                             {"file_bytes", a.file_size},
                             {"tail", a.tail}});
    }
    json left_out = json::array();
    if (!plan.left_out.empty()) t += "Left out:\n";
    for (const auto& l : plan.left_out) {
      t += fmt::format("  {}{}: {}\n", clean_line(l.path),
                       l.size ? " (" + format_size(*l.size) + ")" : std::string(), l.reason);
      left_out.push_back({{"path", clean_line(l.path)},
                          {"bytes", l.size ? json(*l.size) : json(nullptr)},
                          {"reason", l.reason}});
    }
    m.text = std::move(t);

    json cmd = json::array();
    for (const auto& a : o.command) cmd.push_back(valid_utf8(a));
    m.json = {
        {"schema", "ckptscope.notify/1"},
        {"status", st.word},
        {"subject", m.subject},
        {"job",
         {{"name", job},
          {"command", cmd},
          {"command_line", command_line(o.command)},
          {"host", host},
          {"start_utc", started},
          {"start_wall_ns", o.start_wall_ns},
          {"duration_ns", o.duration_ns},
          {"duration", duration}}},
        {"exit",
         {{"code", o.exit_code ? json(*o.exit_code) : json(nullptr)},
          {"signal", o.signal ? json(*o.signal) : json(nullptr)},
          {"signal_name", o.signal ? json(signal_name(*o.signal)) : json(nullptr)},
          {"core_dumped", o.core_dumped},
          {"description", exit_text}}},
        {"failure", failure},
        {"kernel_events", kernel},
        {"checkpoints", {{"text", ckpt_text}, {"summary", o.checkpoint_summary_json}}},
        {"log",
         {{"path", o.log_path.empty() ? json(nullptr) : json(clean_line(o.log_path))},
          {"incomplete",
           o.log_incomplete.empty() ? json(nullptr) : json(clean_line(o.log_incomplete))},
          {"tail", tail}}},
        {"trace_path", o.trace_path.empty() ? json(nullptr) : json(clean_line(o.trace_path))},
        {"attach_budget", plan.budget},
        {"attached_bytes", plan.used},
        {"attachments", attachments},
        {"left_out", left_out},
        {"text", m.text},
    };
  } catch (const std::exception& e) {
    // Only allocation can fail here; say so rather than send nothing.
    m.subject = "[ckptscope] job ended (report incomplete)";
    m.text = fmt::format("ckptscope could not compose the report: {}\n", e.what());
    m.json = {{"schema", "ckptscope.notify/1"}, {"status", "ENDED"}, {"error", e.what()}};
  }
  return m;
}

}  // namespace ckpt::notify
