#include "calibrate/maxima_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "files/output_file.h"
#include "json/json_io.h"

namespace ckpt {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// "YYYY-MM-DDTHH:MM:SSZ", each field in range.
bool is_iso8601_utc(const std::string& s) {
  if (s.size() != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
      s[16] != ':' || s[19] != 'Z')
    return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18})
    if (s[i] < '0' || s[i] > '9') return false;
  const int month = std::stoi(s.substr(5, 2)), day = std::stoi(s.substr(8, 2));
  const int hour = std::stoi(s.substr(11, 2)), minute = std::stoi(s.substr(14, 2));
  const int second = std::stoi(s.substr(17, 2));
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour <= 23 && minute <= 59 &&
         second <= 60;
}

// The field readers: each error names the entry's place and the key.
struct Fields {
  const json& j;
  std::string_view where;

  Error bad(std::string_view key, std::string_view what) const {
    return make_error(fmt::format("{}/{}: {}", where, key, what));
  }
  Expected<std::string> text(std::string_view key, bool required) const {
    auto it = j.find(key);
    if (it == j.end()) {
      if (required) return bad(key, "missing");
      return std::string();
    }
    if (!it->is_string()) return bad(key, fmt::format("must be a string (got {})", it->dump()));
    return it->get<std::string>();
  }
  Expected<double> rate(std::string_view key) const {
    auto it = j.find(key);
    if (it == j.end()) return bad(key, "missing");
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() <= 0)
      return bad(key,
                 fmt::format("must be a positive number of bytes per second (got {})", it->dump()));
    return it->get<double>();
  }
  Expected<double> seconds(std::string_view key) const {
    auto it = j.find(key);
    if (it == j.end()) return 0.0;
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0)
      return bad(key, fmt::format("must be a number of seconds, 0 or more (got {})", it->dump()));
    return it->get<double>();
  }
  Expected<uint64_t> count(std::string_view key) const {
    auto it = j.find(key);
    if (it == j.end()) return uint64_t{0};
    if (!it->is_number_unsigned())
      return bad(key, fmt::format("must be a whole number, 0 or more (got {})", it->dump()));
    return it->get<uint64_t>();
  }
  Expected<bool> flag(std::string_view key) const {
    auto it = j.find(key);
    if (it == j.end()) return false;
    if (!it->is_boolean())
      return bad(key, fmt::format("must be true or false (got {})", it->dump()));
    return it->get<bool>();
  }
};

std::string errno_text(int err) { return std::strerror(err); }

// Closes a descriptor when the scope ends (the lock goes with it).
}  // namespace

std::string StorageCalibration::max_source() const { return "calibrated " + date.substr(0, 10); }

json to_json(const StorageCalibration& c) {
  return {{"mount_point", c.mount_point},
          {"device", c.device},
          {"fs_type", c.fs_type},
          {"source", c.source},
          {"dir", c.dir},
          {"write_Bps", c.write_Bps},
          {"read_Bps", c.read_Bps},
          {"streams", c.streams},
          {"bytes", c.bytes},
          {"bytes_read", c.bytes_read},
          {"block_bytes", c.block_bytes},
          {"write_seconds", c.write_seconds},
          {"read_seconds", c.read_seconds},
          {"direct", c.direct},
          {"io", c.io},
          {"date", c.date},
          {"tool_version", c.tool_version}};
}

