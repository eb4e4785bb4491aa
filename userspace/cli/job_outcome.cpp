#include "cli/job_outcome.h"

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

namespace ckpt::cli {

Expected<void> KernelEvents::open(const std::string& path) {
  auto w = KmsgWatcher::open(path, /*from_end=*/true);
  if (!w) return make_error(w.error().message + "; GPU and NFS faults are not watched");
  watcher_.emplace(std::move(*w));
  return {};
}

void KernelEvents::poll() {
  if (!watcher_) return;
  for (auto& f : watcher_->read_available()) faults_.push_back(std::move(f));
}

std::vector<KernelFaultRecord> KernelEvents::job_faults() const {
  std::vector<KernelFaultRecord> out;
  for (const auto& f : faults_) {
    switch (f.fault.kind) {
      case KernelFaultKind::GpuXid:
      case KernelFaultKind::NfsServerNotResponding:
      case KernelFaultKind::NfsServerOk:
        out.push_back(f);
        break;
      case KernelFaultKind::OomKill:
      case KernelFaultKind::OomSummary:
        if (f.fault.pid && job_pids_.contains(*f.fault.pid)) out.push_back(f);
        break;
    }
  }
  return out;
}

FailureRecord to_failure_record(const KernelFaultRecord& f) {
  FailureRecord r;
  r.time_ns = f.record.mono_ns;
  const KernelFault& k = f.fault;
  switch (k.kind) {
    case KernelFaultKind::GpuXid:
      r.kind = "gpu_xid";
      r.evidence = fmt::format("Xid {} ({}) on GPU {}: {}", k.xid, to_string(k.category), k.pci,
                               f.record.text);
      break;
    case KernelFaultKind::NfsServerNotResponding:
    case KernelFaultKind::NfsServerOk:
      r.kind = "kernel_nfs_not_responding";
      r.evidence = "kernel log: " + f.record.text;
      break;
    case KernelFaultKind::OomKill:
    case KernelFaultKind::OomSummary:
      r.kind = "oom_kill";
      r.evidence = "kernel log: " + f.record.text;
      break;
  }
  return r;
}

void KernelEvents::record_into(Collector& collector) const {
  for (const auto& f : job_faults()) {
    // The recovery line is evidence for the classifier, not a failure.
    if (f.fault.kind == KernelFaultKind::NfsServerOk || f.fault.kind == KernelFaultKind::OomSummary)
      continue;
    collector.add_failure(to_failure_record(f));
  }
}

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

JobFailure classify_job(const JobRecord& job, const ExitStatus& status, const KernelEvents& kernel,
                        const std::string& exec_error) {
  if (!exec_error.empty()) {
    // The job never ran: no log of its own to read. exec's errno is the cause.
    JobFailure f;
    bool denied = exec_error.find("ermission denied") != std::string::npos;
    f.cls = denied ? "permission" : "file_not_found";
    f.rule = "exec-failed";
    std::string command = job.command.empty() ? std::string() : job.command.front();
    f.evidence.push_back(
        JobEvidence{0, fmt::format("cannot start {}: {}", command, exec_error), "exit_status"});
    return f;
  }
  const auto& classifier = classify::Classifier::builtin();
  std::vector<classify::Evidence> kernel_lines;
  for (const auto& f : kernel.job_faults())
    kernel_lines.push_back(classify::Evidence{f.record.seq, f.record.text, "kmsg"});
  classify::Classification c;
  bool from_file = false;
  if (!job.log_path.empty()) {
    auto r = classifier.classify_file(job.log_path, {}, kernel_lines);
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
  for (const auto& e : c.evidence)
    failure.evidence.push_back(JobEvidence{e.line, e.text, e.source});
  for (const auto& s : c.symptoms)
    failure.symptoms.push_back(
        s.first.source == "kmsg"
            ? fmt::format("{} (rule {}) in the kernel log", s.cls, s.rule)
            : fmt::format("{} (rule {}) at line {}", s.cls, s.rule, s.first.line));
  return failure;
}

namespace {

std::string evidence_line(const JobEvidence& e, const std::string& log_path) {
  if (e.line == 0) return fmt::format("{}: {}", e.source, e.text);
  if (e.source == log_path) return fmt::format("line {}: {}", e.line, e.text);
  return fmt::format("{}:{}: {}", e.source, e.line, e.text);
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
                      const KernelEvents& kernel) {
  log.note(fmt::format("the job ended: {} after {:.3f} s", describe_exit(status),
                       static_cast<double>(job.end_mono_ns - job.start_mono_ns) / 1e9));
  for (const auto& f : kernel.job_faults()) log.note("kernel log: " + f.record.text);
  if (kernel.lost() > 0)
    log.note(fmt::format("kernel log: {} records were overwritten before they could be read",
                         kernel.lost()));
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

Expected<Notifier> Notifier::create(const RunOptions& run, const Config& config) {
  Notifier n;
  if (run.notify.empty()) return n;
  n.request_.targets = run.notify;
  n.request_.smtp_flag = run.smtp_url;
  n.request_.config_section = config.notify_json;
  if (!run.attach_budget.empty()) {
    auto budget = notify::parse_size(run.attach_budget);
    if (!budget) return make_error("--attach-budget " + budget.error().message);
    n.request_.attach_budget = *budget;
  }
  for (const auto& path : run.attach)
    if (!std::filesystem::exists(path))
      return make_error(fmt::format("--attach {}: no such file", path));
  n.attach_ = run.attach;
  n.request_.mode = NotifyRequest::Mode::Check;
  auto checked = run_sender(find_sender(), n.request_, kCheckDeadlineMs);
  if (!checked) return checked.error();
  n.deadline_ms_ = kSendMarginMs;
  for (const auto& r : *checked) n.deadline_ms_ += r.timeout_ms;
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
      o.evidence.push_back(notify::Evidence{e.line, e.source == job.log_path || e.source.empty()
                                                        ? e.text
                                                        : e.source + ": " + e.text});
  }
  for (const auto& f : kernel.job_faults()) o.kernel_events.push_back(f.record.text);
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
    std::ofstream(report) << o.checkpoint_summary_json.dump(2) << "\n";
    request.candidates.push_back({report, false});
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
