// `ckptscope calibrate --storage DIR`: the host_io stage's maxima measured on
// the mount under DIR (userspace/calibrate/storage_bench.h) and kept for the
// mount in the node's maxima file, with what the config and the machine
// would otherwise have said beside them (docs/calibrate.md).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>
#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/format.h"
#include "apps/cli/commands.h"
#include "calibrate/calibrated_maxima.h"
#include "calibrate/maxima_file.h"
#include "calibrate/mounts.h"
#include "calibrate/storage_bench.h"
#include "stitch/maxima.h"

namespace ckpt::cli {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

void on_calibrate_signal(int sig) {
  g_signal = sig;
  g_stop = true;
}

// SIGINT, SIGTERM and SIGHUP stop the measurement (its files are removed)
// instead of killing the process, for as long as this lives.
class StopOnSignals {
 public:
  StopOnSignals() {
    g_stop = false;
    g_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_calibrate_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~StopOnSignals() {
    for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<struct sigaction, 3> old_{};
};

// The local address this host reaches `server` from (an NFS mount's addr=):
// a UDP socket connected there sends nothing, and getsockname says the source
// the routing table picked. "" when the address is not one.
std::string local_address_towards(const std::string& server) {
  sockaddr_storage ss{};
  socklen_t len = 0;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (inet_pton(AF_INET, server.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(2049);
    len = sizeof(*v4);
  } else if (inet_pton(AF_INET6, server.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(2049);
    len = sizeof(*v6);
  } else {
    return {};
  }
  int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return {};
  std::string out;
  sockaddr_storage local{};
  socklen_t local_len = sizeof(local);
  if (connect(fd, reinterpret_cast<sockaddr*>(&ss), len) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) == 0) {
    char buf[INET6_ADDRSTRLEN] = {};
    const void* a =
        local.ss_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr);
    if (inet_ntop(local.ss_family, a, buf, sizeof(buf)))
      out = local.ss_family == AF_INET6 ? fmt::format("[{}]:0", buf) : fmt::format("{}:0", buf);
  }
  close(fd);
  return out;
}

nlohmann::json stage_max_json(const StageMax& m) {
  return {{"Bps", m.Bps ? nlohmann::json(*m.Bps) : nlohmann::json(nullptr)}, {"source", m.source}};
}

std::string stage_max_text(const StageMax& m) {
  return m.Bps ? fmt::format("{} ({})", format_bandwidth(*m.Bps), m.source) : "unknown";
}

// What the stages' maxima would be without this calibration: the config's
// storage figures, the machine's own (the block device's PCIe link), and on
// NFS the NIC the mount's traffic leaves by, since a mount is bounded by both
// the servers and the link to them.
nlohmann::json beside(const Config& config, const MountEntry& mount, uint64_t dev,
                      std::vector<std::string>& lines) {
  nlohmann::json out;
  const auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  out["config"] = {{"source", config.source},
                   {"write_Bps", opt(config.maxima.storage_write_Bps)},
                   {"read_Bps", opt(config.maxima.storage_read_Bps)}};
  lines.push_back(fmt::format(
      "config ({}): storage.write_bandwidth {}, storage.read_bandwidth {}", config.source,
      config.maxima.storage_write_Bps ? format_bandwidth(*config.maxima.storage_write_Bps) : "-",
      config.maxima.storage_read_Bps ? format_bandwidth(*config.maxima.storage_read_Bps) : "-"));
  if (config.maxima.storage_write_Bps || config.maxima.storage_read_Bps)
    lines.push_back(
        "the config's storage maxima win over this calibration in jobs traced with that config");
  SystemMaxima machine(ConfiguredMaxima{});
  const StageMax link = machine.storage(Direction::Save, {FileId{dev, 1}});
  out["sysfs"] = stage_max_json(link);
  lines.push_back("sysfs (the block device's link): " + stage_max_text(link));
  if (mount.is_nfs()) {
    const std::string server = mount.super_option("addr");
    const std::string local = local_address_towards(server);
    const StageMax nic = local.empty() ? StageMax{} : machine.transport(local);
    out["nic"] = stage_max_json(nic);
    out["nic"]["server"] = server;
    out["nic"]["local_address"] = local;
    lines.push_back(fmt::format("NIC towards the server {}: {}", server.empty() ? "?" : server,
                                stage_max_text(nic)));
  }
  return out;
}

}  // namespace

Expected<StorageCalibration> calibrate_storage(const CalibrateStorageOptions& o,
                                               nlohmann::json* report) {
  auto table = read_mountinfo();
  if (!table) return table.error();
  auto mount = mount_of_path(*table, o.dir);
  if (!mount) return mount.error();
  struct stat st {};
  if (stat(o.dir.c_str(), &st) != 0)
    return make_error(fmt::format("{}: {}", o.dir, std::strerror(errno)));
  auto where = maxima_file_to_save_in(o.maxima_file);
  if (!where) return where.error();
  const std::string& file = *where;
  Config config = Config::defaults();
  if (!o.config_path.empty()) {
    auto loaded = load_config(o.config_path);
    if (!loaded) return loaded.error();
    config = *loaded;
  }

  fmt::print(stderr,
             "calibrate: {} is on {} ({} {}, device {}): writing then reading {} in {} "
             "streams of {} blocks, at most {:g} s\n",
             o.dir, mount->mount_point, mount->fs_type, mount->source, device_text(st.st_dev),
             format_bytes(o.bytes), o.streams, format_bytes(o.block_bytes), o.seconds);
  StorageBenchOptions bench;
  bench.dir = o.dir;
  bench.bytes = o.bytes;
  bench.seconds = o.seconds;
  bench.streams = o.streams;
  bench.block_bytes = o.block_bytes;
  bench.stop = &g_stop;
  Expected<StorageBenchResult> r = make_error("not run");
  {
    StopOnSignals stop;
    r = measure_storage(bench);
  }
  if (g_stop)
    return make_error(fmt::format("stopped by signal {}; its files are removed", g_signal.load()));
  if (!r) return r.error();  // it names the directory or the file

  StorageCalibration c;
  c.mount_point = mount->mount_point;
  c.device = device_text(st.st_dev);
  c.fs_type = mount->fs_type;
  c.source = mount->source;
  c.dir = o.dir;
  c.write_Bps = r->write_Bps;
  c.read_Bps = r->read_Bps;
  c.streams = r->streams;
  c.bytes = r->bytes_written;
  c.bytes_read = r->bytes_read;
  c.block_bytes = r->block_bytes;
  c.write_seconds = r->write_seconds;
  c.read_seconds = r->read_seconds;
  c.direct = r->direct;
  c.io = r->io;
  c.date = iso8601_utc(std::time(nullptr));
  c.tool_version = CKPTSCOPE_VERSION;

  fmt::print(stderr, "  write {} ({} in {:.2f} s), read {} ({} in {:.2f} s), {}\n",
             format_bandwidth(c.write_Bps), format_bytes(c.bytes), c.write_seconds,
             format_bandwidth(c.read_Bps), format_bytes(c.bytes_read), c.read_seconds, c.io);
  for (const auto& n : r->notes) fmt::print(stderr, "  note: {}\n", n);

  std::vector<std::string> lines;
  nlohmann::json others = beside(config, *mount, st.st_dev, lines);
  for (const auto& l : lines) fmt::print(stderr, "  beside: {}\n", l);

  auto saved = save_calibration(file, c);
  if (!saved) return make_error("not saved: " + saved.error().message);
  fmt::print(stderr, "calibrate: saved for {} in {} (max_source \"{}\")\n", c.mount_point, file,
             c.max_source());
  if (report)
    *report = {{"storage", to_json(c)},
               {"maxima_file", file},
               {"max_source", c.max_source()},
               {"notes", r->notes},
               {"beside", others}};
  return c;
}

int calibrate_storage_command(const CalibrateStorageOptions& options) {
  nlohmann::json report;
  auto c = calibrate_storage(options, &report);
  if (!c) {
    warn("calibrate: " + c.error().message);
    return g_stop ? 128 + g_signal.load() : 1;
  }
  return emit_calibration_result(report, options.out_path);
}

}  // namespace ckpt::cli
