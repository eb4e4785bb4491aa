#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/summary.h"
#include "apps/cli/commands.h"
#include "exporters/sqlite/trace_store.h"
#include "json/json_io.h"

namespace ckpt::cli {

int summary_command(const std::string& trace_path, bool json) {
  auto trace = read_trace(trace_path);
  if (!trace) {
    warn(trace.error().message);
    return 1;
  }
  if (json)
    fmt::print("{}\n", dump_json(summary_json(*trace), 2));
  else
    fmt::print("{}", summary_table(*trace));
  return 0;
}

}  // namespace ckpt::cli
