#include "analysis/logwatch/model_file.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/fnv1a.h"
#include "files/input_file.h"
#include "files/output_file.h"
#include "json/json_io.h"

namespace ckpt::logwatch {

namespace {

using nlohmann::json;

std::string checksum_of(const std::string& text) {
  return fmt::format("fnv1a64:{:016x}", ckpt::fnv1a64(text));
}

json body_of(const LogDetector& d) {
  const DetectorConfig& c = d.config();
  json body;
  body["drain"] = {{"prefix_tokens", c.drain.prefix_tokens},
                   {"similarity", c.drain.similarity},
                   {"max_children", c.drain.max_children},
                   {"max_templates", c.drain.max_templates}};
  body["history"] = c.history;
  body["events"] = d.events();
  body["next_template_id"] = d.miner().next_id();
  json templates = json::array();
  for (const Cluster* t : d.miner().clusters_by_recency())
    templates.push_back({{"id", t->id},
                         {"tokens", t->tokens},
                         {"path", t->path},
                         {"matched", t->matched},
                         {"count", d.template_count(t->id)}});
  body["templates"] = std::move(templates);
  json contexts = json::array();
  for (const Context& ctx : d.contexts_by_recency()) {
    const Successors& s = d.contexts().at(ctx);
    json ids = json::array();
    for (std::size_t i = 0; i < ctx.length; ++i) ids.push_back(ctx.ids[i]);
    json next = json::array();
    for (const auto& [id, count] : s.next) next.push_back({id, count});
    contexts.push_back({{"source", ctx.source},
                        {"ids", std::move(ids)},
                        {"total", s.total},
                        {"next", std::move(next)}});
  }
  body["contexts"] = std::move(contexts);
  body["surprise_bins"] = d.surprise_bins();
  return body;
}

// `value` as a whole number in [min, max]: get<int>() alone would wrap
// 4294967297 to 1 and take 2.5 as 2.
template <typename T>
Expected<T> integer_in(const json& value, const char* field, T min, T max) {
  // Every bound here is within int64_t.
  const auto lo = static_cast<std::int64_t>(min);
  const auto hi = static_cast<std::int64_t>(max);
  bool in_range = false;
  if (value.is_number_unsigned())
    in_range = value.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi) &&
               static_cast<std::int64_t>(value.get<std::uint64_t>()) >= lo;
  else if (value.is_number_integer())
    in_range = value.get<std::int64_t>() >= lo && value.get<std::int64_t>() <= hi;
  if (!in_range)
    return make_error(fmt::format("{} is {}, not a whole number from {} to {}", field,
                                  dump_json(value), min, max));
  return value.get<T>();
}

// A count: finite (JSON has no NaN, but a huge exponent is still a number) and not negative.
Expected<double> count_of(const json& value, const char* field) {
  if (!value.is_number() || !(value.get<double>() >= 0) || !std::isfinite(value.get<double>()))
    return make_error(fmt::format("{} is {}, not a count", field, dump_json(value)));
  return value.get<double>();
}

Expected<LogDetector> detector_of(const json& body) {
  DetectorConfig c;
  const json& drain = body.at("drain");
  auto prefix = integer_in(drain.at("prefix_tokens"), "drain.prefix_tokens", 0, 64);
  auto children = integer_in(drain.at("max_children"), "drain.max_children", 2, 1'000'000);
  auto templates = integer_in(drain.at("max_templates"), "drain.max_templates", std::size_t{1},
                              std::size_t{10'000'000});
  auto history = integer_in(body.at("history"), "history", 0, kMaxHistory);
  for (const Expected<int>* e : {&prefix, &children, &history})
    if (!*e) return e->error();
  if (!templates) return templates.error();
  c.drain.prefix_tokens = *prefix;
  c.drain.max_children = *children;
  c.drain.max_templates = *templates;
  c.history = *history;
  const json& similarity = drain.at("similarity");
  // NaN is written as null; a similarity outside [0, 1] is no Drain setting.
  if (!similarity.is_number() || !(similarity.get<double>() >= 0 && similarity.get<double>() <= 1))
    return make_error(
        fmt::format("drain.similarity is {}, not a number from 0 to 1", dump_json(similarity)));
  c.drain.similarity = similarity.get<double>();
  LogDetector d(c);
  for (const json& t : body.at("templates")) {
    Cluster cluster;
    cluster.id = t.at("id").get<TemplateId>();
    cluster.tokens = t.at("tokens").get<std::vector<std::string>>();
    cluster.path = t.at("path").get<std::vector<std::string>>();
    cluster.matched = t.at("matched").get<std::uint64_t>();
    if (cluster.id == 0 || d.miner().cluster(cluster.id) != nullptr)
      return make_error(fmt::format("template id {} is zero or repeated", cluster.id));
    if (cluster.path.empty() || cluster.path.front() != std::to_string(cluster.tokens.size()))
      return make_error(
          fmt::format("template {} has a tree path that does not match its length", cluster.id));
    auto count = count_of(t.at("count"), "a template's count");
    if (!count) return count.error();
    d.restore_template(std::move(cluster), *count);
  }
  for (const json& ctx : body.at("contexts")) {
    auto ids = ctx.at("ids").get<std::vector<TemplateId>>();
    auto source = integer_in(ctx.at("source"), "a context's source", std::uint32_t{0},
                             std::numeric_limits<std::uint32_t>::max());
    if (!source) return source.error();
    // Length 0 is a source's own template counts; lines naming no source have none.
    const std::size_t shortest = *source == 0 ? 1 : 0;
    if (ids.size() < shortest || ids.size() > static_cast<std::size_t>(c.history))
      return make_error(fmt::format("a context of source {} has {} templates, not {}..{}", *source,
                                    ids.size(), shortest, c.history));
    Context context;
    context.source = *source;
    context.length = static_cast<std::uint8_t>(ids.size());
    std::copy(ids.begin(), ids.end(), context.ids.begin());
    auto next = ctx.at("next").get<std::vector<std::pair<TemplateId, double>>>();
    for (const auto& [id, n] : next)
      if (!(n >= 0) || !std::isfinite(n))
        return make_error(fmt::format("a context's count for template {} is {}", id, n));
    auto total = count_of(ctx.at("total"), "a context's total");
    if (!total) return total.error();
    d.restore_context(context, *total, std::move(next));
  }
  const json& bins = body.at("surprise_bins");
  if (!bins.is_array() || bins.size() != kSurpriseBins)
    return make_error(fmt::format("surprise_bins is not an array of {} counts", kSurpriseBins));
  std::array<double, kSurpriseBins> restored{};
  for (std::size_t b = 0; b < restored.size(); ++b) {
    auto n = count_of(bins[b], "a surprise_bins count");
    if (!n) return n.error();
    restored[b] = *n;
  }
  d.restore_surprise_bins(restored);
  d.set_events(body.at("events").get<std::uint64_t>());
  d.set_next_template_id(body.at("next_template_id").get<TemplateId>());
  return d;
}

}  // namespace

