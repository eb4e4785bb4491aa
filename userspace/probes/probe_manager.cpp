#include "probes/probe_manager.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <mutex>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "jobio.h"
#include "jobio.skel.h"
#include "nfs.h"
#include "nfs.skel.h"
#include "probes/drop_causes.h"
#include "probes/file_verdict.h"
#include "probes/syscall_table.h"
#include "tcp.h"
#include "tcp.skel.h"

namespace ckpt {
namespace {

// libbpf reports why a load failed (verifier log, missing BTF) through its
// print callback; keep the last lines so the error we return can say why.
std::mutex g_log_mutex;
std::vector<std::string> g_libbpf_log;

int capture_libbpf_print(enum libbpf_print_level level, const char* format, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  // A verifier log arrives as one message of many lines; its verdict is at
  // the end, so keep the tail of each message and split it into lines.
  va_list copy;
  va_copy(copy, args);
  // va_copy initialized `copy`: the analyzer misses that for a va_list parameter.
  const int n = vsnprintf(nullptr, 0, format, copy);  // NOLINT(clang-analyzer-valist.Uninitialized)
  va_end(copy);
  if (n <= 0) return n;
  std::string text(static_cast<size_t>(n) + 1, '\0');
  vsnprintf(text.data(), text.size(), format, args);
  text.resize(static_cast<size_t>(n));
  std::lock_guard lock(g_log_mutex);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) g_libbpf_log.push_back(text.substr(start, std::min<size_t>(end - start, 512)));
    start = end + 1;
  }
  while (g_libbpf_log.size() > 40) g_libbpf_log.erase(g_libbpf_log.begin());
  return n;
}

std::string take_libbpf_log() {
  std::lock_guard lock(g_log_mutex);
  std::string out;
  for (const auto& l : g_libbpf_log) out += "\n  libbpf: " + l;
  g_libbpf_log.clear();
  return out;
}

std::string why_load_failed(int err) {
  err = err < 0 ? -err : err;
  std::string hint;
  if (err == EPERM || err == EACCES)
    hint = " (loading eBPF needs root or CAP_BPF+CAP_PERFMON)";
  else if (err == ENOENT || err == ESRCH)
    hint = " (a tracepoint or BTF type is missing in this kernel)";
  return fmt::format("{}{}", std::strerror(err), hint);
}

// The tracepoints this kernel has, from the btf_trace_<name> typedefs of
// vmlinux and the sunrpc and nfs modules' BTF (what tp_btf attaches by);
// nullopt when the BTF cannot be read (the load will then say why).
std::optional<std::set<std::string>> nfs_tracepoints_present() {
  btf* vmlinux = btf__load_vmlinux_btf();
  if (!vmlinux) return std::nullopt;
  std::set<std::string> out;
  auto collect = [&](const btf* b) {
    const uint32_t n = btf__type_cnt(b);
    for (uint32_t id = 1; id < n; ++id) {
      const btf_type* t = btf__type_by_id(b, id);
      if (!t || !btf_is_typedef(t)) continue;
      std::string_view name = btf__name_by_offset(b, t->name_off);
      if (name.starts_with("btf_trace_")) out.emplace(name.substr(10));
    }
  };
  collect(vmlinux);
  bool ok = true;
  for (const char* module : {"sunrpc", "nfs"}) {
    const std::string path = fmt::format("/sys/kernel/btf/{}", module);
    if (access(path.c_str(), R_OK) != 0) continue;  // built in: in vmlinux
    btf* mod = btf__parse_split(path.c_str(), vmlinux);
    if (!mod) {
      ok = false;
      continue;
    }
    collect(mod);
    btf__free(mod);
  }
  btf__free(vmlinux);
  if (!ok) return std::nullopt;
  return out;
}

// Detail the NFS stages can do without, and what its absence costs.
bool is_optional_nfs_tracepoint(const std::string& name) {
  return name == "rpc_task_sleep" || name == "rpc_task_wakeup" || name == "rpc_timeout_status" ||
         name == "rpc_task_end";
}

std::string optional_nfs_tracepoint_loss(const std::string& name) {
  if (name == "rpc_timeout_status") return "servers not responding are not flagged live";
  if (name == "rpc_task_end") return "RPCs that fail before they are sent are not seen";
  return "RPC waits are not split by transport queue";
}

