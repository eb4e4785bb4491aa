#include "apps/cli/session.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/summary.h"
#include "common/clock.h"
#include "config/checkpoint_flags.h"
#include "json/json_io.h"
#include "probes/forward_protocol.h"

namespace ckpt::cli {

namespace {

// Output must never fail the profiler: a closed or broken stderr/stdout
// (`2>&-`, `| head`) loses the text, never the job's exit status. fmt::print
// throws on a failed write, so plain stdio with errors ignored.
void write_out(FILE* f, const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) std::clearerr(f);
  std::fflush(f);
}

}  // namespace

void warn(const std::string& message) { write_out(stderr, "ckptscope: " + message + "\n"); }

Expected<Config> load_effective_config(const TraceFlags& flags) {
  std::error_code ec;
  const std::filesystem::path cwd = std::filesystem::current_path(ec);
  if (ec)
    return load_effective_config(
        flags, RelativeBase{std::nullopt, "this directory cannot be read (" + ec.message() + ")"});
  return load_effective_config(flags, RelativeBase{cwd.string(), {}});
}

Expected<Config> load_effective_config(const TraceFlags& flags, const RelativeBase& relative) {
  Config config = Config::defaults();
  if (!flags.config_path.empty()) {
    auto loaded = load_config(flags.config_path);
    if (!loaded) return loaded.error();
    config = *loaded;
  }
  for (const auto& text : flags.endpoints) {
    auto ep = parse_endpoint(text);
    if (!ep) return make_error(fmt::format("--storage-endpoint {}", ep.error().message));
    config.storage_endpoints.push_back(*ep);
  }
  if (!flags.checkpoint_globs.empty() || !flags.checkpoint_dirs.empty()) {
    if (auto added = add_checkpoint_flags(config.checkpoint, flags.checkpoint_globs,
                                          flags.checkpoint_dirs, relative);
        !added)
      return added.error();
  }
  return config;
}

JobRecord make_job_record(const std::vector<std::string>& command, const std::string& mode,
                          const Config& config, const std::string& node_name) {
  JobRecord job;
  job.command = command;
  job.mode = mode;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) job.node = host;
  // Traces of one job's nodes are merged by node name (`report a.db b.db`):
  // containers often share a hostname, so the name may be given.
  if (!node_name.empty()) job.node = node_name;
  utsname u{};
  if (uname(&u) == 0) job.kernel = u.release;
  job.ckptscope_version = CKPTSCOPE_VERSION;
  job.config_json = dump_json(config.to_json());
  job.start_mono_ns = monotonic_ns();
  job.start_wall_ns = realtime_ns();
  return job;
}

ProbeOptions make_probe_options(const Config& config) {
  ProbeOptions o;
  o.self_tgid = getpid();
  o.ringbuf_bytes = config.ringbuf_bytes;
  o.endpoints = config.storage_endpoints;
  o.tcp = !config.storage_endpoints.empty();
  o.tcp_sample_interval_ns = config.tcp_sample_interval_ns;
  return o;
}

Expected<void> check_probe_mode(RequestedProbeMode mode, const KernelFeatures& features) {
  if (mode != RequestedProbeMode::FileLayer || !features.bpf_privileged) return {};
  auto plan = select_jobio_programs(mode, features);
  if (!plan) return plan.error();
  return {};
}

KernelFeatures probe_features(RequestedProbeMode mode) {
  return KernelFeatures::probe(mode == RequestedProbeMode::Syscall
                                   ? KernelFeatures::Trampolines::kSkip
                                   : KernelFeatures::Trampolines::kTry);
}

std::string exporter_socket_for(const TraceFlags& flags) {
  if (flags.no_exporter) return "";
  if (!flags.exporter_socket.empty()) return flags.exporter_socket;
  struct stat st {};
  if (stat(kDefaultExporterSocket, &st) == 0 && S_ISSOCK(st.st_mode)) return kDefaultExporterSocket;
  return "";
}

std::string default_trace_path() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
  return fmt::format("ckptscope-{}-{}.db", stamp, getpid());
}

void print_result(const TraceFlags& flags, const Trace& trace) {
  if (flags.json) write_out(stdout, dump_json(summary_json(trace), 2) + "\n");
  if (!flags.quiet) {
    write_out(stderr, summary_table(trace));
    write_out(stderr, fmt::format("ckptscope: trace written to {}\n", flags.trace_path));
  }
}

}  // namespace ckpt::cli
