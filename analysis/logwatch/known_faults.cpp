#include "analysis/logwatch/known_faults.h"

#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <re2/re2.h>
#include <re2/set.h>
#include <nlohmann/json.hpp>

#include "json/json_io.h"
#include "model/vocabulary.h"

namespace ckpt::logwatch {

struct KnownFaults::PatternSet {
  PatternSet() : set(RE2::Options(), RE2::UNANCHORED) {}
  RE2::Set set;
  std::vector<size_t> entry_of;  // the entry each pattern of the set belongs to
};

namespace {

using nlohmann::json;

std::optional<KernelFaultKind> kernel_log_kind(std::string_view name) {
  if (name == "gpu_xid") return KernelFaultKind::GpuXid;
  if (name == "nfs_server_not_responding") return KernelFaultKind::NfsServerNotResponding;
  if (name == "oom_kill") return KernelFaultKind::OomKill;
  return std::nullopt;
}

Expected<std::string> string_field(const json& item, const char* key, const std::string& where) {
  if (!item.contains(key) || !item[key].is_string() || item[key].get<std::string>().empty())
    return make_error(fmt::format("{}: \"{}\" must be a non-empty string", where, key));
  return item[key].get<std::string>();
}

Expected<KnownFault> read_entry(const json& item, const std::string& where) {
  if (!item.is_object()) return make_error(where + ": must be a JSON object");
  static const std::set<std::string> kKeys = {"id",         "kind",         "severity", "doc",
                                              "kernel_log", "xid_category", "match"};
  for (const auto& [key, value] : item.items())
    if (!kKeys.contains(key))
      return make_error(fmt::format("{}: unknown key \"{}\"", where, key.substr(0, 64)));
  KnownFault f;
  auto id = string_field(item, "id", where);
  if (!id) return id.error();
  f.id = *id;
  const std::string named = fmt::format("{} \"{}\"", where, f.id);
  auto kind = string_field(item, "kind", named);
  if (!kind) return kind.error();
  if (!is_node_log_fault_kind(*kind))
    return make_error(fmt::format("{}: kind \"{}\" is not a node-log fault kind (one of {})", named,
                                  kind->substr(0, 64), fmt::join(kNodeLogFaultKinds, ", ")));
  f.kind = *kind;
  auto severity = string_field(item, "severity", named);
  if (!severity) return severity.error();
  auto level = parse_severity(*severity);
  if (!level)
    return make_error(fmt::format("{}: severity \"{}\" is not a syslog level (emerg .. debug)",
                                  named, severity->substr(0, 64)));
  f.severity = *level;
  auto doc = string_field(item, "doc", named);
  if (!doc) return doc.error();
  f.doc = *doc;
  const bool by_parser = item.contains("kernel_log");
  const bool by_patterns = item.contains("match");
  if (by_parser == by_patterns)
    return make_error(
        fmt::format("{}: give either \"kernel_log\" (the kernel-log watcher's parser) or "
                    "\"match\" (RE2 patterns), not {}",
                    named, by_parser ? "both" : "neither"));
  if (by_parser) {
    auto parser = string_field(item, "kernel_log", named);
    if (!parser) return parser.error();
    f.kernel_log = kernel_log_kind(*parser);
    if (!f.kernel_log)
      return make_error(fmt::format(
          "{}: kernel_log \"{}\" is not one of gpu_xid, nfs_server_not_responding, oom_kill", named,
          parser->substr(0, 64)));
    if (*f.kernel_log == KernelFaultKind::GpuXid) {
      auto category = string_field(item, "xid_category", named);
      if (!category) return category.error();
      const XidCategoryEntry* entry = find_xid_category(*category);
      if (entry == nullptr)
        return make_error(fmt::format(
            "{}: xid_category \"{}\" is not one of gpu_lost, ecc_error, nvlink_error, gpu_xid",
            named, category->substr(0, 64)));
      f.xid_category = entry->category;
    } else if (item.contains("xid_category")) {
      return make_error(named + ": \"xid_category\" goes with kernel_log gpu_xid only");
    }
    return f;
  }
  if (item.contains("xid_category"))
    return make_error(named + ": \"xid_category\" goes with kernel_log gpu_xid only");
  const json& match = item["match"];
  if (!match.is_array() || match.empty())
    return make_error(named + ": \"match\" must be a non-empty list of RE2 patterns");
  for (const auto& p : match) {
    if (!p.is_string() || p.get<std::string>().empty())
      return make_error(named + ": every \"match\" entry must be a non-empty string");
    RE2 compiled(p.get<std::string>(), RE2::Quiet);
    if (!compiled.ok())
      return make_error(fmt::format("{}: pattern \"{}\" does not compile: {}", named,
                                    p.get<std::string>().substr(0, 120), compiled.error()));
    f.patterns.push_back(p.get<std::string>());
  }
  return f;
}

// The message as the kernel printed it: syslog and the journal put
// `kernel:` before the kernel's lines, and old syslog setups the kernel's
// `[seconds]` stamp after it.
std::string_view kernel_text(std::string_view message) {
  auto skip_spaces = [&] {
    while (!message.empty() && message.front() == ' ') message.remove_prefix(1);
  };
  skip_spaces();
  if (message.starts_with("kernel:")) {
    message.remove_prefix(7);
    skip_spaces();
  }
  if (message.starts_with('[')) {
    const size_t close = message.find(']');
    if (close != std::string_view::npos &&
        message.substr(1, close - 1).find_first_not_of(" 0123456789.") == std::string_view::npos) {
      message.remove_prefix(close + 1);
      skip_spaces();
    }
  }
  return message;
}

bool matches_kernel_fault(const KnownFault& f, const std::optional<KernelFault>& fault) {
  if (!fault) return false;
  switch (*f.kernel_log) {
    case KernelFaultKind::GpuXid:
      return fault->kind == KernelFaultKind::GpuXid && fault->category == f.xid_category;
    case KernelFaultKind::OomKill:
      return fault->kind == KernelFaultKind::OomKill || fault->kind == KernelFaultKind::OomSummary;
    default:
      return fault->kind == *f.kernel_log;
  }
}

}  // namespace

KnownFaults::KnownFaults() : set_(std::make_unique<PatternSet>()) {}
KnownFaults::KnownFaults(KnownFaults&&) noexcept = default;
KnownFaults& KnownFaults::operator=(KnownFaults&&) noexcept = default;
KnownFaults::~KnownFaults() = default;

Expected<KnownFaults> KnownFaults::parse(std::string_view json_text, const std::string& origin) {
  auto doc = parse_json(json_text, origin);
  if (!doc) return doc.error();
  if (!doc->is_object()) return make_error(origin + ": must be a JSON object");
  for (const auto& [key, value] : doc->items())
    if (key != "version" && key != "about" && key != "faults")
      return make_error(fmt::format("{}: unknown key \"{}\"", origin, key.substr(0, 64)));
  if (!doc->contains("version") || (*doc)["version"] != 1)
    return make_error(origin + ": \"version\" must be 1");
  const json& faults = (*doc)["faults"];
  if (!faults.is_array() || faults.empty())
    return make_error(origin + ": \"faults\" must be a non-empty list");
  KnownFaults out;
  std::set<std::string> ids;
  for (size_t i = 0; i < faults.size(); ++i) {
    auto entry = read_entry(faults[i], fmt::format("{}: fault {}", origin, i));
    if (!entry) return entry.error();
    if (!ids.insert(entry->id).second)
      return make_error(fmt::format("{}: fault id \"{}\" is used twice", origin, entry->id));
    for (const std::string& p : entry->patterns) {
      std::string error;
      if (out.set_->set.Add(p, &error) < 0)
        return make_error(fmt::format("{}: fault \"{}\": {}", origin, entry->id, error));
      out.set_->entry_of.push_back(out.entries_.size());
    }
    out.entries_.push_back(std::move(*entry));
  }
  if (!out.set_->entry_of.empty() && !out.set_->set.Compile())
    return make_error(origin + ": the patterns do not compile together (RE2 out of memory)");
  return out;
}

const KnownFaults& KnownFaults::builtin() {
  static const KnownFaults faults = [] {
    auto parsed = parse(builtin_known_faults_json(), "built-in known_faults.json");
    // The built-in catalogue is checked by the tests; a build that broke it
    // must not run with no known faults at all.
    if (!parsed) {
      fmt::print(stderr, "ckptscope: {}\n", parsed.error().message);
      std::abort();
    }
    return std::move(*parsed);
  }();
  return faults;
}

const KnownFault* KnownFaults::match(std::string_view message) const {
  const std::string_view text = kernel_text(message);
  const std::optional<KernelFault> fault = match_kernel_fault(text);
  std::vector<int> hits;
  if (!set_->entry_of.empty()) set_->set.Match(re2::StringPiece(text.data(), text.size()), &hits);
  if (!fault && hits.empty()) return nullptr;
  // The first entry in file order that matches.
  size_t first_pattern_entry = entries_.size();
  for (int h : hits)
    first_pattern_entry = std::min(first_pattern_entry, set_->entry_of[static_cast<size_t>(h)]);
  for (size_t i = 0; i < first_pattern_entry; ++i)
    if (entries_[i].kernel_log && matches_kernel_fault(entries_[i], fault)) return &entries_[i];
  return first_pattern_entry < entries_.size() ? &entries_[first_pattern_entry] : nullptr;
}

}  // namespace ckpt::logwatch
