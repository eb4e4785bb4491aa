// The failure-cause rule base: rules as data (rules.json, compiled in; a
// user file can replace it). Loading validates everything a rule author can
// get wrong and names the rule and field in the error.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "files/input_file.h"
#include "model/xid_catalogue.h"

namespace ckpt::classify {

// The fifteen classes of the GPUAlert corpus, with its label names.
inline constexpr std::array<std::string_view, 15> kCorpusClasses = {
    "cuda_oom",       "nccl",       "cuda_runtime",   "ram_oom",   "segfault",
    "file_not_found", "permission", "missing_module", "div_zero",  "device_mismatch",
    "nan_loss",       "oom_killer", "traceback",      "assertion", "runtime_error"};
// Infrastructure causes that corpus lacks.
// The GPU ones are the Xid categories' names (model/xid_catalogue.h).
inline constexpr std::array<std::string_view, 8> kInfraClasses = {
    kXidCategoryGpuLost, kXidCategoryEccError, kXidCategoryNvlinkError,
    kXidCategoryGpuXid,  "storage_full",       "storage_io",
    "time_limit",        "dataloader_shm"};
inline constexpr std::string_view kUnknownClass = "unknown";

bool is_known_class(std::string_view name);

struct Rule {
  std::string id;
  std::string cls;  // one of kCorpusClasses or kInfraClasses
  int precedence = 0;
  std::string doc;
  std::vector<std::string> patterns;  // RE2, unanchored, any one matches
  std::vector<std::string> examples;  // lines this rule must classify (tested)
};

// A noise rule removes a line before any rule sees it: launcher output that
// reports a failure without saying why (ChildFailedError, exit codes).
struct NoiseRule {
  std::string id;
  std::string doc;
  std::vector<std::string> patterns;
  std::vector<std::string> examples;
};

struct RuleBase {
  int version = 1;
  std::vector<Rule> rules;  // in file order: ties in precedence go to the earlier rule
  std::vector<NoiseRule> noise;
  std::string origin;  // "built-in" or the file it came from
};

// "{{xids:CATEGORY}}" in a rule's patterns and doc stands for the Xids
// model/xid_catalogue.h lists under CATEGORY ("ecc_error"): the rule base and
// the kernel-log watcher read the one list. In a pattern it becomes the group
// "(?:48|63|...)", in prose "48/63/...". Text without "{{xids:" comes back
// unchanged; an unknown category, or one with no Xids of its own, is an error.
enum class XidListStyle { Pattern, Prose };
Expected<std::string> expand_xid_lists(std::string_view text, XidListStyle style);

// Parses and checks: known keys only, a known class, unique ids, at least one
// pattern and one example each, every pattern compiles under RE2 (after
// expand_xid_lists).
Expected<RuleBase> parse_rule_base(std::string_view json_text, const std::string& origin);
// The built-in rule base is 19 KiB; a user's, with its own rules added, a
// few times that. 16 MiB is hundreds of times the largest plausible one.
inline constexpr InputLimit kRuleBaseFileLimit{16u << 20, "a rule base is tens of KiB", true};
// At most kRuleBaseFileLimit of it (files/input_file.h).
Expected<RuleBase> load_rule_base(const std::string& path);
// The rules compiled into the binary (analysis/classifier/rules.json).
std::string_view builtin_rules_json();

}  // namespace ckpt::classify
