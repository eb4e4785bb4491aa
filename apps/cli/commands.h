// The subcommands. Each returns the process exit code.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "analysis/logwatch/alarm_grouper.h"
#include "apps/cli/session.h"
#include "calibrate/maxima_file.h"

namespace ckpt::cli {

// The wrapper's side of `run`: the durable log, the failure cause, notifying.
struct RunOptions {
  std::string log_path;  // --log; empty = <log dir>/<job>-<time>-<pid>.log
  std::string log_dir;   // --log-dir; else the config's log_dir, else CKPTSCOPE_LOG_DIR, else .
  std::string job_name;  // --job-name; else from the command
  std::vector<std::string> notify;  // --notify mailto:ADDR | https://URL
  std::string smtp_url;             // --smtp
  std::vector<std::string> attach;  // --attach FILE: more files for the message
  std::string attach_budget;        // --attach-budget SIZE
  double output_grace_s = 2;        // wait this long for output of processes the job left behind
  bool no_gpu = false;         // --no-gpu: do not inject libckptscope_cupti.so (the gpu_copy stage)
  std::string logwatch_model;  // --logwatch-model: score the kernel log with this model
  logwatch::AlarmConfig logwatch_alarms;  // --logwatch-group-window, --logwatch-max-alarm-rate
};

// Exits with the job's status (128+N for signal N); never changes it.
int run_command(const TraceFlags& flags, const RunOptions& run,
                const std::vector<std::string>& command);

struct AttachTarget {
  std::optional<int> pid;
  std::string cgroup;
  double duration_s = 0;  // 0 = until Ctrl-C or the processes are gone
};
// --duration's ceiling, ten years: far below where duration_s * 1e9 ns
// overflows a uint64_t (about 1.8e10 s), which made attach stop at once.
inline constexpr double kMaxAttachDurationS = 315'360'000;
int attach_command(const TraceFlags& flags, const AttachTarget& target);

int summary_command(const std::string& trace_path, bool json);

// A trace as a Perfetto / Chrome trace-event timeline (exporters/perfetto).
int export_command(const std::string& trace_path, const std::string& format,
                   const std::string& out_path);

// The post-run bottleneck report of one or more nodes' traces (analysis/report).
struct ReportCommandOptions {
  std::vector<std::string> traces;
  std::string format;    // "html", "md", "json"; empty = from the output's extension, else html
  std::string out_path;  // "-" or empty = standard output
  std::string storage_read_max;   // "700GB/s"
  std::string storage_write_max;  // "250GB/s"
  std::string project;            // --project 8,16,64: add the scale projection
};
int report_command(const ReportCommandOptions& options);

// The scale projection of a few nodes' traces to N nodes (analysis/projection).
struct ProjectCommandOptions {
  std::vector<std::string> traces;
  std::string nodes;              // "8,16,64"
  std::string storage_read_max;   // "700GB/s"
  std::string storage_write_max;  // "250GB/s"
  std::string config_path;        // its storage section gives the maxima the flags do not
  std::string format;    // "table", "json", "html", "md"; empty = from the output's extension
  std::string out_path;  // "-" or empty = standard output
};
int project_command(const ProjectCommandOptions& options);

// The continuous node exporter (userspace/exporter, deploy/metrics.md).
struct ExporterOptions {
  std::string listen = ":9464";  // ADDR:PORT, [IPV6]:PORT or :PORT
  std::string config_path;
  size_t max_workloads = 100;  // distinct workload labels; later ones are "other"
  std::string socket_path = "/run/ckptscope/exporter.sock";  // "" = no registration
  // "" = socket mode 0666; a group = mode 0660, that group (docs/exporter.md).
  std::string socket_group;
  // Where the kernel's /proc is read (mountstats, processes' cgroups and
  // owners): node_exporter's --path.procfs, for a container or a test tree.
  std::string procfs = "/proc";
  // Kernel-side aggregation: a thread's on-CPU time outside I/O calls is
  // reported when it leaves the CPU only once it adds up to this much (its
  // next I/O call reports the rest), so busy nodes do not flood user space.
  uint64_t cpu_flush_min_ns = 10'000'000;
  // --probe-mode: how the node's file I/O is traced (probes/jobio_programs.h).
  RequestedProbeMode probe_mode = RequestedProbeMode::Auto;
};
int exporter_command(const ExporterOptions& options);

// The gpu_copy stage's maxima, measured with large pinned copies.
struct CalibrateOptions {
  int device = -1;            // -1: every GPU
  size_t bytes = 1ull << 30;  // per copy
  int rounds = 5;             // timed copies each way (median)
  std::string out_path;       // "" = standard output
};
int calibrate_command(const CalibrateOptions& options);
// A calibration's JSON result on standard output, or in `out_path` when one
// is given: 0, or 1 saying on stderr that the file could not be written.
int emit_calibration_result(const nlohmann::json& result, const std::string& out_path);

// `calibrate --storage DIR`: the mount's sequential write and read bandwidth,
// kept in the maxima file for run, attach, demo and the exporter.
struct CalibrateStorageOptions {
  std::string dir;
  uint64_t bytes = 1ull << 30;        // --bytes: written in all
  double seconds = 30;                // --seconds: each direction gets half
  unsigned streams = 4;               // --streams: files written and read at once
  uint64_t block_bytes = 1ull << 20;  // --block: bytes per call
  std::string config_path;            // --config: its storage maxima shown beside
  std::string out_path;               // -o: the JSON result ("" = standard output)
  std::string maxima_file;            // "" = maxima_file_for_writing()
};
int calibrate_storage_command(const CalibrateStorageOptions& options);
// Measures and saves, saying on stderr what it measured and what the config
// and the machine would say instead; `report` (when given) gets the JSON
// result. An error says what stopped it (nothing is saved then).
Expected<StorageCalibration> calibrate_storage(const CalibrateStorageOptions& options,
                                               nlohmann::json* report);

// `calibrate --memory`: the node's memory-copy bandwidth, the serialize
// stage's ceiling, kept in the maxima file beside the mounts.
struct CalibrateMemoryOptions {
  uint64_t bytes = 256ull << 20;  // --bytes: copied per round
  unsigned rounds = 5;            // --rounds: timed rounds (the best is kept)
  unsigned threads = 0;           // --threads: 0 = every CPU it may run on
  std::string out_path;           // -o: the JSON result ("" = standard output)
  std::string maxima_file;        // "" = maxima_file_for_writing()
};
int calibrate_memory_command(const CalibrateMemoryOptions& options);
// Measures and saves, saying on stderr what it measured; `report` (when
// given) gets the JSON result. An error says what stopped it.
Expected<MemoryCalibration> calibrate_memory(const CalibrateMemoryOptions& options,
                                             nlohmann::json* report);

struct DemoOptions {
  std::string dir;  // where the workload writes; a temp dir by default
  std::string shard_size = "32M";
  int shards = 4;
  int checkpoints = 2;
};
int demo_command(const TraceFlags& flags, const DemoOptions& demo);

struct ClassifyOptions {
  std::vector<std::string> logs;  // "-" = standard input
  bool json = false;
  bool list_rules = false;
  std::string rules_path;  // empty = the built-in rules
  uint64_t tail_bytes = 0;
  std::optional<int> exit_code;  // negative = killed by that signal, >128 = 128+signal
};
int classify_command(const ClassifyOptions& options);

struct EvalClassifierOptions {
  std::string corpus;  // the GPUAlert corpus directory
  std::string extra_labels;
  std::string rules_path;
  bool json = false;
  std::optional<double> min_macro_f1;
};
int eval_classifier_command(const EvalClassifierOptions& options);

}  // namespace ckpt::cli
