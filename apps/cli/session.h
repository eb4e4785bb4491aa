// What `run`, `attach` and `demo` share: loading the config, the job record,
// the probe options, and printing the result.
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"
#include "config/checkpoint_flags.h"
#include "config/config.h"
#include "model/records.h"
#include "probes/probe_manager.h"

namespace ckpt::cli {

struct TraceFlags {
  std::string trace_path;
  bool trace_path_given = false;  // --trace was given (trace_path is not the default)
  std::string config_path;
  std::vector<std::string> endpoints;  // --storage-endpoint, added to the config's
  // --checkpoint-glob and --checkpoint-dir (run, attach), added to the
  // config's checkpoint.name_globs and dir_globs.
  std::vector<std::string> checkpoint_globs;
  std::vector<std::string> checkpoint_dirs;
  bool quiet = false;
  bool json = false;
  bool no_trace = false;
  std::string node_name;       // --node-name: the node this trace is of (default: the hostname)
  std::string bpf_stats_path;  // write per-program BPF run time here (benchmarks)
  bool probe_floor = false;    // benchmarks: attach, but trace nothing
  // --probe-mode: auto (the file layer where the kernel allows it), syscall,
  // file_layer (an error before the job starts where the kernel cannot).
  RequestedProbeMode probe_mode = RequestedProbeMode::Auto;
  // The node exporter to take records from (--exporter-socket), else the
  // standard socket when an exporter serves it; --no-exporter: never.
  std::string exporter_socket;
  bool no_exporter = false;
};

// Where `run`/`attach` look for a node exporter: "" = load our own probes.
std::string exporter_socket_for(const TraceFlags& flags);

// `relative`: what a relative --checkpoint-dir is taken from; by default the
// CLI's working directory, which `run`'s job inherits.
Expected<Config> load_effective_config(const TraceFlags& flags);
Expected<Config> load_effective_config(const TraceFlags& flags, const RelativeBase& relative);
JobRecord make_job_record(const std::vector<std::string>& command, const std::string& mode,
                          const Config& config, const std::string& node_name = {});
ProbeOptions make_probe_options(const Config& config);
// --probe-mode file_layer where this kernel cannot trace the file layer: an
// error saying why, for the user to fix before the job starts. Not checked
// without the privilege to load eBPF (the node exporter may still serve the
// mode; otherwise the run is untraced, saying why).
Expected<void> check_probe_mode(RequestedProbeMode mode, const KernelFeatures& features);
// The kernel's features for a run in `mode`: --probe-mode syscall tries no
// fentry program, so such a run leaves vfs_read's call site alone.
KernelFeatures probe_features(RequestedProbeMode mode);
std::string default_trace_path();
// The summary on stderr (or JSON on stdout with --json), unless --quiet.
void print_result(const TraceFlags& flags, const Trace& trace);
void warn(const std::string& message);

}  // namespace ckpt::cli