Expected<StorageCalibration> calibration_from_json(const json& j, std::string_view where) {
  if (!j.is_object()) return make_error(fmt::format("{}: must be an object", where));
  Fields f{j, where};
  StorageCalibration c;
  auto mount_point = f.text("mount_point", true);
  if (!mount_point) return mount_point.error();
  if (mount_point->empty() || mount_point->front() != '/')
    return f.bad("mount_point", fmt::format("must be an absolute path (got \"{}\")", *mount_point));
  c.mount_point = *mount_point;
  auto fs_type = f.text("fs_type", true);
  if (!fs_type) return fs_type.error();
  if (fs_type->empty()) return f.bad("fs_type", "must not be empty");
  c.fs_type = *fs_type;
  for (auto [key, out, required] : {std::tuple{"source", &c.source, true},
                                    {"device", &c.device, false},
                                    {"dir", &c.dir, false},
                                    {"io", &c.io, false},
                                    {"tool_version", &c.tool_version, false}}) {
    auto v = f.text(key, required);
    if (!v) return v.error();
    *out = *v;
  }
  auto date = f.text("date", true);
  if (!date) return date.error();
  if (!is_iso8601_utc(*date))
    return f.bad("date",
                 fmt::format("must be a UTC time like 2026-12-02T10:11:12Z (got \"{}\")", *date));
  c.date = *date;
  auto write = f.rate("write_Bps");
  if (!write) return write.error();
  auto read = f.rate("read_Bps");
  if (!read) return read.error();
  c.write_Bps = *write;
  c.read_Bps = *read;
  for (auto [key, out] : {std::pair{"bytes", &c.bytes},
                          {"bytes_read", &c.bytes_read},
                          {"block_bytes", &c.block_bytes}}) {
    auto v = f.count(key);
    if (!v) return v.error();
    *out = *v;
  }
  auto streams = f.count("streams");
  if (!streams) return streams.error();
  if (*streams > 1'000'000) return f.bad("streams", "must be at most 1000000");
  c.streams = static_cast<unsigned>(*streams);
  for (auto [key, out] :
       {std::pair{"write_seconds", &c.write_seconds}, {"read_seconds", &c.read_seconds}}) {
    auto v = f.seconds(key);
    if (!v) return v.error();
    *out = *v;
  }
  auto direct = f.flag("direct");
  if (!direct) return direct.error();
  c.direct = *direct;
  return c;
}

double MemoryCalibration::ceiling_Bps(size_t stage_threads) const {
  const double each = one_thread_Bps * static_cast<double>(std::max<size_t>(1, stage_threads));
  return std::min(each, std::max(one_thread_Bps, all_threads_Bps));
}

std::string MemoryCalibration::max_source(size_t stage_threads) const {
  const size_t n = std::max<size_t>(1, stage_threads);
  return fmt::format("calibrated {} (memory copy, {} thread{})", date.substr(0, 10), n,
                     n == 1 ? "" : "s");
}

std::optional<double> MemoryCalibration::page_cache_ceiling_Bps(bool write,
                                                                size_t stage_threads) const {
  const auto& one = write ? page_cache_write_Bps : page_cache_read_Bps;
  if (!one || one_thread_Bps <= 0) return std::nullopt;
  const double n = static_cast<double>(std::max<size_t>(1, stage_threads));
  const double together = std::max(1.0, all_threads_Bps / one_thread_Bps) * *one;
  return std::min(*one * n, together);
}

std::string MemoryCalibration::page_cache_source(bool write, size_t stage_threads) const {
  const size_t n = std::max<size_t>(1, stage_threads);
  return fmt::format("calibrated {} (page-cache {}, {} thread{})", date.substr(0, 10),
                     write ? "write" : "read", n, n == 1 ? "" : "s");
}

json to_json(const MemoryCalibration& m) {
  json j = {{"one_thread_Bps", m.one_thread_Bps},
            {"all_threads_Bps", m.all_threads_Bps},
            {"threads", m.threads},
            {"bytes", m.bytes},
            {"rounds", m.rounds},
            {"date", m.date},
            {"tool_version", m.tool_version}};
  if (m.page_cache_write_Bps) j["page_cache_write_Bps"] = *m.page_cache_write_Bps;
  if (m.page_cache_read_Bps) j["page_cache_read_Bps"] = *m.page_cache_read_Bps;
  return j;
}