int ring_callback(void* ctx, void* data, size_t size) {
  (*static_cast<RecordHandler*>(ctx))(data, size);
  return 0;
}

std::vector<uint64_t> sum_percpu(int map_fd, uint32_t entries) {
  std::vector<uint64_t> out(entries, 0);
  int ncpus = libbpf_num_possible_cpus();
  if (ncpus <= 0) return out;
  std::vector<uint64_t> values(static_cast<size_t>(ncpus));
  for (uint32_t key = 0; key < entries; ++key) {
    if (bpf_map_lookup_elem(map_fd, &key, values.data()) != 0) continue;
    for (uint64_t v : values) out[key] += v;
  }
  return out;
}

void add_program_stats(bpf_object* obj, std::vector<ProgramStats>& out) {
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, obj) {
    int fd = bpf_program__fd(prog);
    if (fd < 0) continue;
    bpf_prog_info info = {};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) continue;
    out.push_back(ProgramStats{bpf_program__name(prog), info.run_cnt, info.run_time_ns,
                               info.recursion_misses});
  }
}

// The runs of obj's programs the kernel skipped because the program was
// already running on that CPU (kernel/bpf/trampoline.c
// __bpf_prog_enter_recur for fentry/fexit, kernel/trace/bpf_trace.c
// __bpf_trace_run for tp_btf on kernels that check): events lost with no
// counter of ours.
uint64_t recursion_misses(bpf_object* obj) {
  std::vector<ProgramStats> stats;
  add_program_stats(obj, stats);
  uint64_t sum = 0;
  for (const auto& s : stats) sum += s.recursion_misses;
  return sum;
}

}  // namespace

ProbeManager::~ProbeManager() {
  if (rings_) ring_buffer__free(rings_);
  if (nfs_) nfs_bpf__destroy(nfs_);
  if (tcp_) tcp_bpf__destroy(tcp_);
  if (jobio_) jobio_bpf__destroy(jobio_);
  if (cgroup_fd_ >= 0) close(cgroup_fd_);
}

Expected<void> ProbeManager::select_programs(const ProbeOptions& options,
                                             const KernelFeatures& features) {
  std::set<std::string> in_object;
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, jobio_->obj) in_object.emplace(bpf_program__name(prog));
  auto plan = select_jobio_programs(options.probe_mode, features, &in_object);
  if (!plan) return plan.error();
  plan_ = std::move(*plan);
  const auto& selectable = selectable_jobio_programs();
  bpf_object__for_each_program(prog, jobio_->obj) {
    const std::string name = bpf_program__name(prog);
    if (!selectable.contains(name) || plan_.load.contains(name)) continue;
    if (int err = bpf_program__set_autoload(prog, false))
      return make_error(
          fmt::format("leaving out the jobio program {} failed: {}", name, std::strerror(-err)));
  }
  // What this kernel does not let us see goes in the trace's warning.
  for (const auto& u : plan_.unseen) notes_.push_back(u);
  jobio_->rodata->probe_mode = plan_.mode;
  jobio_->rodata->count_installed_pages = plan_.load.contains("on_rss_stat");
  jobio_->rodata->fold_window_ns = options.fold_window_ns;
  jobio_->rodata->fold_max_bytes = options.fold_max_bytes;
  // balance_dirty_pages' pause is in jiffies (probes/kernel_hz.h).
  jobio_->rodata->jiffy_ns = features.hz > 0 ? 1'000'000'000ULL / features.hz : 0;
  jobio_->rodata->dirty_pause_arg = static_cast<__u32>(plan_.dirty_pause_arg);
  // PAGE_SHIFT is not in BTF: the mmap records carry it from here.
  jobio_->rodata->page_shift =
      static_cast<__u32>(std::countr_zero(static_cast<unsigned long>(sysconf(_SC_PAGESIZE))));
  return {};
}

