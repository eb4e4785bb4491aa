#include "probes/jobio_programs.h"

#include <optional>

#include <fmt/format.h>

#include "jobio.h"

namespace ckpt {
namespace {

using Names = std::vector<std::string_view>;

// The file-layer programs every traced call needs, by the function they
// attach to: without one of them the mode cannot stand.
struct Required {
  std::string_view function;
  Names programs;
};
const Required kRequiredFileLayer[] = {
    {"vfs_read", {"fl_read_enter", "fl_read_exit"}},
    {"vfs_write", {"fl_write_enter", "fl_write_exit"}},
    {"vfs_fsync_range", {"fl_fsync_enter", "fl_fsync_exit"}},
    {"do_sys_openat2", {"fl_open_enter", "fl_open_exit"}},
};

// The optional file-layer programs: what the trace lacks without them.
struct Optional {
  std::string_view function;
  Names programs;
  std::string_view unseen;  // "<unseen> is not seen" / "are not seen"
};
const Optional kOptionalFileLayer[] = {
    {"vfs_readv", {"fl_readv_enter", "fl_readv_exit"}, "readv and preadv calls are"},
    {"vfs_writev", {"fl_writev_enter", "fl_writev_exit"}, "writev and pwritev calls are"},
    {"do_sys_ftruncate", {"fl_ftruncate_enter", "fl_ftruncate_exit"}, "ftruncate calls are"},
    {"do_renameat2", {"fl_rename_enter", "fl_rename_exit"}, "renames are"},
    {"do_mkdirat", {"fl_mkdir_enter", "fl_mkdir_exit"}, "mkdir calls are"},
    {"do_unlinkat", {"fl_unlink_enter", "fl_unlink_exit"}, "unlink calls are"},
    {"do_rmdir", {"fl_rmdir_enter", "fl_rmdir_exit"}, "rmdir calls are"},
    {"vfs_statx", {"fl_stat_enter", "fl_stat_exit"}, "stat calls are"},
    {"vfs_copy_file_range", {"fl_copy_enter", "fl_copy_exit"}, "copy_file_range copies are"},
    {"do_splice_direct", {"fl_splice_enter", "fl_splice_exit"}, "sendfile and splice copies are"},
    {"vfs_clone_file_range", {"fl_clone_enter", "fl_clone_exit"}, "reflinks (ioctl FICLONE) are"},
    // The syscalls' own functions (bpf/jobio.h CKPT_SYSCALL_FN_PREFIX).
    {CKPT_SYSCALL_FN_PREFIX "chdir",
     {"fl_chdir_enter", "fl_chdir_exit"},
     "chdir calls are (relative names then resolve through /proc, racily)"},
    {CKPT_SYSCALL_FN_PREFIX "fchdir",
     {"fl_fchdir_enter", "fl_fchdir_exit"},
     "fchdir calls are (relative names then resolve through /proc, racily)"},
};

const Names kSyscallPrograms = {"on_sys_enter", "on_sys_exit"};
// Linux AIO in the file layer: a request as it is submitted, a wait for
// completions (bpf/jobio_aio.bpf.h); one without the other reports nothing.
const Names kAioPrograms = {"fl_aio_submit_enter", "fl_aio_submit_exit", "fl_aio_wait_enter",
                            "fl_aio_wait_exit"};
const Names kFlushPrograms = {"fl_flush_enter", "fl_flush_exit"};
const Names kClosePrograms = {"fl_close_enter", "fl_close_exit"};
const Names kFaultPrograms = {"fl_fault_enter", "fl_fault_exit"};
// The pages a fault installs (bpf/jobio_file_layer.bpf.h): set_pte_range on
// 6.6+, do_set_pte before it; do_set_pmd for a PMD-sized folio.
const Names kSetPteRangePrograms = {"fl_set_pte_range"};
const Names kSetPtePrograms = {"fl_do_set_pte"};
const Names kSetPmdPrograms = {"fl_do_set_pmd_exit"};
const Names kFaultTracepointPrograms = {"on_fault_tp"};
const Names kMapPagesTracepointPrograms = {"on_map_pages_tp"};
const Names kPageCachePrograms = {"on_page_cache_add"};
// Which faults write (x86's exceptions tracepoints): mm_filemap_fault does not say.
const Names kFaultKindPrograms = {"on_user_fault", "on_kernel_fault"};
const Names kMappedStorePrograms = {"on_folio_dirtied"};
// What the storage did inside a call (bpf/jobio_storage.bpf.h).
const Names kCallStoragePrograms = {"on_bio_queue", "on_rq_complete", "on_bio_complete"};
const Names kDirtyThrottlePrograms = {"on_dirty_throttle"};
// Syscall mode: the pages each read fault installs, counted from the mm's
// file-page counters (bpf/jobio_mappings.bpf.h count_installed_pages).
const Names kInstalledPagesPrograms = {"on_rss_stat"};
// NFS 4.2 COPY and CLONE (the nfsv4 module's tracepoints): the copy the
// server made is named so (bpf/jobio_storage_copies.bpf.h).
const Names kServerCopyPrograms = {"on_nfs4_copy", "on_nfs4_clone"};
const Names kUringSubmitReq = {"on_uring_submit_req"};
const Names kUringSubmitSqe = {"on_uring_submit_sqe"};
const Names kUringCompleteCqe = {"on_uring_complete_cqe"};
const Names kUringCompleteRes = {"on_uring_complete_res"};
// btf_trace_balance_dirty_pages' parameters, its context pointer included
// (probes/kernel_features.h): the pause is the second last argument.
constexpr int kBalanceDirtyPagesParams61 = 13;
constexpr int kBalanceDirtyPagesParamsDtc = 9;
// btf_trace_io_uring_complete's parameters, its context pointer included.
constexpr int kUringCompleteCqeParams = 4;  // (ctx, req, cqe): 6.15+
constexpr int kUringCompleteResParams = 8;  // (ctx, req, user_data, res, cflags, extra1, extra2)

class Selection {
 public:
  Selection(const KernelFeatures& kernel, const std::set<std::string>* object)
      : kernel_(kernel), object_(object) {}

