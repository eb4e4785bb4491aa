// Which of jobio.bpf.c's programs load on this kernel, and so which probe
// mode the job's file I/O is traced in (docs/design of issue 18): the file
// layer (fentry/fexit on the VFS) where the kernel allows trampolines and has
// the functions, else raw syscalls. A pure function of the kernel's facts
// (KernelFeatures, probed once) and the BPF object's program names, so every
// kernel's answer is unit-tested without that kernel.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "probes/kernel_features.h"

namespace ckpt {

// What the user asked for (--probe-mode).
enum class RequestedProbeMode { Auto, Syscall, FileLayer };

// "auto", "syscall", "file_layer"; anything else is an error naming the flag
// and the choices.
Expected<RequestedProbeMode> parse_probe_mode(std::string_view text);
// The error's sentence without the flag's name: "'x' is not a probe mode;
// choose auto, syscall or file_layer" (CLI11 prefixes "--probe-mode: ").
std::string not_a_probe_mode(std::string_view text);
std::string_view requested_probe_mode_name(RequestedProbeMode mode);
// enum ckpt_probe_mode as the trace and the metrics name it: "syscall", "file_layer".
std::string_view probe_mode_name(uint32_t mode);

struct JobioProgramPlan {
  uint32_t mode = 0;  // enum ckpt_probe_mode
  // Why this mode, in words ("the kernel refuses fentry programs: ...").
  std::string reason;
  // The programs of the selection table to load; the object's programs the
  // table does not name (the scheduler's) always load.
  std::set<std::string> load;
  // What is not seen on this kernel, each with why ("mmap'd I/O is not
  // seen: no trampolines and no mm_filemap_fault tracepoint (6.11+)"):
  // these, and only these, go to the trace's warning.
  std::vector<std::string> unseen;
  // balance_dirty_pages' pause: its index among the tracepoint's arguments
  // (10 on 6.1, 6 since the dirty_throttle_control form); 0 when the
  // throttle program is not loaded.
  int dirty_pause_arg = 0;
};

// Every program name the selection decides about.
const std::set<std::string>& selectable_jobio_programs();
// Every kernel function the selection looks up in the BTF: what the feature
// probe keeps of vmlinux's 56,000-odd FUNCs (a set of them all took 40-100 ms
// to build, on every `run`).
const std::set<std::string, std::less<>>& jobio_btf_functions();

// The plan for `requested` on a kernel with `kernel`'s facts, given the
// programs the BPF object has (nullptr: assume it has them all). An error
// only when file_layer was asked for and cannot be had, saying why.
Expected<JobioProgramPlan> select_jobio_programs(
    RequestedProbeMode requested, const KernelFeatures& kernel,
    const std::set<std::string>* object_programs = nullptr);

}  // namespace ckpt