Expected<void> ProbeManager::start_jobio(const ProbeOptions& options,
                                         const KernelFeatures& features) {
  jobio_ = jobio_bpf__open();
  if (!jobio_)
    return make_error(fmt::format("opening the jobio BPF object failed: {}{}",
                                  why_load_failed(errno), take_libbpf_log()));
  if (auto ok = select_programs(options, features); !ok) return ok;
  jobio_->rodata->self_tgid = static_cast<__u32>(options.self_tgid);
  jobio_->rodata->filter_mode = options.filter == ProbeOptions::Filter::Cgroup ? CKPT_FILTER_CGROUP
                                : options.filter == ProbeOptions::Filter::All  ? CKPT_FILTER_ALL
                                                                               : CKPT_FILTER_TGIDS;
  // Wake the reader once an eighth of the ring is waiting (see ckpt_wakeup_flags).
  jobio_->rodata->wakeup_bytes = options.ringbuf_bytes / 8;
  jobio_->rodata->floor_only = options.floor_only;
  jobio_->rodata->cpu_flush_min_ns = options.cpu_flush_min_ns;
  if (int err = bpf_map__set_max_entries(jobio_->maps.jobio_events, options.ringbuf_bytes))
    return make_error(fmt::format("sizing the ring buffer to {} bytes failed: {}",
                                  options.ringbuf_bytes, std::strerror(-err)));

  for (const auto& sc : traced_syscalls()) {
    if (sc.number < 0 || sc.number >= CKPT_MAX_SYSCALLS)
      return make_error(fmt::format("syscall {} has number {}, beyond the table's {}", sc.name,
                                    sc.number, CKPT_MAX_SYSCALLS));
    jobio_->rodata->syscall_kinds[sc.number] = static_cast<__u8>(sc.kind);
  }

  if (int err = jobio_bpf__load(jobio_))
    return make_error(fmt::format("loading the jobio BPF programs failed: {}{}",
                                  why_load_failed(err), take_libbpf_log()));
  if (options.filter == ProbeOptions::Filter::Cgroup) {
    cgroup_fd_ = open(options.cgroup_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cgroup_fd_ < 0)
      return make_error(fmt::format("cgroup {}: {}", options.cgroup_path, std::strerror(errno)));
    uint32_t key = 0;
    if (bpf_map_update_elem(bpf_map__fd(jobio_->maps.target_cgroup), &key, &cgroup_fd_, BPF_ANY) !=
        0)
      return make_error(fmt::format("cgroup {}: not a cgroup v2 directory ({})",
                                    options.cgroup_path, std::strerror(errno)));
  }
  return attach_jobio();
}

// Every fexit program before any fentry one (bpf/jobio_file_layer.bpf.h):
// a call whose entry a program saw then always has its exit seen, so the
// per-thread nesting depth cannot stick above zero. The links go where the
// skeleton keeps them, so jobio_bpf__destroy detaches them.
Expected<void> ProbeManager::attach_jobio() {
  const bpf_object_skeleton* skel = jobio_->skeleton;
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < skel->prog_cnt; ++i) {
      bpf_program* prog = *skel->progs[i].prog;
      if (!bpf_program__autoload(prog)) continue;
      const bool entry = std::string_view(bpf_program__section_name(prog)).starts_with("fentry/");
      if (entry != (pass == 1)) continue;
      bpf_link* link = bpf_program__attach(prog);
      if (!link)
        return make_error(fmt::format("attaching the jobio BPF program {} failed: {}{}",
                                      bpf_program__name(prog), why_load_failed(errno),
                                      take_libbpf_log()));
      *skel->progs[i].link = link;
    }
  }
  return {};
}

Expected<void> ProbeManager::start_tcp(const ProbeOptions& options) {
  tcp_ = tcp_bpf__open();
  if (!tcp_)
    return make_error(fmt::format("opening the tcp BPF object failed: {}", why_load_failed(errno)));
  tcp_->rodata->sample_interval_ns = options.tcp_sample_interval_ns;
  if (int err = tcp_bpf__load(tcp_))
    return make_error(fmt::format("loading the tcp BPF programs failed: {}{}", why_load_failed(err),
                                  take_libbpf_log()));
  for (const auto& ep : options.endpoints)
    if (auto ok = add_storage_endpoint(ep); !ok) return ok;
  if (int err = tcp_bpf__attach(tcp_))
    return make_error(fmt::format("attaching the tcp BPF programs failed: {}{}",
                                  why_load_failed(err), take_libbpf_log()));
  return {};
}