  [[nodiscard]] bool function(std::string_view name) const {
    return kernel_.btf_functions.contains(std::string(name));
  }
  [[nodiscard]] bool tracepoint(std::string_view name) const {
    return kernel_.btf_tracepoints.contains(std::string(name));
  }
  // The first of `programs` the BPF object lacks, if any.
  [[nodiscard]] std::optional<std::string> missing_program(const Names& programs) const {
    if (!object_) return std::nullopt;
    for (auto p : programs)
      if (!object_->contains(std::string(p))) return std::string(p);
    return std::nullopt;
  }
  // Why `programs` cannot load: the kernel lacks what they attach to
  // (kernel_why), or this build's object lacks one of them; nullopt: they can.
  [[nodiscard]] std::optional<std::string> why_not(const Names& programs, bool kernel_has,
                                                   const std::string& kernel_why) const {
    if (!kernel_has) return kernel_why;
    if (auto p = missing_program(programs))
      return fmt::format("this build's jobio BPF object has no {} program", *p);
    return std::nullopt;
  }
  // Loads `programs` if they can load, else notes `unseen`: why. True if loaded.
  bool add(const Names& programs, bool kernel_has, const std::string& kernel_why,
           std::string_view unseen) {
    if (auto why = why_not(programs, kernel_has, kernel_why)) {
      plan.unseen.push_back(fmt::format("{} not seen: {}", unseen, *why));
      return false;
    }
    for (auto p : programs) plan.load.emplace(p);
    return true;
  }

  // Why the file layer cannot be had; nullopt when it can.
  [[nodiscard]] std::optional<std::string> file_layer_impossible() const {
    if (!kernel_.trampolines)
      return kernel_.trampoline_note.empty() ? "the kernel refuses fentry programs"
                                             : kernel_.trampoline_note;
    for (const auto& r : kRequiredFileLayer) {
      if (auto why = why_not(r.programs, function(r.function),
                             fmt::format("{} is not in this kernel's BTF", r.function)))
        return *why;
    }
    return std::nullopt;
  }

  void select_file_layer() {
    plan.mode = CKPT_MODE_FILE_LAYER;
    for (const auto& r : kRequiredFileLayer)
      for (auto p : r.programs) plan.load.emplace(p);
    for (const auto& o : kOptionalFileLayer)
      add(o.programs, function(o.function), fmt::format("no {} in this kernel's BTF", o.function),
          o.unseen);
    // Linux 6.7 split filp_flush out of filp_close: trace the one that flushes.
    if (function("filp_flush"))
      add(kFlushPrograms, true, "", "close calls are");
    else
      add(kClosePrograms, function("filp_close"),
          "no filp_flush or filp_close in this kernel's BTF", "close calls are");
    add(kAioPrograms, function("io_submit_one") && function("do_io_getevents"),
        "no io_submit_one or do_io_getevents in this kernel's BTF",
        "Linux AIO requests (io_submit) are");
    mmap_seen_ = add(kFaultPrograms, function("filemap_fault"),
                     "no filemap_fault in this kernel's BTF", "mmap'd I/O is");
    if (mmap_seen_) {
      if (function("set_pte_range"))
        add(kSetPteRangePrograms, true, "", "pages mapped around a fault are");
      else
        add(kSetPtePrograms, function("do_set_pte"),
            "no set_pte_range or do_set_pte in this kernel's BTF, so only the page each fault "
            "asks for counts",
            "pages mapped around a fault are");
      add(kSetPmdPrograms, function("do_set_pmd"),
          "no do_set_pmd in this kernel's BTF, so such a mapping counts only its faulting page",
          "huge pages mapped whole (PMD) are");
    }
  }

