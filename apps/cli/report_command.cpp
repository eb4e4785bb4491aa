#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "analysis/report/report.h"
#include "apps/cli/commands.h"
#include "config/config.h"
#include "exporters/sqlite/trace_store.h"
#include "json/json_io.h"

namespace ckpt::cli {
namespace {

std::string format_from_path(const std::string& path) {
  auto ext = std::filesystem::path(path).extension().string();
  if (ext == ".md" || ext == ".markdown") return "md";
  if (ext == ".json") return "json";
  return "html";
}

// The whole file or nothing: written beside the target and renamed over it,
// so a failed report never leaves half a page where the last one was.
bool write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace

int report_command(const ReportCommandOptions& options) {
  const bool to_stdout = options.out_path.empty() || options.out_path == "-";
  std::string format = options.format.empty()
                           ? (to_stdout ? "html" : format_from_path(options.out_path))
                           : options.format;
  if (format == "markdown") format = "md";
  if (format != "html" && format != "md" && format != "json") {
    warn(fmt::format("report: unknown --format '{}' (known: html, md, json)", options.format));
    return 2;
  }
  report::ReportOptions ro;
  auto bandwidth = [](const std::string& flag, const std::string& text,
                      std::optional<double>& out) {
    if (text.empty()) return true;
    auto v = parse_bandwidth(text);
    if (!v) {
      warn(fmt::format("report: {} {}", flag, v.error().message));
      return false;
    }
    out = *v;
    return true;
  };
  if (!bandwidth("--storage-read-max", options.storage_read_max, ro.storage_read_max_Bps) ||
      !bandwidth("--storage-write-max", options.storage_write_max, ro.storage_write_max_Bps))
    return 2;

  std::vector<report::NodeTrace> traces;
  for (const auto& path : options.traces) {
    auto trace = read_trace(path);
    if (!trace) {
      warn(trace.error().message);
      return 1;
    }
    traces.push_back({path, std::move(*trace)});
  }
  auto built = report::build_report(std::move(traces), ro);
  if (!built) {
    warn(built.error().message);
    return 1;
  }
  std::string text;
  if (format == "json")
    text = dump_json(report::report_json(*built), 2) + "\n";
  else if (format == "md")
    text = report::report_markdown(*built);
  else
    text = report::report_html(*built);
  if (to_stdout) {
    fmt::print("{}", text);
    return 0;
  }
  if (!write_atomically(options.out_path, text)) {
    warn(fmt::format("report: cannot write {}: {}", options.out_path, std::strerror(errno)));
    return 1;
  }
  return 0;
}

}  // namespace ckpt::cli