Expected<void> ProbeManager::add_storage_endpoint(const StorageEndpoint& ep) {
  if (!tcp_) return make_error("the transport probes are not running");
  const int map_fd = bpf_map__fd(tcp_->maps.storage_endpoints);
  std::vector<ckpt_endpoint_key> keys;
  ckpt_endpoint_key key = {};
  key.port = ep.port;
  if (ep.host.empty()) {
    key.family = AF_INET;
    keys.push_back(key);
    key.family = AF_INET6;
    keys.push_back(key);
  } else if (inet_pton(AF_INET, ep.host.c_str(), key.addr) == 1) {
    key.family = AF_INET;
    keys.push_back(key);
  } else if (inet_pton(AF_INET6, ep.host.c_str(), key.addr) == 1) {
    key.family = AF_INET6;
    keys.push_back(key);
  } else {
    return make_error(fmt::format("storage endpoint '{}' is not an address", ep.host));
  }
  uint8_t one = 1;
  for (const auto& k : keys)
    if (bpf_map_update_elem(map_fd, &k, &one, BPF_ANY) != 0)
      return make_error(fmt::format("adding storage endpoint {}:{} failed: {}", ep.host, ep.port,
                                    std::strerror(errno)));
  return {};
}

Expected<void> ProbeManager::start_nfs() {
  nfs_ = nfs_bpf__open();
  if (!nfs_)
    return make_error(fmt::format("opening the nfs BPF object failed: {}", why_load_failed(errno)));
  // Kernels differ in which NFS/sunrpc tracepoints they have: the ones that
  // carry the stages are required, the others only add detail and are left
  // out, with a note, where missing.
  auto present = nfs_tracepoints_present();
  bpf_program* prog = nullptr;
  bpf_object__for_each_program(prog, nfs_->obj) {
    std::string_view section = bpf_program__section_name(prog);
    constexpr std::string_view kPrefix = "tp_btf/";
    if (!section.starts_with(kPrefix)) continue;
    const std::string tracepoint(section.substr(kPrefix.size()));
    if (!present || present->count(tracepoint)) continue;
    if (is_optional_nfs_tracepoint(tracepoint)) {
      bpf_program__set_autoload(prog, false);
      notes_.push_back(fmt::format("tracepoint {} is missing on this kernel: {}", tracepoint,
                                   optional_nfs_tracepoint_loss(tracepoint)));
      continue;
    }
    return make_error(fmt::format(
        "tracepoint {} is missing on this kernel (no btf_trace_{} in the vmlinux, sunrpc or nfs "
        "BTF): the NFS stages need it",
        tracepoint, tracepoint));
  }
  if (int err = nfs_bpf__load(nfs_))
    return make_error(fmt::format("loading the nfs BPF programs failed: {}{}", why_load_failed(err),
                                  take_libbpf_log()));
  if (int err = nfs_bpf__attach(nfs_))
    return make_error(fmt::format("attaching the nfs BPF programs failed: {}{}",
                                  why_load_failed(err), take_libbpf_log()));
  if (ring_buffer__add(rings_, bpf_map__fd(nfs_->maps.nfs_events), ring_callback, on_nfs_.get()) !=
      0)
    return make_error(fmt::format("nfs ring buffer set-up failed: {}", std::strerror(errno)));
  return {};
}

Expected<void> ProbeManager::start_nfs_if_available() {
  if (nfs_) return {};
  if (!nfs_wanted_) return make_error("the NFS probes were not asked for");
  if (auto ok = nfs_tracing_available(); !ok) return ok;
  if (auto ok = start_nfs(); !ok) {
    // A ring buffer added before a failure keeps the map open: a partly set
    // up object is torn down whole, and not retried.
    nfs_bpf__destroy(nfs_);
    nfs_ = nullptr;
    nfs_wanted_ = false;
    return ok;
  }
  return {};
}

