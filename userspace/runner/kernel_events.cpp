#include "runner/kernel_events.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "model/vocabulary.h"

namespace ckpt {

namespace {

std::optional<uint32_t> proc_parent(uint32_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  uint32_t ppid = 0;
  if (!(rest >> state >> ppid)) return std::nullopt;
  return ppid;
}

std::optional<std::string> proc_cgroup(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("0::", 0) == 0) return line.substr(3);  // cgroup v2
  return std::nullopt;
}

bool within(const std::string& path, const std::string& dir) {
  if (dir.empty() || dir == "/") return false;  // the root cgroup holds everyone
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

}  // namespace

ProcView ProcView::system() {
  ProcView v;
  v.parent = proc_parent;
  v.cgroup = [](uint32_t pid) { return proc_cgroup(fmt::format("/proc/{}/cgroup", pid)); };
  v.own_cgroup = proc_cgroup("/proc/self/cgroup").value_or("");
  return v;
}

Expected<void> KernelEvents::open(const std::string& path) {
  auto w = KmsgWatcher::open(path, /*from_end=*/true);
  if (!w) return make_error(w.error().message + "; GPU and NFS faults are not watched");
  watcher_.emplace(std::move(*w));
  return {};
}

int KernelEvents::fd() const {
  if (!watcher_ || watcher_->error()) return -1;
  return watcher_->fd();
}

uint64_t KernelEvents::lost() const { return watcher_ ? watcher_->lost() : 0; }

void KernelEvents::poll() {
  if (watcher_ && !watcher_->error()) take(watcher_->read_available());
}

bool KernelEvents::is_jobs_process(uint32_t pid) const {
  if (job_pids_.contains(pid)) return true;
  if (root_ && proc_.parent) {
    uint32_t p = pid;
    for (int depth = 0; depth < 64; ++depth) {
      auto parent = proc_.parent(p);
      if (!parent || *parent <= 1) break;
      if (*parent == *root_) return true;
      p = *parent;
    }
  }
  if (proc_.cgroup)
    if (auto cg = proc_.cgroup(pid); cg && within(*cg, proc_.own_cgroup)) return true;
  return false;
}

bool KernelEvents::concerns_job(const KernelFaultRecord& f) const {
  const KernelFault& k = f.fault;
  switch (k.kind) {
    case KernelFaultKind::GpuXid:
      return k.pid && is_jobs_process(*k.pid);  // a pid-less one: is_job()
    case KernelFaultKind::NfsServerNotResponding:
    case KernelFaultKind::NfsServerOk:
      return true;
    case KernelFaultKind::OomSummary:
      return (k.pid && is_jobs_process(*k.pid)) || within(k.task_memcg, proc_.own_cgroup);
    case KernelFaultKind::OomKill: {
      if (k.pid && is_jobs_process(*k.pid)) return true;
      // The victim is often gone already; the summary printed just before
      // names its cgroup.
      for (auto it = faults_.rbegin(); it != faults_.rend(); ++it)
        if (it->fault.fault.kind == KernelFaultKind::OomSummary && it->fault.fault.pid == k.pid)
          return it->job;
      return false;
    }
  }
  return false;
}

void KernelEvents::take(std::vector<KernelFaultRecord> records) {
  for (auto& r : records) {
    bool pidless_xid = r.fault.kind == KernelFaultKind::GpuXid && !r.fault.pid;
    bool job = !pidless_xid && concerns_job(r);
    if (!job && !pidless_xid) ++others_;
    faults_.push_back(Seen{std::move(r), job, pidless_xid});
  }
}

std::string gpu_pci_key(std::string_view pci) {
  // "0000:3b:00.0" or "0000:3B:00" -> "0000:3b:00"; a bus-only "3b:00" gets
  // the domain 0000, as the kernel prints it.
  std::string out;
  for (char c : pci.substr(0, pci.find('.')))
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (std::count(out.begin(), out.end(), ':') == 1) out = "0000:" + out;
  if (std::count(out.begin(), out.end(), ':') != 2 ||
      out.find_first_not_of("0123456789abcdef:") != std::string::npos)
    return {};
  return out;
}

void KernelEvents::add_job_gpu(std::string_view pci) {
  if (auto key = gpu_pci_key(pci); !key.empty()) job_gpus_.insert(std::move(key));
}

bool KernelEvents::on_job_gpu(const KernelFault& xid) const {
  auto key = gpu_pci_key(xid.pci);
  return !key.empty() && job_gpus_.contains(key);
}

std::vector<KernelFaultRecord> KernelEvents::job_faults() const {
  std::vector<KernelFaultRecord> out;
  for (const auto& s : faults_)
    if (is_job(s)) out.push_back(s.fault);
  return out;
}

std::vector<KernelFaultRecord> KernelEvents::node_faults() const {
  std::vector<KernelFaultRecord> out;
  for (const auto& s : faults_)
    if (s.pidless_xid && !is_job(s)) out.push_back(s.fault);
  return out;
}

std::vector<KernelFaultRecord> KernelEvents::cause_candidates() const {
  std::vector<KernelFaultRecord> out;
  const auto jobs = job_faults();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const KernelFault& k = jobs[i].fault;
    if (k.kind == KernelFaultKind::NfsServerOk || k.kind == KernelFaultKind::OomSummary) continue;
    if (k.kind == KernelFaultKind::NfsServerNotResponding) {
      bool recovered = false;
      for (size_t j = i + 1; j < jobs.size(); ++j)
        recovered = recovered || (jobs[j].fault.kind == KernelFaultKind::NfsServerOk &&
                                  jobs[j].fault.server == k.server);
      if (recovered) continue;
    }
    out.push_back(jobs[i]);
  }
  return out;
}

FailureRecord to_failure_record(const KernelFaultRecord& f) {
  FailureRecord r;
  r.time_ns = f.record.mono_ns;
  const KernelFault& k = f.fault;
  switch (k.kind) {
    case KernelFaultKind::GpuXid:
      r.kind = kFailureGpuXid;
      r.evidence = fmt::format("Xid {} ({}) on GPU {}: {}", k.xid, to_string(k.category), k.pci,
                               f.record.text);
      break;
    case KernelFaultKind::NfsServerNotResponding:
    case KernelFaultKind::NfsServerOk:
      r.kind = kFailureKernelNfsNotResponding;
      r.evidence = "kernel log: " + f.record.text;
      break;
    case KernelFaultKind::OomKill:
    case KernelFaultKind::OomSummary:
      r.kind = kFailureOomKill;
      r.evidence = "kernel log: " + f.record.text;
      break;
  }
  return r;
}

std::vector<FailureRecord> KernelEvents::failure_records() const {
  std::vector<FailureRecord> out;
  for (const auto& f : job_faults()) {
    // A recovery line and the OOM summary are evidence, not failures of their own.
    if (f.fault.kind == KernelFaultKind::NfsServerOk || f.fault.kind == KernelFaultKind::OomSummary)
      continue;
    out.push_back(to_failure_record(f));
  }
  for (const auto& f : node_faults()) {
    FailureRecord r = to_failure_record(f);
    r.kind = kFailureNodeGpuXid;
    r.evidence = fmt::format("Xid {} ({}) on GPU {}, not one of the job's: {}", f.fault.xid,
                             to_string(f.fault.category), f.fault.pci, f.record.text);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace ckpt
