// `ckptscope exporter`: the continuous node exporter. Flags and config are
// checked first (exit 2), then the port is bound (exit 1 when it cannot be),
// then the probes load (exit 1 with the reason): a bad start fails fast and
// says why, for systemd or the kubelet to show.
#include <signal.h>
#include <unistd.h>

#include <atomic>

#include <fmt/format.h>

#include "apps/cli/commands.h"
#include "apps/exporter/listen_address.h"
#include "apps/exporter/metrics_server.h"
#include "apps/exporter/node_collector.h"
#include "exporters/prometheus/checkpoint_metrics.h"

namespace ckpt::cli {
namespace {

std::atomic<int> g_stop_signal{0};
void on_stop_signal(int sig) { g_stop_signal.store(sig); }

void say(const std::string& message) {
  const std::string line = "ckptscope exporter: " + message + "\n";
  if (write(STDERR_FILENO, line.data(), line.size()) < 0) {
    // stderr closed: nothing else to tell it to
  }
}

}  // namespace

int exporter_command(const ExporterOptions& options) {
  // A stop signal at any moment from here on is a clean exit 0.
  struct sigaction sa = {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  auto listen = parse_listen_address(options.listen);
  if (!listen) {
    say("--listen " + listen.error().message);
    return 2;
  }
  TraceFlags flags;
  flags.config_path = options.config_path;
  auto config = load_effective_config(flags);
  if (!config) {
    say(config.error().message);
    return 2;
  }
  if (auto ok = check_can_listen(*listen); !ok) {
    say(ok.error().message);
    return 1;
  }
  const KernelFeatures features = probe_features(options.probe_mode);
  MetricsOptions metrics_options;
  metrics_options.version = CKPTSCOPE_VERSION;
  metrics_options.kernel = features.release;
  metrics_options.max_jobs = options.max_workloads;
  metrics_options.storage_read_Bps = config->maxima.storage_read_Bps;
  metrics_options.storage_write_Bps = config->maxima.storage_write_Bps;
  CheckpointMetrics metrics(metrics_options);

  NodeCollectorOptions node;
  node.probes = make_probe_options(*config);
  node.probes.cpu_flush_min_ns = options.cpu_flush_min_ns;
  node.probes.probe_mode = options.probe_mode;
  node.registration_enabled = !options.socket_path.empty();
  node.registration.socket_path = options.socket_path;
  node.registration.socket_group = options.socket_group;
  node.registration.proc_root = options.procfs;
  node.namer.proc_root = options.procfs;
  node.procfs = options.procfs;
  node.mountstats_path = options.procfs + "/1/mountstats";
  auto collector = NodeCollector::start(*config, node, features, metrics);
  if (!collector) {
    say("cannot trace: " + collector.error().message);
    return 1;
  }
  for (const auto& note : (*collector)->notes()) say("note: " + note);
  say(fmt::format("probe mode {}: {}", (*collector)->probe_mode(),
                  (*collector)->probe_mode_reason()));
  // Notes from here on (the first collection's too: a rejected mountstats
  // sample) are said as they come.
  size_t notes_said = (*collector)->notes().size();
  // One collection before the first scrape can happen: /metrics never
  // serves a partial set (absent() rules would fire on it).
  (*collector)->pump(0);
  auto server =
      MetricsServer::start(*listen, metrics.registry(), exporter_index_html(CKPTSCOPE_VERSION));
  if (!server) {
    say(server.error().message);
    return 1;
  }
  say(fmt::format("serving http://{}/metrics (config: {}; run and attach register at {})",
                  listen->display(), config->source,
                  options.socket_path.empty() ? "nowhere: --socket ''" : options.socket_path));

  while (g_stop_signal.load() == 0) {
    (*collector)->pump(100);
    const auto& notes = (*collector)->notes();
    for (; notes_said < notes.size(); ++notes_said) say("note: " + notes[notes_said]);
  }
  (*collector)->finish();
  say(fmt::format("stopped by signal {}", g_stop_signal.load()));
  return 0;
}

}  // namespace ckpt::cli