Expected<std::unique_ptr<ProbeManager>> ProbeManager::start(const ProbeOptions& options,
                                                            const KernelFeatures& features,
                                                            RecordHandler on_jobio,
                                                            RecordHandler on_tcp,
                                                            RecordHandler on_nfs) {
  libbpf_set_print(capture_libbpf_print);
  if (!features.bpf_privileged) return make_error(features.privilege_note);
  if (!features.btf_vmlinux)
    return make_error("this kernel has no BTF (/sys/kernel/btf/vmlinux): CO-RE probes cannot load");
  std::unique_ptr<ProbeManager> pm(new ProbeManager());
  pm->on_jobio_ = std::make_unique<RecordHandler>(std::move(on_jobio));
  pm->on_tcp_ = std::make_unique<RecordHandler>(std::move(on_tcp));
  pm->on_nfs_ = std::make_unique<RecordHandler>(std::move(on_nfs));
  if (auto ok = pm->start_jobio(options, features); !ok) return ok.error();
  pm->rings_ = ring_buffer__new(bpf_map__fd(pm->jobio_->maps.jobio_events), ring_callback,
                                pm->on_jobio_.get(), nullptr);
  if (!pm->rings_)
    return make_error(fmt::format("ring buffer set-up failed: {}", std::strerror(errno)));
  if (options.tcp && !options.endpoints.empty()) {
    if (auto ok = pm->start_tcp(options); !ok) {
      // The job's own I/O is still worth tracing without the transport stage.
      pm->notes_.push_back("transport stage off: " + ok.error().message);
      tcp_bpf__destroy(pm->tcp_);
      pm->tcp_ = nullptr;
    } else if (ring_buffer__add(pm->rings_, bpf_map__fd(pm->tcp_->maps.tcp_events), ring_callback,
                                pm->on_tcp_.get()) != 0) {
      return make_error(fmt::format("tcp ring buffer set-up failed: {}", std::strerror(errno)));
    }
  }
  pm->nfs_wanted_ = options.nfs;
  if (options.nfs) {
    // Not fatal: the job's own I/O and the transport are still worth tracing.
    if (auto ok = pm->start_nfs_if_available(); !ok)
      pm->notes_.push_back("NFS stages off: " + ok.error().message);
  }
  return pm;
}

Expected<void> ProbeManager::trace_tgid(uint32_t tgid) {
  uint8_t one = 1;
  if (bpf_map_update_elem(bpf_map__fd(jobio_->maps.traced_tgids), &tgid, &one, BPF_ANY) != 0)
    return make_error(fmt::format("cannot trace pid {}: {}", tgid, std::strerror(errno)));
  return {};
}

void ProbeManager::sync(int /*timeout_ms*/) {
  // Whatever the kernel already queued.
  for (int i = 0; i < 1000; ++i) {
    auto n = poll(0);
    if (!n || *n == 0) break;
  }
}

int ProbeManager::wait_fd() const { return rings_ ? ring_buffer__epoll_fd(rings_) : -1; }

Expected<int> ProbeManager::poll(int timeout_ms) {
  // Records are submitted without a wakeup until enough are waiting (see
  // ckpt_wakeup_flags in bpf/core_fixes.bpf.h): the wait is also a timer,
  // and every ring is drained after it.
  int n = ring_buffer__poll(rings_, timeout_ms);
  if (n < 0 && n != -EINTR)
    return make_error(fmt::format("ring buffer poll failed: {}", std::strerror(-n)));
  int more = ring_buffer__consume(rings_);
  if (more < 0)
    return make_error(fmt::format("ring buffer consume failed: {}", std::strerror(-more)));
  return (n < 0 ? 0 : n) + more;
}

void ProbeManager::set_file_verdict(const FileId& file, bool is_checkpoint) {
  const FileVerdictKey key = file_verdict_key(file);
  const uint8_t value = file_verdict_value(is_checkpoint);
  // A verdict not written leaves the file a candidate: its calls are still
  // recorded, so nothing is lost, only the in-kernel filtering.
  if (bpf_map_update_elem(bpf_map__fd(jobio_->maps.file_verdicts), &key, &value, BPF_ANY) != 0) {
    ++verdict_errors_;
    return;
  }
  ++verdicts_written_;
  bump_verdict_generation();
}

void ProbeManager::bump_verdict_generation() {
  // After the map write: a thread that read the old generation before the
  // write sees a newer one at its next call and looks the verdict up again
  // (bpf/jobio_state.bpf.h thread_file_verdict). The .bss is mmap'd by the
  // skeleton; the programs bump it with atomic adds too.
  __atomic_fetch_add(&jobio_->bss->verdict_generation, 1, __ATOMIC_SEQ_CST);
}

void ProbeManager::pause_other_io(bool paused) {
  // The .bss is mmap'd by the skeleton; the programs read it at every call.
  __atomic_store_n(&jobio_->bss->other_io_paused, paused ? 1u : 0u, __ATOMIC_RELAXED);
}