std::string model_to_string(const LogDetector& detector) {
  json body = body_of(detector);
  // Log text is bytes: dump_json replaces invalid UTF-8 (type_error.316
  // aborted `logwatch train` on a line with such a byte). The checksum is of
  // what the file holds, which is what a reader dumps again.
  std::string dumped = dump_json(body);
  json doc;
  doc["format"] = kModelFormat;
  doc["version"] = kModelVersion;
  doc["checksum"] = checksum_of(dumped);
  doc["body"] = std::move(body);
  return dump_json(doc) + "\n";
}

Expected<LogDetector> model_from_string(const std::string& text, const std::string& name) {
  auto parsed = parse_json(text, "model " + name);
  if (!parsed) return make_error(fmt::format("{} (truncated or corrupt)", parsed.error().message));
  json doc = std::move(*parsed);
  if (!doc.is_object() || !doc.contains("format") || doc["format"] != kModelFormat)
    return make_error(fmt::format(
        "model {}: not a ckptscope logwatch model (no \"format\": \"{}\")", name, kModelFormat));
  if (!doc.contains("version") || !doc["version"].is_number_integer())
    return make_error(fmt::format("model {}: no format version", name));
  if (doc["version"].get<int>() != kModelVersion)
    return make_error(fmt::format("model {}: format version {}, this ckptscope reads version {}",
                                  name, doc["version"].get<int>(), kModelVersion));
  if (!doc.contains("body") || !doc.contains("checksum") || !doc["checksum"].is_string())
    return make_error(fmt::format("model {}: no body or checksum", name));
  std::string actual = checksum_of(dump_json(doc["body"]));
  if (actual != doc["checksum"].get<std::string>())
    return make_error(fmt::format("model {}: corrupt, checksum {} does not match its body ({})",
                                  name, doc["checksum"].get<std::string>(), actual));
  // A missing field or one of the wrong type: "model M: /body/templates/3/tokens: ...".
  return read_json("model " + name + ": a field is missing or of the wrong type",
                   [&]() -> Expected<LogDetector> {
                     auto d = detector_of(doc["body"]);
                     if (!d)
                       return make_error(fmt::format("model {}: {}", name, d.error().message));
                     return d;
                   });
}

Expected<void> save_model(const LogDetector& detector, const std::string& path) {
  // Whole or not at all (never a half model beside the real one), through a
  // temporary no one can plant, and only over a regular file.
  return replace_file_contents(path, model_to_string(detector), "model");
}

Expected<LogDetector> load_model(const std::string& path) {
  auto text = read_file_bounded(path, kModelFileLimit, "model");
  if (!text) return text.error();
  return model_from_string(*text, path);
}

}  // namespace ckpt::logwatch
