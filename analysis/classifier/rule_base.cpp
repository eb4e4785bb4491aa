#include "analysis/classifier/rule_base.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <re2/re2.h>
#include <nlohmann/json.hpp>

#include "json/json_io.h"

namespace ckpt::classify {

bool is_known_class(std::string_view name) {
  return std::find(kCorpusClasses.begin(), kCorpusClasses.end(), name) != kCorpusClasses.end() ||
         std::find(kInfraClasses.begin(), kInfraClasses.end(), name) != kInfraClasses.end();
}

namespace {

using nlohmann::json;

Expected<void> check_keys(const json& obj, std::initializer_list<std::string_view> allowed,
                          const std::string& where) {
  for (const auto& [key, value] : obj.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      return make_error(fmt::format("{}: unknown key \"{}\"", where, key));
  }
  return {};
}

Expected<std::string> string_field(const json& obj, const char* key, const std::string& where,
                                   bool required) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) return make_error(fmt::format("{}: missing \"{}\"", where, key));
    return std::string();
  }
  if (!it->is_string()) return make_error(fmt::format("{}.{}: must be a string", where, key));
  return it->get<std::string>();
}

Expected<std::vector<std::string>> string_list(const json& obj, const char* key,
                                               const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_array() || it->empty())
    return make_error(fmt::format("{}.{}: must be a non-empty list of strings", where, key));
  std::vector<std::string> out;
  for (const auto& v : *it) {
    if (!v.is_string() || v.get<std::string>().empty())
      return make_error(fmt::format("{}.{}: must be a non-empty list of strings", where, key));
    out.push_back(v.get<std::string>());
  }
  return out;
}

Expected<void> check_patterns(const std::vector<std::string>& patterns, const std::string& where) {
  for (const auto& p : patterns) {
    RE2 re(p, RE2::Quiet);
    if (!re.ok())
      return make_error(
          fmt::format("{}: pattern \"{}\" does not compile: {}", where, p, re.error()));
  }
  return {};
}

}  // namespace

Expected<std::string> expand_xid_lists(std::string_view text, XidListStyle style) {
  constexpr std::string_view kOpen = "{{xids:";
  constexpr std::string_view kClose = "}}";
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t at = text.find(kOpen, pos);
    if (at == std::string_view::npos) break;
    const size_t name_at = at + kOpen.size();
    const size_t close = text.find(kClose, name_at);
    if (close == std::string_view::npos)
      return make_error(fmt::format("\"{}\" is not closed by \"}}}}\"", text.substr(at)));
    const std::string_view name = text.substr(name_at, close - name_at);
    const XidCategoryEntry* entry = find_xid_category(name);
    if (entry == nullptr || entry->xids.empty())
      return make_error(
          fmt::format("{{{{xids:{}}}}}: not an Xid category with a list (one of "
                      "gpu_lost, ecc_error, nvlink_error)",
                      name));
    out.append(text.substr(pos, at - pos));
    const char* separator = style == XidListStyle::Pattern ? "|" : "/";
    if (style == XidListStyle::Pattern) out += "(?:";
    for (size_t i = 0; i < entry->xids.size(); ++i)
      out += fmt::format("{}{}", i ? separator : "", entry->xids[i]);
    if (style == XidListStyle::Pattern) out += ")";
    pos = close + kClose.size();
  }
  out.append(text.substr(pos));
  return out;
}