  void select_syscalls(const std::string& why_not_file_layer) {
    plan.mode = CKPT_MODE_SYSCALL;
    for (auto p : kSyscallPrograms) plan.load.emplace(p);
    mmap_seen_ =
        add(kFaultTracepointPrograms, tracepoint("mm_filemap_fault"),
            why_not_file_layer + " and no mm_filemap_fault tracepoint (6.11+)", "mmap'd I/O is");
    if (mmap_seen_) {
      add(kMapPagesTracepointPrograms, tracepoint("mm_filemap_map_pages"),
          "no mm_filemap_map_pages tracepoint", "pages mapped around a fault are");
      const bool kinds =
          add(kFaultKindPrograms, tracepoint("page_fault_user") && tracepoint("page_fault_kernel"),
              "no page_fault_user and page_fault_kernel tracepoints (x86 only), so a write fault "
              "counts as a read of its page",
              "which faults write is");
      add(kInstalledPagesPrograms, kinds && tracepoint("rss_stat"),
          kinds ? "no rss_stat tracepoint, so reads through a mapping count the pages the filemap "
                  "tracepoints name, a lower bound"
                : "no page-fault tracepoints to start each fault's count from, so reads through a "
                  "mapping count the pages the filemap tracepoints name, a lower bound",
          "the pages each fault maps are");
    }
  }

  // Both modes: the page cache and io_uring tracepoints.
  void select_shared() {
    if (mmap_seen_)
      add(kPageCachePrograms, tracepoint("mm_filemap_add_to_page_cache"),
          "no mm_filemap_add_to_page_cache tracepoint", "page faults that read from storage are");
    // One program for both: the folios a write call dirtied, and a store's.
    add(kMappedStorePrograms, tracepoint("writeback_dirty_folio"),
        "no writeback_dirty_folio tracepoint",
        "stores through shared mappings and the bytes a save left dirty in the page cache are");
    add(kCallStoragePrograms,
        tracepoint("block_bio_queue") && tracepoint("block_rq_complete") &&
            tracepoint("block_bio_complete"),
        "no block_bio_queue, block_rq_complete and block_bio_complete tracepoints",
        "the bytes calls made the storage read and write (the storage stage of local files) are");
    const int dirty_params = kernel_.balance_dirty_pages_params;
    const bool dirty_form =
        dirty_params == kBalanceDirtyPagesParams61 || dirty_params == kBalanceDirtyPagesParamsDtc;
    add(kDirtyThrottlePrograms, dirty_form && kernel_.hz > 0,
        !tracepoint("balance_dirty_pages") ? "no balance_dirty_pages tracepoint"
        : !dirty_form ? fmt::format("balance_dirty_pages has {} parameters, a form this build "
                                    "does not know",
                                    dirty_params)
                      : kernel_.hz_note,
        "the time writes were throttled for dirty pages (the storage stage's) is");
    if (plan.load.contains(std::string(kDirtyThrottlePrograms[0])))
      plan.dirty_pause_arg = dirty_params - 3;
    // Without the nfsv4 module there is no NFS 4 mount to copy on (a mount
    // made after the probes started is the limit docs/probe-modes.md names).
    if (kernel_.nfs4_module)
      add(kServerCopyPrograms, tracepoint("nfs4_copy") && tracepoint("nfs4_clone"),
          "the nfsv4 module has no nfs4_copy and nfs4_clone tracepoints, so a copy the server "
          "makes counts as the client's copy_file_range",
          "NFS 4.2 server-side copies are");
    const int params = kernel_.io_uring_complete_params;
    const Names complete = params == kUringCompleteCqeParams   ? kUringCompleteCqe
                           : params == kUringCompleteResParams ? kUringCompleteRes
                                                               : Names{};
    std::string complete_why =
        !tracepoint("io_uring_complete")
            ? "no io_uring_complete tracepoint"
            : fmt::format("io_uring_complete has {} parameters, a form this build does not know",
                          params);
    if (!add(complete, !complete.empty(), complete_why, "io_uring requests are"))
      return;  // a submission without its completion makes no record
    if (tracepoint("io_uring_submit_req"))
      add(kUringSubmitReq, true, "", "io_uring requests' durations are");
    else
      add(kUringSubmitSqe, tracepoint("io_uring_submit_sqe"),
          "no io_uring_submit_req or io_uring_submit_sqe tracepoint",
          "io_uring requests' durations are");
  }

