#include "apps/exporter/workload_identity.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#include "files/input_file.h"

namespace ckpt {
namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// A pod UID as the kubelet spells it in a cgroup name: a UUID with '-' (the
// cgroupfs driver) or '_' (the systemd driver, where '-' is the slice
// separator), or 32 hex digits (a static pod's UID is its manifest's hash).
// Returns the UID with dashes, as the API and /var/log/pods spell it.
std::optional<std::string> pod_uid_at(std::string_view s) {
  if (s.size() >= 36) {
    bool ok = true;
    std::string uid(s.substr(0, 36));
    for (size_t i = 0; i < 36 && ok; ++i) {
      if (i == 8 || i == 13 || i == 18 || i == 23) {
        ok = uid[i] == '-' || uid[i] == '_';
        uid[i] = '-';
      } else {
        ok = is_hex(uid[i]);
      }
    }
    if (ok && (s.size() == 36 || !is_hex(s[36]))) return uid;
  }
  if (s.size() >= 32) {
    for (size_t i = 0; i < 32; ++i)
      if (!is_hex(s[i])) return std::nullopt;
    if (s.size() == 32 || !is_hex(s[32])) return std::string(s.substr(0, 32));
  }
  return std::nullopt;
}

// "kubepods-burstable-pod<uid>.slice" or "pod<uid>": the pod's UID. A
// kubelet with a cgroupRoot of its own prefixes the systemd names (kind:
// "kubelet-kubepods-burstable-pod<uid>.slice").
std::optional<std::string> pod_uid_of_component(std::string_view c) {
  const bool systemd = c.find("kubepods-") != std::string_view::npos;
  if (!systemd && !c.starts_with("pod")) return std::nullopt;
  size_t at = systemd ? c.rfind("-pod") : std::string_view::npos;
  std::string_view rest =
      systemd ? (at == std::string_view::npos ? "" : c.substr(at + 4)) : c.substr(3);
  return pod_uid_at(rest);
}

}  // namespace

std::optional<CgroupJob> job_of_cgroup_path(std::string_view path) {
  std::optional<CgroupJob> pod;
  bool in_kubepods = false;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    std::string_view c = path.substr(pos, end - pos);
    pos = end + 1;
    if (c.empty()) continue;
    // Slurm: the job's own cgroup (its steps and tasks are below it).
    if (c.starts_with("job_") && all_digits(c.substr(4)))
      return CgroupJob{CgroupJob::Kind::Slurm, std::string(c.substr(4))};
    // In a cgroup namespace of its own (a container with hostPID) another
    // pod's path reads relative to ours, "/../../pod<uid>/<container>":
    // the kubepods part is above the "..".
    if (c.find("kubepods") != std::string_view::npos || c == "..") in_kubepods = true;
    if (in_kubepods && !pod) {
      if (auto uid = pod_uid_of_component(c)) pod = CgroupJob{CgroupJob::Kind::KubernetesPod, *uid};
    }
  }
  return pod;
}

std::optional<CgroupJob> job_of_proc_cgroup(std::string_view text) {
  // Lines are "hierarchy-ID:controllers:path"; "0::path" is cgroup v2.
  std::vector<std::string_view> v1_paths;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    std::string_view path = line.substr(second + 1);
    if (line.substr(0, first) == "0" && second == first + 1) {
      if (auto job = job_of_cgroup_path(path)) return job;
    } else {
      v1_paths.push_back(path);
    }
  }
  for (auto path : v1_paths)
    if (auto job = job_of_cgroup_path(path)) return job;
  return std::nullopt;
}

WorkloadNamer::WorkloadNamer(WorkloadNamerOptions options) : options_(std::move(options)) {}

std::string WorkloadNamer::pod_name(const std::string& uid) {
  if (auto it = pod_names_.find(uid); it != pod_names_.end()) return it->second;
  // <namespace>_<pod>_<uid>: neither a namespace nor a pod name may hold '_'
  // (they are DNS labels and subdomains).
  std::error_code ec;
  const std::string suffix = "_" + uid;
  for (const auto& entry : std::filesystem::directory_iterator(options_.pod_log_root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= suffix.size() || !name.ends_with(suffix)) continue;
    std::string head = name.substr(0, name.size() - suffix.size());
    size_t sep = head.find('_');
    if (sep == std::string::npos || sep == 0 || sep + 1 == head.size()) continue;
    std::string ns_pod = head.substr(0, sep) + "/" + head.substr(sep + 1);
    pod_names_.emplace(uid, ns_pod);
    return ns_pod;
  }
  return "";  // not cached: the pod's log directory may appear later
}

std::string WorkloadNamer::label_of_job(const CgroupJob& job) {
  if (job.kind == CgroupJob::Kind::Slurm) return "slurm-" + job.id;
  std::string name = pod_name(job.id);
  return name.empty() ? "k8s-pod-" + job.id : "k8s-" + name;
}

std::string WorkloadNamer::label_of(uint32_t tgid, uint64_t now_ns) {
  auto it = by_tgid_.find(tgid);
  if (it != by_tgid_.end() && !it->second.stale && now_ns - it->second.read_ns < kRelabelNs)
    return it->second.label;
  std::optional<std::string> label;
  // A line per cgroup hierarchy (one on cgroup v2): far under 1 MiB.
  constexpr InputLimit kProcCgroupLimit{1u << 20, "/proc/PID/cgroup is a line per hierarchy"};
  auto text = read_file_bounded(options_.proc_root + "/" + std::to_string(tgid) + "/cgroup",
                                kProcCgroupLimit, "");
  if (text) {
    auto job = job_of_proc_cgroup(*text);
    label = job ? label_of_job(*job) : std::string(kOtherWorkload);
  } else if (it != by_tgid_.end()) {
    label = it->second.label;  // gone: it was where it was last seen
  } else if (auto parent = inherited_.find(tgid); parent != inherited_.end()) {
    label = parent->second;
  }
  inherited_.erase(tgid);
  Cached entry{label.value_or(std::string(kOtherWorkload)), now_ns, false};
  return by_tgid_.insert_or_assign(tgid, std::move(entry)).first->second.label;
}

void WorkloadNamer::forked(uint32_t parent_tgid, uint32_t child_tgid, uint64_t now_ns) {
  std::string parent = label_of(parent_tgid, now_ns);
  inherited_.insert_or_assign(child_tgid, std::move(parent));
}

void WorkloadNamer::exited(uint32_t tgid) {
  by_tgid_.erase(tgid);
  inherited_.erase(tgid);
}

}  // namespace ckpt
