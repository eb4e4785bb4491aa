#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "apps/cli/commands.h"
#include "exporters/perfetto/perfetto_export.h"
#include "exporters/sqlite/trace_store.h"
#include "files/output_file.h"
#include "json/json_io.h"

namespace ckpt::cli {

int export_command(const std::string& trace_path, const std::string& format,
                   const std::string& out_path) {
  if (format != "perfetto") {
    warn(fmt::format("export: unknown --format '{}' (known: perfetto)", format));
    return 2;
  }
  auto trace = read_trace(trace_path);
  if (!trace) {
    warn(trace.error().message);
    return 1;
  }
  nlohmann::json out = perfetto_trace(*trace);
  // Checked before it is written: a file the UI rejects is worse than none.
  if (auto problems = validate_trace_events(out); !problems.empty()) {
    warn(fmt::format("export: internal error, the trace events are invalid: {}", problems.front()));
    return 1;
  }
  // Whole or not at all, and only over a regular file (files/output_file.h).
  if (auto written = replace_file_contents(out_path, dump_json(out) + "\n", "-o"); !written) {
    warn("export: " + written.error().message);
    return 1;
  }
  return 0;
}

}  // namespace ckpt::cli