Expected<MemoryCalibration> memory_calibration_from_json(const json& j, std::string_view where) {
  if (!j.is_object()) return make_error(fmt::format("{}: must be an object", where));
  Fields f{j, where};
  MemoryCalibration m;
  auto one = f.rate("one_thread_Bps");
  if (!one) return one.error();
  auto all = f.rate("all_threads_Bps");
  if (!all) return all.error();
  m.one_thread_Bps = *one;
  m.all_threads_Bps = *all;
  // Files calibrated before the page-cache figures lack them.
  for (auto [key, out] : {std::pair{"page_cache_write_Bps", &m.page_cache_write_Bps},
                          {"page_cache_read_Bps", &m.page_cache_read_Bps}}) {
    if (!j.contains(key)) continue;
    auto v = f.rate(key);
    if (!v) return v.error();
    *out = *v;
  }
  for (auto [key, out] : {std::pair{"threads", &m.threads}, {"rounds", &m.rounds}}) {
    auto v = f.count(key);
    if (!v) return v.error();
    if (*v == 0 || *v > 1'000'000) return f.bad(key, "must be a whole number from 1 to 1000000");
    *out = static_cast<unsigned>(*v);
  }
  auto bytes = f.count("bytes");
  if (!bytes) return bytes.error();
  m.bytes = *bytes;
  auto date = f.text("date", true);
  if (!date) return date.error();
  if (!is_iso8601_utc(*date))
    return f.bad("date",
                 fmt::format("must be a UTC time like 2026-12-02T10:11:12Z (got \"{}\")", *date));
  m.date = *date;
  auto version = f.text("tool_version", false);
  if (!version) return version.error();
  m.tool_version = *version;
  return m;
}

Expected<MaximaFile> parse_maxima_file(std::string_view text, std::string_view origin) {
  auto doc = parse_json(text, origin);
  if (!doc) return doc.error();
  if (!doc->is_object())
    return make_error(fmt::format("{}: not a maxima file (not an object)", origin));
  auto version = doc->find("version");
  if (version == doc->end() || !version->is_number_integer())
    return make_error(fmt::format("{}: /version: missing or not a whole number", origin));
  if (version->get<int64_t>() != kMaximaFileVersion)
    return make_error(fmt::format("{}: /version: {} (this ckptscope reads version {})", origin,
                                  version->dump(), kMaximaFileVersion));
  auto mounts = doc->find("mounts");
  if (mounts == doc->end() || !mounts->is_array())
    return make_error(fmt::format("{}: /mounts: missing or not a list", origin));
  MaximaFile out;
  for (size_t i = 0; i < mounts->size(); ++i) {
    const std::string where = fmt::format("/mounts/{}", i);
    auto c = calibration_from_json((*mounts)[i], where);
    if (!c) {
      out.skipped.push_back(fmt::format("{}: {} (entry ignored)", origin, c.error().message));
      out.unread_mounts.push_back(dump_json((*mounts)[i]));
      continue;
    }
    out.mounts.push_back(std::move(*c));
  }
  if (auto memory = doc->find("memory"); memory != doc->end()) {
    auto m = memory_calibration_from_json(*memory, "/memory");
    if (m) {
      out.memory = std::move(*m);
    } else {
      out.skipped.push_back(fmt::format("{}: {} (entry ignored)", origin, m.error().message));
      out.unread_memory = dump_json(*memory);
    }
  }
  return out;
}

std::string maxima_file_text(const std::vector<StorageCalibration>& mounts,
                             const std::optional<MemoryCalibration>& memory) {
  MaximaFile f;
  f.mounts = mounts;
  f.memory = memory;
  return maxima_file_text_of(f);
}

std::string maxima_file_text_of(const MaximaFile& file) {
  json list = json::array();
  for (const auto& m : file.mounts) list.push_back(to_json(m));
  // Text this file's own parse wrote: it reads back (dump_json of a value).
  for (const auto& text : file.unread_mounts)
    if (auto j = parse_json(text, "an unread entry")) list.push_back(std::move(*j));
  json doc{{"version", kMaximaFileVersion}, {"mounts", list}};
  if (file.memory) {
    doc["memory"] = to_json(*file.memory);
  } else if (!file.unread_memory.empty()) {
    if (auto j = parse_json(file.unread_memory, "an unread entry")) doc["memory"] = std::move(*j);
  }
  return dump_json(doc, 2) + "\n";
}

