// `ckptscope calibrate --memory`: the serialize stage's ceiling, the node's
// memory-copy bandwidth (userspace/calibrate/memory_bench.h), kept in the
// node's maxima file beside the mounts' (docs/calibrate.md). Nothing is left
// to clean up if it is killed: its buffers are memory, its result is saved
// only once measured.
#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/format.h"
#include "apps/cli/commands.h"
#include "calibrate/maxima_file.h"
#include "calibrate/memory_bench.h"

namespace ckpt::cli {

Expected<MemoryCalibration> calibrate_memory(const CalibrateMemoryOptions& o,
                                             nlohmann::json* report) {
  auto where = maxima_file_to_save_in(o.maxima_file);
  if (!where) return where.error();
  const std::string& file = *where;

  MemoryBenchOptions bench;
  bench.bytes = o.bytes;
  bench.rounds = o.rounds;
  bench.threads = o.threads;
  fmt::print(stderr, "calibrate: copying {} in memory, {} rounds, {} then one thread\n",
             format_bytes(o.bytes), o.rounds,
             o.threads ? fmt::format("{} threads", o.threads) : std::string("every CPU"));
  auto r = measure_memory_copy(bench);
  if (!r) return r.error();

  MemoryCalibration m;
  m.one_thread_Bps = r->one_thread_Bps;
  m.all_threads_Bps = r->all_threads_Bps;
  m.page_cache_write_Bps = r->page_cache_write_Bps;
  m.page_cache_read_Bps = r->page_cache_read_Bps;
  m.threads = r->threads;
  m.bytes = r->bytes;
  m.rounds = r->rounds;
  m.date = iso8601_utc(std::time(nullptr));
  m.tool_version = CKPTSCOPE_VERSION;
  fmt::print(stderr, "  one thread {}, {} threads {} (best of {} rounds each)\n",
             format_bandwidth(m.one_thread_Bps), m.threads, format_bandwidth(m.all_threads_Bps),
             m.rounds);
  fmt::print(stderr, "  page cache, one thread in 1 MiB calls: write {}, read {}\n",
             format_bandwidth(*m.page_cache_write_Bps), format_bandwidth(*m.page_cache_read_Bps));

  auto saved = save_calibration(file, m);
  if (!saved) return make_error("not saved: " + saved.error().message);
  fmt::print(stderr, "calibrate: saved the memory copy in {} (max_source \"{}\")\n", file,
             m.max_source(1));
  if (report)
    *report = {{"memory", to_json(m)},
               {"maxima_file", file},
               {"rounds",
                {{"one_thread_Bps", r->one_thread_rounds},
                 {"all_threads_Bps", r->all_threads_rounds},
                 {"page_cache_write_Bps", r->page_cache_write_rounds},
                 {"page_cache_read_Bps", r->page_cache_read_rounds}}}};
  return m;
}

int calibrate_memory_command(const CalibrateMemoryOptions& options) {
  nlohmann::json report;
  auto m = calibrate_memory(options, &report);
  if (!m) {
    warn("calibrate: " + m.error().message);
    return 1;
  }
  return emit_calibration_result(report, options.out_path);
}

}  // namespace ckpt::cli
