#include "apps/cli/job_outcome.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/classifier/classifier.h"
#include "analysis/format.h"
#include "analysis/summary.h"
#include "common/clock.h"
#include "files/output_file.h"
#include "json/json_io.h"
#include "model/vocabulary.h"

namespace ckpt::cli {

std::vector<std::string> job_log_header(const JobRecord& job, const TraceFlags& flags) {
  std::string command;
  for (const auto& a : job.command) command += (command.empty() ? "" : " ") + a;
  std::error_code ec;
  auto cwd = std::filesystem::current_path(ec);
  std::vector<std::string> h = {
      fmt::format("ckptscope {} run log of job {}", job.ckptscope_version, job.name),
      "command: " + command,
      fmt::format("host: {} (kernel {})", job.node, job.kernel),
      "started: " + format_wall_time_utc(job.start_wall_ns),
      "cwd: " + (ec ? std::string("?") : cwd.string()),
      fmt::format("ckptscope pid: {}", getpid()),
  };
  h.push_back(flags.no_trace ? std::string("trace: none (--no-trace)")
                             : "trace: " + flags.trace_path);
  h.push_back("the job's stdout and stderr follow, as they arrived");
  return h;
}

std::string describe_exit(const ExitStatus& status) {
  if (status.signal) {
    const char* abbrev = sigabbrev_np(*status.signal);
    return fmt::format("killed by signal {}{}{}", *status.signal,
                       abbrev ? fmt::format(" (SIG{})", abbrev) : std::string(),
                       status.core_dumped ? ", core dumped" : "");
  }
  return fmt::format("exit code {}", status.code);
}

constexpr uint64_t kClassifyTailBytes = uint64_t{256} << 20;

JobFailure classify_job(const JobRecord& job, const ExitStatus& status, const KernelEvents& kernel,
                        const std::string& exec_error, std::string_view unlogged_output) {
  if (!exec_error.empty()) {
    // The job never ran: no log of its own to read. exec's errno is the cause.
    JobFailure f;
    bool missing = exec_error.find("No such file or directory") != std::string::npos;
    bool denied = exec_error.find("Permission denied") != std::string::npos ||
                  exec_error.find("Operation not permitted") != std::string::npos;
    // ENOEXEC, ETXTBSY, E2BIG...: no class says it better than the evidence.
    f.cls = missing  ? "file_not_found"
            : denied ? "permission"
                     : std::string(classify::kUnknownClass);
    f.rule = "exec-failed";
    std::string command = job.command.empty() ? std::string() : job.command.front();
    f.evidence.push_back(
        JobEvidence{0, fmt::format("cannot start {}: {}", command, exec_error), "exit_status"});
    return f;
  }
  const auto& classifier = classify::Classifier::builtin();
  std::vector<classify::Evidence> kernel_lines;
  for (const auto& f : kernel.cause_candidates())
    kernel_lines.push_back(classify::Evidence{f.record.seq, f.record.text, "kmsg"});
  // What the log could not take is classified with it: the end of a job's
  // output (where its cause usually is) is what a full disk loses.
  uint64_t unlogged_line = 0;
  while (!unlogged_output.empty()) {
    size_t nl = unlogged_output.find('\n');
    std::string_view line = unlogged_output.substr(0, nl);
    kernel_lines.push_back(
        classify::Evidence{++unlogged_line, std::string(line), std::string(kUnloggedSource)});
    unlogged_output.remove_prefix(nl == std::string_view::npos ? unlogged_output.size() : nl + 1);
  }
  classify::Classification c;
  bool from_file = false;
  if (!job.log_path.empty()) {
    // The last 256 MiB: a multi-GB log must not hold the job's exit for
    // minutes, and a cause further back than that is rare (docs/failures.md).
    classify::ScanOptions scan;
    scan.tail_bytes = kClassifyTailBytes;
    auto r = classifier.classify_file(job.log_path, scan, kernel_lines);
    if (r) {
      c = std::move(*r);
      from_file = true;
    }
  }
  if (!from_file) {
    classify::Scan scan(classifier);
    for (const auto& l : kernel_lines) scan.add_line(l.text, l.line, l.source);
    c = scan.finish();
  }
  classify::ExitInfo exit;
  if (status.signal)
    exit.signal = status.signal;
  else
    exit.code = status.code;
  classify::apply_exit_status(c, exit);

  JobFailure failure;
  failure.cls = c.cls;
  failure.rule = c.rule;
  failure.evidence = c.evidence;
  for (const auto& s : c.symptoms)
    failure.symptoms.push_back(
        s.first.source == "kmsg"
            ? fmt::format("{} (rule {}) in the kernel log", s.cls, s.rule)
            : fmt::format("{} (rule {}) at line {}", s.cls, s.rule, s.first.line));
  return failure;
}

FailureRecord log_incomplete_record(const JobLog& log, uint64_t time_ns) {
  FailureRecord r;
  r.kind = kFailureJobLogIncomplete;
  r.time_ns = time_ns;
  r.evidence = log.incomplete_reason();
  if (log.unlogged_dropped() > 0)
    r.evidence += fmt::format(
        "; of those, {} bytes of the job's output are lost entirely (the "
        "last {} MiB are kept in memory for the failure cause)",
        log.unlogged_dropped(), kUnloggedWindowBytes >> 20);
  return r;
}

namespace {

std::string evidence_line(const JobEvidence& e, const std::string& log_path) {
  return evidence_where(e.line, e.source, e.source == log_path) + ": " + e.text;
}

}  // namespace

std::string describe_failure(const JobFailure& failure, const std::string& log_path) {
  std::string out = failure.rule.empty()
                        ? fmt::format("failure: {}", failure.cls)
                        : fmt::format("failure: {} (rule {})", failure.cls, failure.rule);
  for (const auto& e : failure.evidence) out += "\n  " + evidence_line(e, log_path);
  if (!log_path.empty()) out += "\n  log: " + log_path;
  return out;
}

void write_log_footer(JobLog& log, const JobRecord& job, const ExitStatus& status,
                      const KernelEvents& kernel, const JobGpus& gpus) {
  log.note(fmt::format("the job ended: {} after {:.3f} s", describe_exit(status),
                       static_cast<double>(job.end_mono_ns - job.start_mono_ns) / 1e9));
  for (const auto& f : kernel.job_faults()) log.note("kernel log: " + f.record.text);
  if (kernel.lost() > 0)
    log.note(fmt::format("kernel log: {} records were overwritten before they could be read",
                         kernel.lost()));
  if (kernel.others() > 0)
    log.note(fmt::format("kernel log: {} faults of other processes (Xids, OOM kills) left out",
                         kernel.others()));
  if (auto node = kernel.node_faults(); !node.empty()) {
    std::string mine;
    for (const auto& g : kernel.job_gpus()) mine += (mine.empty() ? "" : ", ") + g;
    log.note(fmt::format(
        "kernel log: {} Xid{} on GPUs that are not the job's (node failures, not its cause); the "
        "job's GPUs: {}{}",
        node.size(), node.size() == 1 ? "" : "s", mine.empty() ? "none known" : mine,
        gpus.source.empty() ? "" : " (" + gpus.source + ")"));
    for (const auto& f : node) log.note("node kernel log: " + f.record.text);
  }
  // Written if the disk has room again by now: the log says it has a gap.
  if (log.incomplete()) log.note(log_incomplete_record(log, 0).evidence);
  if (job.failure) {
    const auto& f = *job.failure;
    log.note(f.rule.empty() ? "failure cause: " + f.cls
                            : fmt::format("failure cause: {} (rule {})", f.cls, f.rule));
    for (const auto& e : f.evidence) log.note("  evidence: " + evidence_line(e, log.path()));
    for (const auto& s : f.symptoms) log.note("  also seen: " + s);
  }
}

// Starting ckptscope-notify and checking the settings takes a few ms; only
// jobs given --notify pay it.
constexpr uint64_t kCheckDeadlineMs = 10'000;
// On top of every target's own timeout: composing, reading attachments.
constexpr uint64_t kSendMarginMs = 10'000;
// A target's timeout when the settings could not be read: the default.
constexpr uint64_t kUncheckedTimeoutMs = 30'000;

Expected<Notifier> Notifier::create(const RunOptions& run, const Config& config) {
  Notifier n;
  if (run.notify.empty()) return n;
  n.request_.targets = run.notify;
  n.request_.smtp_flag = run.smtp_url;
  n.request_.config_section = config.notify_json;
  if (!run.attach_budget.empty()) {
    auto budget = notify::parse_size(run.attach_budget);
    if (!budget) return make_error("--attach-budget " + budget.error().message);
    if (*budget > (uint64_t{1} << 30))
      return make_error("--attach-budget " + run.attach_budget +
                        ": at most 1G (no mail relay takes more)");
    n.request_.attach_budget = *budget;
  }
  // --attach names files the job may only create as it runs: one that is
  // missing at the end is listed as missing in the message, not an error now.
  n.attach_ = run.attach;
  n.request_.mode = NotifyRequest::Mode::Check;
  bool rejected = false;
  auto checked = run_sender(find_sender(), n.request_, kCheckDeadlineMs, &rejected);
  n.deadline_ms_ = kSendMarginMs;
  if (checked) {
    for (const auto& r : *checked) n.deadline_ms_ += r.timeout_ms;
  } else if (rejected) {
    return checked.error();
  } else {
    n.check_warning_ = "could not check the --notify settings (" + checked.error().message +
                       "); sending is tried when the job ends";
    n.deadline_ms_ += kUncheckedTimeoutMs * run.notify.size();
  }
  n.request_.mode = NotifyRequest::Mode::Send;
  return n;
}

void Notifier::send_all(const JobRecord& job, const ExitStatus& status, const KernelEvents& kernel,
                        const Trace* trace, const std::string& trace_path, JobLog* log) const {
  if (request_.targets.empty()) return;
  NotifyRequest request = request_;
  notify::JobOutcome& o = request.outcome;
  o.job_name = job.name;
  o.command = job.command;
  o.host = job.node;
  o.start_wall_ns = job.start_wall_ns;
  o.duration_ns = job.end_mono_ns - job.start_mono_ns;
  if (status.signal) {
    o.signal = status.signal;
    o.core_dumped = status.core_dumped;
  } else {
    o.exit_code = status.code;
  }
  if (job.failure) {
    o.failure_class = job.failure->cls;
    o.failure_rule = job.failure->rule;
    for (const auto& e : job.failure->evidence)
      o.evidence.push_back(
          notify::Evidence{e.line, e.text, e.source == job.log_path ? std::string() : e.source});
  }
  for (const auto& f : kernel.job_faults()) o.kernel_events.push_back(f.record.text);
  for (const auto& f : kernel.node_faults())
    o.kernel_events.push_back("node, not the job's GPU: " + f.record.text);
  if (log && log->incomplete()) o.log_incomplete = log_incomplete_record(*log, 0).evidence;
  if (!job.log_path.empty()) {
    o.log_path = job.log_path;  // the sender reads its tail
    request.candidates.push_back({job.log_path, true});
  }
  if (trace) {
    o.checkpoint_summary_text = summary_table(*trace);
    o.checkpoint_summary_json = summary_json(*trace);
    o.trace_path = trace_path;
    // The report travels as a file next to the log (or the trace).
    std::string report = (job.log_path.empty() ? trace_path : job.log_path) + ".summary.json";
    if (auto written = replace_file_contents(report, dump_json(o.checkpoint_summary_json, 2) + "\n",
                                             "the notification's summary");
        written)
      request.candidates.push_back({report, false});
    else
      warn("warning: " + written.error().message);
  }
  for (const auto& p : attach_) request.candidates.push_back({p, false});
  auto results = run_sender(find_sender(), request, deadline_ms_);
  auto report = [&](const std::string& line, bool ok) {
    if (!ok) warn("warning: " + line);
    if (log) log->note(line);
  };
  if (!results) {
    report("could not notify: " + results.error().message, false);
    return;
  }
  for (const auto& r : *results)
    report(r.ok ? "notified " + r.target : "could not notify: " + r.error, r.ok);
}

}  // namespace ckpt::cli
