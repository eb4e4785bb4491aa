#include "apps/cli/report_io.h"

#include <fcntl.h>
#include <unistd.h>

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

Expected<void> write_output_pieces(const std::string& path,
                                   const std::function<void(const report::TextSink&)>& render) {
  constexpr size_t kFlushBytes = 1u << 20;
  const bool to_stdout = path.empty() || path == "-";
  std::optional<ReplacementFile> file;
  UniqueFd fd;
  if (to_stdout) {
    std::fflush(stdout);
  } else {
    auto created = ReplacementFile::create(path, "-o");
    if (!created) return created.error();
    file.emplace(std::move(*created));
    fd = UniqueFd(::open(file->temp_path().c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd.valid())
      return make_error(fmt::format("-o {}: cannot write: {}", path, std::strerror(errno)));
  }
  const int out = to_stdout ? STDOUT_FILENO : fd.get();
  const std::string shown = to_stdout ? "standard output" : path;
  std::string buffer;
  Expected<void> written;
  auto flush = [&]() {
    if (written && !buffer.empty()) written = write_all(out, buffer, shown);
    buffer.clear();
  };
  render([&](std::string_view piece) {
    if (!written) return;  // the first error stands; the rest is not written
    buffer += piece;
    if (buffer.size() >= kFlushBytes) flush();
  });
  flush();
  if (!written) return written;
  if (to_stdout) return {};
  if (::fsync(fd.get()) != 0)
    return make_error(fmt::format("-o {}: cannot write: {}", path, std::strerror(errno)));
  return file->commit();
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
