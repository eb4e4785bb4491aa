#include "sources/thread_io.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

namespace ckpt {

std::optional<ProcEvent::ThreadIo> parse_thread_io(const std::string& text) {
  ProcEvent::ThreadIo io;
  int found = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string_view key(line.data(), colon);
    std::string_view value(line);
    value.remove_prefix(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    uint64_t n = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size()) continue;
    if (key == "read_bytes") {
      io.read_bytes = n;
      found |= 1;
    } else if (key == "write_bytes") {
      io.write_bytes = n;
      found |= 2;
    } else if (key == "cancelled_write_bytes") {
      io.cancelled_write_bytes = n;
      found |= 4;
    }
  }
  if (found != 7) return std::nullopt;
  return io;
}

std::vector<ThreadIoReading> read_threads_io(uint32_t tgid, const std::string& proc_root) {
  std::vector<ThreadIoReading> out;
  std::error_code ec;
  const std::filesystem::path tasks = proc_root + "/" + std::to_string(tgid) + "/task";
  for (const auto& entry : std::filesystem::directory_iterator(tasks, ec)) {
    const std::string name = entry.path().filename().string();
    uint32_t tid = 0;
    auto [end, err] = std::from_chars(name.data(), name.data() + name.size(), tid);
    if (err != std::errc() || end != name.data() + name.size()) continue;
    std::ifstream file(entry.path() / "io");
    std::stringstream text;
    text << file.rdbuf();
    if (auto io = parse_thread_io(text.str())) out.push_back(ThreadIoReading{tid, *io});
  }
  return out;
}

}  // namespace ckpt
