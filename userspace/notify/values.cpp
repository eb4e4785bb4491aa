// The parts of the notifier that need no libcurl: `ckptscope` itself links
// these (config redaction, --attach-budget, job names), while only
// ckptscope-notify links libcurl and its TLS stack (cli/notify_request.h).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "notify/notify.h"
#include "notify/notify_internal.h"

namespace ckpt::notify {
namespace {

using nlohmann::json;

const std::set<std::string> kSecretKeys = {"password", "webhook_token"};

}  // namespace

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe)
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
}

Expected<uint64_t> parse_size(std::string_view text) {
  auto bad = [&] {
    return make_error(fmt::format(
        "must be a number of bytes or a size such as \"10M\", \"512K\", \"1G\" (got \"{}\")",
        text));
  };
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == 0) return bad();
  std::string number(text.substr(0, i));
  if (std::count(number.begin(), number.end(), '.') > 1 || number == ".") return bad();
  std::string unit = lower(std::string(text.substr(i)));
  if (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  uint64_t mult = 0;
  static const std::pair<const char*, uint64_t> kUnits[] = {{"", 1},
                                                            {"b", 1},
                                                            {"k", 1ull << 10},
                                                            {"kb", 1ull << 10},
                                                            {"kib", 1ull << 10},
                                                            {"m", 1ull << 20},
                                                            {"mb", 1ull << 20},
                                                            {"mib", 1ull << 20},
                                                            {"g", 1ull << 30},
                                                            {"gb", 1ull << 30},
                                                            {"gib", 1ull << 30},
                                                            {"t", 1ull << 40},
                                                            {"tb", 1ull << 40},
                                                            {"tib", 1ull << 40}};
  for (const auto& [name, m] : kUnits)
    if (unit == name) mult = m;
  if (mult == 0) return bad();
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(number.c_str(), &end);
  if (errno != 0 || end != number.c_str() + number.size() || !std::isfinite(v)) return bad();
  double bytes = std::floor(v * static_cast<double>(mult));
  if (bytes > 1.8e19) return bad();
  return static_cast<uint64_t>(bytes);
}

json redact_secrets(const json& section) {
  json out = section;
  if (out.is_object())
    for (const auto& key : kSecretKeys)
      if (out.contains(key)) out[key] = "(redacted)";
  return out;
}

std::string default_job_name(const std::vector<std::string>& command) {
  if (command.empty()) return "job";
  auto base = [](const std::string& p) { return p.substr(p.find_last_of('/') + 1); };
  std::string prog = base(command[0]);
  // For an interpreter or launcher the script is the job's name: "train.py"
  // says more than "python3" in a subject line.
  static const char* const kLaunchers[] = {"python",    "python3",    "bash", "sh",     "torchrun",
                                           "deepspeed", "accelerate", "srun", "mpirun", "env"};
  bool launcher = std::any_of(std::begin(kLaunchers), std::end(kLaunchers), [&](const char* l) {
    return prog == l || (prog.starts_with("python3.") && std::string(l) == "python3");
  });
  if (launcher) {
    // A script by its extension first ("torchrun --nproc_per_node 8 x.py"
    // must not be "8"), then the first argument that is not an option, an
    // option's number, or a subcommand.
    for (const auto& a : command)
      if (a.ends_with(".py") || a.ends_with(".sh")) return base(a);
    for (size_t i = 1; i < command.size(); ++i) {
      const std::string& a = command[i];
      if (a.empty() || a[0] == '-' || a.find('=') != std::string::npos) continue;
      if (a.find_first_not_of("0123456789.:") == std::string::npos) continue;
      if (a == "launch" || a == "run") continue;                       // "accelerate launch x.py"
      if (a.find_first_of(" \t\n;|&") != std::string::npos) continue;  // sh -c 'a script'
      return base(a);
    }
  }
  return prog.empty() ? "job" : prog;
}

}  // namespace ckpt::notify
