#include "apps/cli/report_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "config/config.h"
#include "exporters/sqlite/trace_store.h"
#include "files/output_file.h"

namespace ckpt::cli {

Expected<std::vector<report::NodeTrace>> read_node_traces(const std::vector<std::string>& paths) {
  std::vector<report::NodeTrace> traces;
  for (const auto& path : paths) {
    auto trace = read_trace(path);
    if (!trace) return trace.error();
    traces.push_back({path, std::move(*trace)});
  }
  return traces;
}

Expected<std::optional<double>> bandwidth_flag(const std::string& command, const std::string& flag,
                                               const std::string& text) {
  if (text.empty()) return std::optional<double>{};
  auto v = parse_bandwidth(text);
  if (!v) return make_error(fmt::format("{}: {} {}", command, flag, v.error().message));
  return std::optional<double>{*v};
}

std::string format_from_path(const std::string& path, const std::string& otherwise) {
  auto ext = std::filesystem::path(path).extension().string();
  if (ext == ".md" || ext == ".markdown") return "md";
  if (ext == ".json") return "json";
  if (ext == ".html" || ext == ".htm") return "html";
  return otherwise;
}

Expected<void> write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    fmt::print("{}", text);
    std::fflush(stdout);
    return {};
  }
  // Whole or not at all, and only over a regular file (files/output_file.h).
  return replace_file_contents(path, text, "-o");
}

}  // namespace ckpt::cli