Expected<std::optional<MaximaFile>> load_maxima_file(const std::string& path) {
  UniqueFd in{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (!in.valid()) {
    if (errno == ENOENT) return std::optional<MaximaFile>();
    return make_error(fmt::format("{}: cannot read: {}", path, errno_text(errno)));
  }
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = read(in.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(fmt::format("{}: cannot read: {}", path, errno_text(errno)));
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    // A maxima file is a few hundred bytes a mount: anything this big is not one.
    if (text.size() > (16u << 20))
      return make_error(fmt::format("{}: not a maxima file (over 16 MiB)", path));
  }
  auto parsed = parse_maxima_file(text, path);
  if (!parsed) return parsed.error();
  return std::optional<MaximaFile>(std::move(*parsed));
}

namespace {

// Reads the file at `path` under its lock, lets `change` edit what it holds,
// and puts the result in its place (a temporary file renamed over it).
template <typename Change>
Expected<void> update_maxima_file(const std::string& path, Change&& change) {
  const fs::path file(path);
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  // The lock is a file of its own beside it: the file itself is replaced by
  // rename, and a lock on a replaced file locks nothing.
  const std::string lock_path = path + ".lock";
  auto lock = open_output_file(lock_path, "maxima lock", OutputMode::kAppend);
  if (!lock) return lock.error();
  if (flock(lock->get(), LOCK_EX) != 0)
    return make_error(fmt::format("{}: lock: {}", lock_path, errno_text(errno)));
  auto existing = load_maxima_file(path);
  if (!existing)
    return make_error(existing.error().message +
                      "; not replaced (fix or remove it, then calibrate again)");
  MaximaFile file_now;
  if (*existing) file_now = std::move(**existing);
  change(file_now);
  // Whole or not at all, through a temporary no one can plant, and only
  // over a regular file (files/output_file.h).
  return replace_file_contents(path, maxima_file_text_of(file_now), "maxima file");
}

}  // namespace

Expected<void> save_calibration(const std::string& path, const StorageCalibration& c) {
  return update_maxima_file(path, [&c](MaximaFile& f) {
    std::erase_if(f.mounts, [&](const StorageCalibration& m) { return m.same_mount(c); });
    f.mounts.push_back(c);
    std::sort(f.mounts.begin(), f.mounts.end(), [](const auto& a, const auto& b) {
      return std::tie(a.mount_point, a.source, a.fs_type) <
             std::tie(b.mount_point, b.source, b.fs_type);
    });
  });
}

Expected<void> save_calibration(const std::string& path, const MemoryCalibration& m) {
  return update_maxima_file(path, [&m](MaximaFile& f) { f.memory = m; });
}

MaximaFileInputs maxima_file_inputs() {
  MaximaFileInputs in;
  in.root = geteuid() == 0;
  if (const char* p = std::getenv("CKPTSCOPE_MAXIMA_FILE")) in.override_path = p;
  if (const char* x = std::getenv("XDG_STATE_HOME")) in.xdg_state_home = x;
  if (const char* h = std::getenv("HOME")) in.home = h;
  return in;
}

namespace {
std::string user_state_file(const MaximaFileInputs& in) {
  // XDG base directory rules: a relative XDG_STATE_HOME is ignored.
  if (!in.xdg_state_home.empty() && in.xdg_state_home.front() == '/')
    return (fs::path(in.xdg_state_home) / "ckptscope/maxima.json").string();
  if (!in.home.empty()) return (fs::path(in.home) / ".local/state/ckptscope/maxima.json").string();
  return {};
}
}  // namespace

Expected<std::string> maxima_file_for_writing(const MaximaFileInputs& in) {
  if (!in.override_path.empty()) return in.override_path;
  if (in.root) return std::string(kNodeMaximaFile);
  std::string user = user_state_file(in);
  if (user.empty())
    return make_error(
        "no state directory for the maxima file: XDG_STATE_HOME and HOME are unset (set "
        "CKPTSCOPE_MAXIMA_FILE)");
  return user;
}

Expected<std::string> maxima_file_to_save_in(const std::string& given) {
  std::string file = given;
  if (file.empty()) {
    auto where = maxima_file_for_writing(maxima_file_inputs());
    if (!where) return where.error();
    file = *where;
  }
  if (auto existing = load_maxima_file(file); !existing)
    return make_error(existing.error().message + "; fix or remove it, then calibrate again");
  return file;
}

std::vector<std::string> maxima_files_for_reading(const MaximaFileInputs& in) {
  if (!in.override_path.empty()) return {in.override_path};
  std::vector<std::string> out;
  if (!in.root)
    if (std::string user = user_state_file(in); !user.empty()) out.push_back(user);
  out.emplace_back(kNodeMaximaFile);
  return out;
}

std::string iso8601_utc(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace ckpt
