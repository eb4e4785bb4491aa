#include "analysis/logwatch/model_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/fnv1a.h"

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
    contexts.push_back({{"ids", std::move(ids)}, {"total", s.total}, {"next", std::move(next)}});
  }
  body["contexts"] = std::move(contexts);
  return body;
}

Expected<LogDetector> detector_of(const json& body) {
  DetectorConfig c;
  const json& drain = body.at("drain");
  c.drain.prefix_tokens = drain.at("prefix_tokens").get<int>();
  c.drain.similarity = drain.at("similarity").get<double>();
  c.drain.max_children = drain.at("max_children").get<int>();
  c.drain.max_templates = drain.at("max_templates").get<std::size_t>();
  c.history = body.at("history").get<int>();
  if (c.history < 0 || c.history > kMaxHistory)
    return make_error(fmt::format("history is {}, not 0..{}", c.history, kMaxHistory));
  if (c.drain.prefix_tokens < 0 || c.drain.max_children < 2 || c.drain.similarity < 0 ||
      c.drain.similarity > 1)
    return make_error("drain settings out of range: " + drain.dump());
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
    d.restore_template(std::move(cluster), t.at("count").get<double>());
  }
  for (const json& ctx : body.at("contexts")) {
    auto ids = ctx.at("ids").get<std::vector<TemplateId>>();
    if (ids.empty() || ids.size() > static_cast<std::size_t>(c.history))
      return make_error(
          fmt::format("a context has {} templates, not 1..{}", ids.size(), c.history));
    Context context;
    context.length = static_cast<std::uint8_t>(ids.size());
    std::copy(ids.begin(), ids.end(), context.ids.begin());
    auto next = ctx.at("next").get<std::vector<std::pair<TemplateId, double>>>();
    d.restore_context(context, ctx.at("total").get<double>(), std::move(next));
  }
  d.set_events(body.at("events").get<std::uint64_t>());
  d.set_next_template_id(body.at("next_template_id").get<TemplateId>());
  return d;
}

}  // namespace

std::string model_to_string(const LogDetector& detector) {
  json body = body_of(detector);
  std::string dumped = body.dump();
  json doc;
  doc["format"] = kModelFormat;
  doc["version"] = kModelVersion;
  doc["checksum"] = checksum_of(dumped);
  doc["body"] = std::move(body);
  return doc.dump() + "\n";
}

Expected<LogDetector> model_from_string(const std::string& text, const std::string& name) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return make_error(fmt::format("model {}: not complete JSON (truncated or corrupt)", name));
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
  std::string actual = checksum_of(doc["body"].dump());
  if (actual != doc["checksum"].get<std::string>())
    return make_error(fmt::format("model {}: corrupt, checksum {} does not match its body ({})",
                                  name, doc["checksum"].get<std::string>(), actual));
  try {
    auto d = detector_of(doc["body"]);
    if (!d) return make_error(fmt::format("model {}: {}", name, d.error().message));
    return d;
  } catch (const json::exception& e) {
    return make_error(
        fmt::format("model {}: a field is missing or of the wrong type: {}", name, e.what()));
  }
}

Expected<void> save_model(const LogDetector& detector, const std::string& path) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return make_error(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
    out << model_to_string(detector);
    out.flush();
    if (!out) return make_error(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return make_error(fmt::format("cannot rename {} to {}: {}", tmp, path, ec.message()));
  return {};
}

Expected<LogDetector> load_model(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(fmt::format("cannot open model {}: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return model_from_string(text.str(), path);
}

}  // namespace ckpt::logwatch
