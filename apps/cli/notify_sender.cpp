// The sending side of ckptscope-notify (cli/notify_request.h): the only code
// that reaches libcurl.
#include "apps/cli/notify_request.h"
#include "json/json_io.h"

namespace ckpt::cli {

Expected<std::vector<DeliveryResult>> handle_request(const NotifyRequest& r) {
  nlohmann::json section;
  const nlohmann::json* section_ptr = nullptr;
  if (!r.config_section.empty()) {
    auto parsed = parse_json(r.config_section, "notify");
    if (!parsed) return parsed.error();
    section = std::move(*parsed);
    section_ptr = &section;
  }
  auto settings = notify::settings_from(section_ptr, r.smtp_flag, notify::process_env());
  if (!settings) return settings.error();
  if (r.attach_budget) settings->attach_budget = *r.attach_budget;
  std::vector<notify::NotifyTarget> targets;
  for (const auto& text : r.targets) {
    auto target = notify::parse_target(text);
    if (!target) return make_error("--notify " + target.error().message);
    if (auto ok = notify::check_target(*target, *settings); !ok)
      return make_error("--notify " + ok.error().message);
    targets.push_back(std::move(*target));
  }
  std::vector<DeliveryResult> results;
  if (r.mode == NotifyRequest::Mode::Check) {
    for (const auto& t : targets)
      results.push_back({notify::describe(t), true, "", settings->timeout_ms});
    return results;
  }
  std::vector<notify::Candidate> candidates = r.candidates;
  for (const auto& p : settings->attach) candidates.push_back({p, false});
  notify::ArtifactPlan plan = notify::plan_attachments(candidates, settings->attach_budget);
  notify::JobOutcome outcome = r.outcome;
  if (outcome.log_tail.empty() && !outcome.log_path.empty())
    if (auto tail = notify::read_log_tail(outcome.log_path, settings->log_tail_lines))
      outcome.log_tail = *tail;
  notify::Message message = notify::compose(outcome, plan);
  for (const auto& t : targets) {
    auto sent = notify::deliver(t, *settings, message, plan);
    results.push_back({notify::describe(t), static_cast<bool>(sent),
                       sent ? std::string() : sent.error().message});
  }
  return results;
}

}  // namespace ckpt::cli