  JobioProgramPlan plan;

 private:
  const KernelFeatures& kernel_;
  const std::set<std::string>* object_;
  bool mmap_seen_ = false;
};

}  // namespace

Expected<RequestedProbeMode> parse_probe_mode(std::string_view text) {
  if (text == "auto") return RequestedProbeMode::Auto;
  if (text == "syscall") return RequestedProbeMode::Syscall;
  if (text == "file_layer") return RequestedProbeMode::FileLayer;
  return make_error("--probe-mode: " + not_a_probe_mode(text));
}

std::string not_a_probe_mode(std::string_view text) {
  return fmt::format("'{}' is not a probe mode; choose auto, syscall or file_layer", text);
}

std::string_view requested_probe_mode_name(RequestedProbeMode mode) {
  switch (mode) {
    case RequestedProbeMode::Syscall:
      return "syscall";
    case RequestedProbeMode::FileLayer:
      return "file_layer";
    case RequestedProbeMode::Auto:
      break;
  }
  return "auto";
}

std::string_view probe_mode_name(uint32_t mode) {
  return mode == CKPT_MODE_FILE_LAYER ? "file_layer" : "syscall";
}

const std::set<std::string>& selectable_jobio_programs() {
  static const std::set<std::string> names = [] {
    std::set<std::string> out;
    auto put = [&out](const Names& programs) {
      for (auto p : programs) out.emplace(p);
    };
    for (const auto& r : kRequiredFileLayer) put(r.programs);
    for (const auto& o : kOptionalFileLayer) put(o.programs);
    for (const Names* n : {&kSyscallPrograms,         &kAioPrograms,
                           &kFlushPrograms,           &kClosePrograms,
                           &kFaultPrograms,           &kSetPteRangePrograms,
                           &kSetPtePrograms,          &kSetPmdPrograms,
                           &kFaultTracepointPrograms, &kMapPagesTracepointPrograms,
                           &kPageCachePrograms,       &kFaultKindPrograms,
                           &kMappedStorePrograms,     &kInstalledPagesPrograms,
                           &kUringSubmitReq,          &kUringSubmitSqe,
                           &kUringCompleteCqe,        &kUringCompleteRes,
                           &kServerCopyPrograms,      &kCallStoragePrograms,
                           &kDirtyThrottlePrograms})
      put(*n);
    return out;
  }();
  return names;
}

const std::set<std::string, std::less<>>& jobio_btf_functions() {
  static const std::set<std::string, std::less<>> names = [] {
    std::set<std::string, std::less<>> out = {"filp_flush",    "filp_close",     "filemap_fault",
                                              "set_pte_range", "do_set_pte",     "do_set_pmd",
                                              "io_submit_one", "do_io_getevents"};
    for (const auto& r : kRequiredFileLayer) out.emplace(r.function);
    for (const auto& o : kOptionalFileLayer) out.emplace(o.function);
    return out;
  }();
  return names;
}

Expected<JobioProgramPlan> select_jobio_programs(RequestedProbeMode requested,
                                                 const KernelFeatures& kernel,
                                                 const std::set<std::string>* object_programs) {
  Selection s(kernel, object_programs);
  const auto impossible = s.file_layer_impossible();
  if (requested == RequestedProbeMode::FileLayer && impossible)
    return make_error(fmt::format(
        "--probe-mode file_layer: the file-layer probes cannot run here: {}; use --probe-mode "
        "auto or syscall",
        *impossible));
  if (requested != RequestedProbeMode::Syscall && !impossible) {
    s.select_file_layer();
    s.plan.reason = "fentry/fexit on the kernel's VFS functions";
  } else if (requested == RequestedProbeMode::Syscall) {
    s.select_syscalls("--probe-mode syscall");
    s.plan.reason = "--probe-mode syscall";
  } else {
    s.select_syscalls(kernel.trampolines ? "no file-layer probes" : "no trampolines");
    s.plan.reason = "the file-layer probes cannot run here: " + *impossible;
  }
  s.select_shared();
  return std::move(s.plan);
}

}  // namespace ckpt
