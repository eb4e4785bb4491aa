#include "analysis/fleet/records/pytorchjob.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "analysis/fleet/records/wall_time.h"
#include "json/json_io.h"

namespace ckpt::fleet::records {
namespace {

using nlohmann::json;

Expected<void> read_job(const json& job, const std::string& where, Records& records) {
  if (!job.is_object()) return make_error(fmt::format("{}: expected an object", where));
  const bool kind_is_string = job.contains("kind") && job["kind"].is_string();
  if (!kind_is_string || job["kind"].get<std::string>() != "PyTorchJob")
    return make_error(fmt::format("{}: kind {}, expected PyTorchJob", where,
                                  dump_json(job.contains("kind") ? job["kind"] : json("(none)"))));
  std::string name = "(unnamed)";
  if (job.contains("metadata") && job["metadata"].is_object()) {
    const auto& meta = job["metadata"];
    if (meta.contains("name") && meta["name"].is_string()) name = meta["name"].get<std::string>();
    if (meta.contains("namespace") && meta["namespace"].is_string())
      name = meta["namespace"].get<std::string>() + "/" + name;
  }
  std::string here = fmt::format("{} ({})", where, name);
  if (!job.contains("status") || !job["status"].is_object())
    return make_error(fmt::format("{}: status: missing", here));
  const auto& status = job["status"];
  if (!status.contains("conditions") || !status["conditions"].is_array())
    return make_error(fmt::format("{}: status.conditions: missing or not an array", here));
  std::vector<Attempt> attempts;
  auto begin_attempt = [&](std::optional<double> start) {
    Attempt a;
    a.scheduler = "pytorchjob";
    a.chain_id = "pytorchjob:" + name;
    a.job_id = name;
    a.name = name;
    a.attempt_number = static_cast<int>(attempts.size()) + 1;
    a.trigger = attempts.empty() ? Trigger::manual : Trigger::automatic;
    a.outcome = Outcome::unfinished;
    a.state = "Running";
    a.start_unix_s = start;
    a.source = here;
    attempts.push_back(std::move(a));
  };
  bool awaiting_start = true;
  const auto& conditions = status["conditions"];
  for (size_t i = 0; i < conditions.size(); ++i) {
    const auto& c = conditions[i];
    std::string field = fmt::format("{}: status.conditions[{}]", here, i);
    if (!c.is_object() || !c.contains("type") || !c["type"].is_string())
      return make_error(fmt::format("{}.type: missing", field));
    std::string type = c["type"].get<std::string>();
    std::optional<double> time;
    if (c.contains("lastTransitionTime")) {
      if (!c["lastTransitionTime"].is_string())
        return make_error(fmt::format("{}.lastTransitionTime: expected a string", field));
      auto t = parse_wall_time(c["lastTransitionTime"].get<std::string>());
      if (!t) return make_error(fmt::format("{}.lastTransitionTime: {}", field, t.error().message));
      time = *t;
    }
    if (c.contains("status") && !c["status"].is_string())
      return make_error(
          fmt::format("{}.status: expected a string, got {}", field, c["status"].type_name()));
    bool is_true = !c.contains("status") || c["status"].get<std::string>() == "True";
    if (type == "Created") continue;
    if (type == "Running") {
      if (attempts.empty())
        begin_attempt(time);
      else if (awaiting_start)
        attempts.back().start_unix_s = time;
      awaiting_start = false;
    } else if (type == "Restarting") {
      if (attempts.empty()) begin_attempt(std::nullopt);
      attempts.back().outcome = Outcome::failure;
      attempts.back().state = "Restarting";
      attempts.back().end_unix_s = time;
      begin_attempt(std::nullopt);
      awaiting_start = true;
    } else if (type == "Succeeded" || type == "Failed") {
      if (!is_true) continue;
      if (attempts.empty()) begin_attempt(std::nullopt);
      attempts.back().outcome = type == "Succeeded" ? Outcome::success : Outcome::failure;
      attempts.back().state = type;
      attempts.back().end_unix_s = time;
    } else if (type != "Suspended" && type != "Created") {
      return make_error(fmt::format(
          "{}.type: \"{}\" is not a PyTorchJob condition (Created, Running, Restarting, "
          "Succeeded, Failed, Suspended)",
          field, type));
    }
  }
  if (attempts.empty()) begin_attempt(std::nullopt);  // created, never ran
  for (auto& a : attempts) records.attempts.push_back(std::move(a));
  return {};
}

Expected<void> read_items(const json& doc, std::string_view file, Records& records) {
  if (doc.is_object() && doc.contains("items")) {
    if (!doc["items"].is_array()) return make_error(fmt::format("{}: items: not an array", file));
    for (size_t i = 0; i < doc["items"].size(); ++i) {
      auto read = read_job(doc["items"][i], fmt::format("{}: items[{}]", file, i), records);
      if (!read) return read;
    }
    return {};
  }
  return read_job(doc, std::string(file), records);
}

}  // namespace

Expected<void> read_pytorchjobs(std::string_view text, std::string_view file, Records& records) {
  // A syntax error or an overflowing number (1e400) names the file; any
  // access the checks above missed names the field instead of aborting.
  auto doc = parse_json(text, file);
  if (!doc) return make_error(doc.error().message + " (kubectl get pytorchjob -o json)");
  return read_json(file, [&]() { return read_items(*doc, file, records); });
}

}  // namespace ckpt::fleet::records