void ProbeManager::forget_other_verdicts() {
  const int fd = bpf_map__fd(jobio_->maps.file_verdicts);
  std::vector<FileVerdictKey> others;
  FileVerdictKey key{};
  FileVerdictKey next{};
  const void* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    uint8_t value = 0;
    if (bpf_map_lookup_elem(fd, &next, &value) == 0 && value == CKPT_VERDICT_OTHER)
      others.push_back(next);
    key = next;
    prev = &key;
  }
  for (const auto& k : others)
    if (bpf_map_delete_elem(fd, &k) != 0 && errno != ENOENT) ++verdict_errors_;
  if (!others.empty()) bump_verdict_generation();
}

std::vector<uint32_t> ProbeManager::threads_in_hot_slots() const {
  std::vector<uint32_t> out;
  const int ncpus = libbpf_num_possible_cpus();
  if (ncpus <= 0) return out;
  // A per-CPU map's values come back one per possible CPU, each rounded up to
  // 8 bytes (Documentation/bpf/map_array.rst); ckpt_hot_slot_head opens each.
  const size_t stride = (bpf_map__value_size(jobio_->maps.hot_slots) + 7) / 8 * 8;
  std::vector<unsigned char> values(stride * static_cast<size_t>(ncpus));
  const uint32_t key = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(jobio_->maps.hot_slots), &key, values.data()) != 0)
    return out;
  for (int cpu = 0; cpu < ncpus; ++cpu) {
    ckpt_hot_slot_head head{};
    std::memcpy(&head, values.data() + stride * static_cast<size_t>(cpu), sizeof(head));
    if (head.owner != 0) out.push_back(head.owner);
  }
  return out;
}

std::vector<DropRecord> ProbeManager::drops() const {
  std::vector<DropRecord> out;
  auto jobio = sum_percpu(bpf_map__fd(jobio_->maps.jobio_drops), CKPT_JOBIO_DROP_MAX);
  for (uint32_t i = 0; i < CKPT_JOBIO_DROP_MAX; ++i)
    out.push_back({"jobio", std::string(kJobioDropCauses[i].name), jobio[i]});
  // Not an event lost: a file left a candidate (recorded in full).
  out.push_back({"jobio", "verdict_write_failed", verdict_errors_});
  out.push_back({"jobio", std::string(kRecursionSkippedCause), recursion_misses(jobio_->obj)});
  if (tcp_) {
    auto tcp = sum_percpu(bpf_map__fd(tcp_->maps.tcp_drops), CKPT_TCP_DROP_MAX);
    for (uint32_t i = 0; i < CKPT_TCP_DROP_MAX; ++i)
      out.push_back({"tcp", std::string(kTcpDropCauses[i].name), tcp[i]});
    out.push_back({"tcp", std::string(kRecursionSkippedCause), recursion_misses(tcp_->obj)});
  }
  if (nfs_) {
    auto nfs = sum_percpu(bpf_map__fd(nfs_->maps.nfs_drops), CKPT_NFS_DROP_MAX);
    for (uint32_t i = 0; i < CKPT_NFS_DROP_MAX; ++i)
      out.push_back({"nfs", std::string(kNfsDropCauses[i].name), nfs[i]});
    out.push_back({"nfs", std::string(kRecursionSkippedCause), recursion_misses(nfs_->obj)});
  }
  return out;
}

std::vector<TcpLatest> ProbeManager::tcp_latest() const {
  std::vector<TcpLatest> out;
  if (!tcp_) return out;
  const int fd = bpf_map__fd(tcp_->maps.sock_states);
  uint64_t key = 0;
  uint64_t next = 0;
  const void* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    ckpt_tcp_sock_state st{};
    if (bpf_map_lookup_elem(fd, &next, &st) == 0 && st.latest.time_ns != 0) {
      const auto& l = st.latest;
      out.push_back(TcpLatest{l.time_ns, l.sock_cookie, l.bytes_acked, l.bytes_received,
                              l.bytes_sent, l.zero_window_ns, l.total_retrans, l.in_flight,
                              l.backlog});
    }
    key = next;
    prev = &key;
  }
  return out;
}

std::vector<ProgramStats> ProbeManager::program_stats() const {
  std::vector<ProgramStats> out;
  add_program_stats(jobio_->obj, out);
  if (tcp_) add_program_stats(tcp_->obj, out);
  if (nfs_) add_program_stats(nfs_->obj, out);
  return out;
}

Expected<int> enable_bpf_stats() {
  int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  if (fd < 0) return make_error(fmt::format("BPF_ENABLE_STATS failed: {}", std::strerror(errno)));
  return fd;
}

}  // namespace ckpt