namespace {

// A precedence is an int (rule_base.h); any int is a valid order.
constexpr int kMinPrecedence = std::numeric_limits<int>::min();
constexpr int kMaxPrecedence = std::numeric_limits<int>::max();

Expected<RuleBase> read_rule_base(const json& doc, const std::string& origin) {
  if (!doc.is_object()) return make_error(origin + ": must be a JSON object");
  if (auto ok = check_keys(doc, {"version", "about", "noise", "rules"}, origin); !ok)
    return ok.error();
  RuleBase base;
  base.origin = origin;
  if (!doc.contains("version") || !doc["version"].is_number_integer() || doc["version"] != 1)
    return make_error(origin + ": \"version\" must be 1");

  std::set<std::string> ids;
  // What noise rules and rules share: an id, a doc, patterns and examples.
  auto common = [&](const json& item, const std::string& list, size_t i, const char* kind,
                    std::initializer_list<std::string_view> keys) -> Expected<NoiseRule> {
    std::string where = fmt::format("{}: {}[{}]", origin, list, i);
    if (!item.is_object()) return make_error(where + ": must be an object");
    NoiseRule text;
    auto id = string_field(item, "id", where, true);
    if (!id) return id.error();
    text.id = *id;
    where = fmt::format("{}: {} \"{}\"", origin, kind, text.id);
    if (auto ok = check_keys(item, keys, where); !ok) return ok.error();
    auto doc_text = string_field(item, "doc", where, true);
    if (!doc_text) return doc_text.error();
    auto doc_expanded = expand_xid_lists(*doc_text, XidListStyle::Prose);
    if (!doc_expanded) return make_error(where + ".doc: " + doc_expanded.error().message);
    text.doc = std::move(*doc_expanded);
    auto patterns = string_list(item, "match", where);
    if (!patterns) return patterns.error();
    for (std::string& p : *patterns) {
      auto expanded = expand_xid_lists(p, XidListStyle::Pattern);
      if (!expanded) return make_error(where + ".match: " + expanded.error().message);
      p = std::move(*expanded);
    }
    text.patterns = *patterns;
    auto examples = string_list(item, "examples", where);
    if (!examples) return examples.error();
    text.examples = *examples;
    if (auto ok = check_patterns(text.patterns, where); !ok) return ok.error();
    if (!ids.insert(text.id).second)
      return make_error(fmt::format("{}: rule id \"{}\" is used twice", origin, text.id));
    return text;
  };

  if (doc.contains("noise")) {
    if (!doc["noise"].is_array()) return make_error(origin + ": \"noise\" must be a list");
    for (size_t i = 0; i < doc["noise"].size(); ++i) {
      auto noise =
          common(doc["noise"][i], "noise", i, "noise rule", {"id", "doc", "match", "examples"});
      if (!noise) return noise.error();
      base.noise.push_back(std::move(*noise));
    }
  }

  if (!doc.contains("rules") || !doc["rules"].is_array() || doc["rules"].empty())
    return make_error(origin + ": \"rules\" must be a non-empty list");
  for (size_t i = 0; i < doc["rules"].size(); ++i) {
    const auto& r = doc["rules"][i];
    auto text =
        common(r, "rules", i, "rule", {"id", "class", "precedence", "doc", "match", "examples"});
    if (!text) return text.error();
    const std::string where = fmt::format("{}: rule \"{}\"", origin, text->id);
    Rule rule{text->id, "", 0, text->doc, text->patterns, text->examples};
    auto cls = string_field(r, "class", where, true);
    if (!cls) return cls.error();
    if (!is_known_class(*cls))
      return make_error(
          fmt::format("{}: unknown class \"{}\" (docs/classifier.md lists them)", where, *cls));
    rule.cls = *cls;
    // is_number_integer() is true of any integer JSON holds (to 2^64):
    // get<int> would wrap one past int's range into a different precedence.
    if (!r.contains("precedence") || !r["precedence"].is_number_integer() ||
        r["precedence"] < kMinPrecedence || r["precedence"] > kMaxPrecedence)
      return make_error(fmt::format("{}: \"precedence\" must be an integer in [{}, {}]", where,
                                    kMinPrecedence, kMaxPrecedence));
    rule.precedence = r["precedence"].get<int>();
    base.rules.push_back(std::move(rule));
  }
  return base;
}

}  // namespace

Expected<RuleBase> parse_rule_base(std::string_view json_text, const std::string& origin) {
  // parse_json: a syntax error or a number no double holds (1e400) names the
  // file; read_json: any access the checks missed names the field.
  auto doc = parse_json(json_text, origin);
  if (!doc) return doc.error();
  return read_json(origin, [&]() { return read_rule_base(*doc, origin); });
}

Expected<RuleBase> load_rule_base(const std::string& path) {
  auto text = read_file_bounded(path, kRuleBaseFileLimit, "--rules");
  if (!text) return text.error();
  return parse_rule_base(*text, path);
}

}  // namespace ckpt::classify
