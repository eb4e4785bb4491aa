#include "analysis/fleet/records/sacct_json.h"

#include <fmt/format.h>

#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "analysis/fleet/records/slurm_record.h"
#include "json/json_io.h"

namespace ckpt::fleet::records {
namespace {

using nlohmann::json;

// Field errors: "FILE: jobs[3] (job_id 1234): state.current: expected ..."
struct Where {
  std::string_view file;
  size_t index;
  std::string job_id;
  [[nodiscard]] Error error(std::string_view field, std::string_view what) const {
    return make_error(fmt::format("{}: jobs[{}]{}: {}: {}", file, index,
                                  job_id.empty() ? "" : fmt::format(" (job_id {})", job_id), field,
                                  what));
  }
};

std::string type_of(const json& value) { return value.type_name(); }

// An integer JSON value as int64_t; nullopt for a float or one past int64's
// range (nlohmann's get<int64_t> would wrap it or cast a float silently).
std::optional<int64_t> as_int64(const json& value) {
  if (value.is_number_unsigned()) {
    const auto u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  return std::nullopt;
}

// A number printed plainly or Slurm's "no value" wrapper
// {"set": bool, "infinite": bool, "number": N} (v0.0.39+).
Expected<std::optional<int64_t>> slurm_number(const json& value, const Where& where,
                                              std::string_view field) {
  if (value.is_number_integer()) {
    auto integer = as_int64(value);
    if (!integer)
      return where.error(field, fmt::format("{} is past a 64-bit integer", dump_json(value)));
    return std::optional<int64_t>{*integer};
  }
  if (value.is_object()) {
    auto set = value.find("set");
    auto number = value.find("number");
    if (set == value.end() || !set->is_boolean() || number == value.end() || !number->is_number())
      return where.error(field, "expected an integer or {\"set\", \"infinite\", \"number\"}");
    auto infinite = value.find("infinite");
    if (infinite != value.end() && !infinite->is_boolean())
      return where.error(fmt::format("{}.infinite", field),
                         fmt::format("expected a boolean, got {}", type_of(*infinite)));
    if (!set->get<bool>() || (infinite != value.end() && infinite->get<bool>()))
      return std::optional<int64_t>{};
    auto integer = as_int64(*number);
    if (!integer)
      return where.error(fmt::format("{}.number", field),
                         fmt::format("expected an integer, got {}", dump_json(*number)));
    return std::optional<int64_t>{*integer};
  }
  return where.error(field, fmt::format("expected an integer or {{\"set\", \"infinite\", "
                                        "\"number\"}}, got {}",
                                        type_of(value)));
}

// A time: Unix seconds; 0 (or unset) is "not yet".
Expected<std::optional<double>> slurm_time(const json& time, const char* key, const Where& where) {
  auto it = time.find(key);
  if (it == time.end()) return std::optional<double>{};
  auto value = slurm_number(*it, where, fmt::format("time.{}", key));
  if (!value) return value.error();
  if (!*value || **value <= 0) return std::optional<double>{};
  return std::optional<double>{static_cast<double>(**value)};
}

Expected<std::string> optional_string(const json& job, const char* key, const Where& where) {
  auto it = job.find(key);
  if (it == job.end() || it->is_null()) return std::string{};
  if (!it->is_string())
    return where.error(key, fmt::format("expected a string, got {}", type_of(*it)));
  return it->get<std::string>();
}

Expected<SlurmRecord> read_job(const json& job, Where where) {
  if (!job.is_object())
    return where.error("job", fmt::format("expected an object, got {}", type_of(job)));
  SlurmRecord record;
  auto id = job.find("job_id");
  if (id == job.end()) return where.error("job_id", "missing");
  auto job_id = as_int64(*id);
  if (!job_id)
    return where.error("job_id", fmt::format("expected an integer, got {}",
                                             id->is_number() ? dump_json(*id) : type_of(*id)));
  record.job_id = std::to_string(*job_id);
  where.job_id = record.job_id;
  record.source = fmt::format("{}: jobs[{}] (job_id {})", where.file, where.index, record.job_id);

  auto state = job.find("state");
  if (state == job.end() || !state->is_object())
    return where.error("state", "missing (expected {\"current\": ...})");
  auto current = state->find("current");
  if (current == state->end()) return where.error("state.current", "missing");
  if (current->is_string()) {
    record.state = current->get<std::string>();  // 21.08
  } else if (current->is_array() && !current->empty()) {
    // 23.11+: the base state first, then flags; a node failure wins.
    for (const auto& s : *current)
      if (!s.is_string()) return where.error("state.current", "expected an array of strings");
    record.state = (*current)[0].get<std::string>();
    for (const auto& s : *current)
      if (s.get<std::string>() == "NODE_FAIL") record.state = "NODE_FAIL";
  } else {
    return where.error("state.current",
                       fmt::format("expected a string (21.08) or a non-empty array "
                                   "of strings (23.11+), got {}",
                                   type_of(*current)));
  }

  if (auto exit_code = job.find("exit_code"); exit_code != job.end()) {
    if (!exit_code->is_object())
      return where.error("exit_code",
                         fmt::format("expected an object, got {}", type_of(*exit_code)));
    if (auto rc = exit_code->find("return_code"); rc != exit_code->end()) {
      auto value = slurm_number(*rc, where, "exit_code.return_code");
      if (!value) return value.error();
    }
  }

  auto time = job.find("time");
  if (time == job.end() || !time->is_object())
    return where.error("time", "missing (expected {\"submission\", \"start\", \"end\"})");
  auto submit = slurm_time(*time, "submission", where);
  if (!submit) return submit.error();
  auto start = slurm_time(*time, "start", where);
  if (!start) return start.error();
  auto end = slurm_time(*time, "end", where);
  if (!end) return end.error();
  record.submit_unix_s = *submit;
  record.start_unix_s = *start;
  record.end_unix_s = *end;

  auto name = optional_string(job, "name", where);
  if (!name) return name.error();
  record.name = *name;
  auto user = optional_string(job, "user", where);
  if (!user) return user.error();
  record.user = *user;
  auto nodes = optional_string(job, "nodes", where);
  if (!nodes) return nodes.error();
  record.node_list = *nodes;
  auto failed = optional_string(job, "failed_node", where);
  if (!failed) return failed.error();
  record.failed_node = *failed;
  if (auto restarts = job.find("restart_cnt"); restarts != job.end()) {
    auto value = slurm_number(*restarts, where, "restart_cnt");
    if (!value) return value.error();
    if (*value && (**value < 0 || **value > std::numeric_limits<int>::max()))
      return where.error("restart_cnt", fmt::format("{}: must be in [0, {}]", **value,
                                                    std::numeric_limits<int>::max()));
    if (*value) record.restart_count = static_cast<int>(**value);
  }
  return record;
}

Expected<void> read_jobs(const json& doc, std::string_view file, Records& records) {
  if (!doc.is_object() || !doc.contains("jobs"))
    return make_error(fmt::format("{}: no \"jobs\" array (is this sacct --json?)", file));
  const auto& jobs = doc["jobs"];
  if (!jobs.is_array())
    return make_error(
        fmt::format("{}: \"jobs\": expected an array, got {}", file, jobs.type_name()));
  for (size_t i = 0; i < jobs.size(); ++i) {
    auto record = read_job(jobs[i], Where{file, i, {}});
    if (!record) return record.error();
    auto added = add_slurm_record(*record, records);
    if (!added) return added.error();
  }
  return {};
}

}  // namespace

Expected<void> read_sacct_json(std::string_view text, std::string_view file, Records& records) {
  // parse_json: a syntax error or a number no double holds (1e400) is an
  // error naming the file; read_json: any access the checks below missed
  // names the field instead of aborting.
  auto parsed = parse_json(text, file);
  if (!parsed) return make_error(parsed.error().message + " (is this sacct --json?)");
  return read_json(file, [&]() { return read_jobs(*parsed, file, records); });
}

}  // namespace ckpt::fleet::records
