#include "analysis/fleet/records/slurm_record.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "analysis/fleet/records/hostlist.h"
#include "analysis/fleet/records/slurm_state.h"

namespace ckpt::fleet::records {
namespace {

constexpr std::string_view kChainPrefix = "slurm:";

bool is_slurm_chain(const Attempt& a) { return a.scheduler == "slurm"; }

}  // namespace

Expected<void> add_slurm_record(const SlurmRecord& record, Records& records) {
  if (record.job_id.empty()) return make_error(fmt::format("{}: JobID is empty", record.source));
  std::string state = base_slurm_state(record.state);
  Attempt attempt;
  if (!slurm_outcome(state, attempt.outcome))
    return make_error(
        fmt::format("{}: State \"{}\" is not a Slurm job state", record.source, record.state));
  auto nodes = expand_hostlist(record.node_list);
  if (!nodes)
    return make_error(fmt::format("{}: NodeList: {}", record.source, nodes.error().message));
  auto failed = expand_hostlist(record.failed_node);
  if (!failed)
    return make_error(fmt::format("{}: FailedNode: {}", record.source, failed.error().message));
  attempt.scheduler = "slurm";
  attempt.chain_id = std::string(kChainPrefix) + record.job_id;
  attempt.job_id = record.job_id;
  attempt.name = record.name;
  attempt.user = record.user;
  attempt.state = state;
  attempt.submit_unix_s = record.submit_unix_s;
  attempt.start_unix_s = record.start_unix_s;
  attempt.end_unix_s = record.end_unix_s;
  attempt.nodes = *nodes;
  attempt.source = record.source;
  // The first run of a job is a submission; every further run of the same
  // JobID is a requeue (Slurm's own, or a --requeue policy): the trigger of
  // runs after the first is set when chains are finished.
  attempt.trigger = Trigger::manual;
  if (record.restart_count && *record.restart_count < 0)
    return make_error(
        fmt::format("{}: restart_cnt {} is negative", record.source, *record.restart_count));
  records.nodes.insert(nodes->begin(), nodes->end());
  records.nodes.insert(failed->begin(), failed->end());
  if (!failed->empty()) {
    for (const auto& n : *failed) records.exclusions.push_back({n, "node_fail", record.source});
  } else if (state == "NODE_FAIL") {
    if (nodes->size() == 1)
      records.exclusions.push_back({nodes->front(), "node_fail", record.source});
    else
      ++records.unattributed_node_failures;
  }
  if (record.restart_count) {
    int& restarts = records.slurm_restart_counts[record.job_id];
    restarts = std::max(restarts, *record.restart_count);
  }
  records.attempts.push_back(std::move(attempt));
  return {};
}

void finish_slurm_chains(Records& records) {
  // Runs of each job not numbered yet (attempt_number 0), in input order.
  std::map<std::string, std::vector<size_t>> jobs;
  for (size_t i = 0; i < records.attempts.size(); ++i) {
    const auto& a = records.attempts[i];
    if (is_slurm_chain(a) && a.attempt_number == 0) jobs[a.chain_id].push_back(i);
  }
  for (auto& [chain_id, runs] : jobs) {
    // Runs in start order (sacct -D lists them so; files may be concatenated);
    // a run not started yet (a requeued job pending again) is the last.
    auto start_key = [&](size_t i) {
      const auto& a = records.attempts[i];
      return a.start_unix_s.value_or(
          a.end_unix_s.value_or(std::numeric_limits<double>::infinity()));
    };
    std::stable_sort(runs.begin(), runs.end(),
                     [&](size_t x, size_t y) { return start_key(x) < start_key(y); });
    const Attempt last = records.attempts[runs.back()];
    auto restarts = records.slurm_restart_counts.find(last.job_id);
    int runs_by_restart_count =
        restarts == records.slurm_restart_counts.end() ? 0 : restarts->second + 1;
    int missing = std::max(0, runs_by_restart_count - static_cast<int>(runs.size()));
    records.unrecorded_requeues += missing;
    int total = static_cast<int>(runs.size()) + missing;
    int number = 1;
    // Unrecorded runs came before the recorded ones (sacct without -D shows
    // the last run).
    for (int k = 0; k < missing; ++k, ++number) {
      Attempt run;
      run.scheduler = "slurm";
      run.chain_id = chain_id;
      run.job_id = last.job_id;
      run.name = last.name;
      run.user = last.user;
      run.attempt_number = number;
      run.trigger = number == 1 ? Trigger::manual : Trigger::automatic;
      run.outcome = Outcome::failure;
      run.state = "REQUEUED";
      run.source = last.source + " (restart_cnt)";
      records.attempts.push_back(std::move(run));
    }
    for (size_t i : runs) {
      auto& a = records.attempts[i];
      a.attempt_number = number;
      a.trigger = number == 1 ? Trigger::manual : Trigger::automatic;
      ++number;
    }
    if (total == 1) records.attempts[runs.front()].chain_id.clear();
  }
}

void join_manual_resubmissions(Records& records) {
  struct Job {
    std::vector<size_t> runs;  // attempt numbers ascending
    double first_submit_unix_s = 0;
  };
  std::map<std::string, Job> by_job_id;
  for (size_t i = 0; i < records.attempts.size(); ++i)
    if (records.attempts[i].scheduler == "slurm")
      by_job_id[records.attempts[i].job_id].runs.push_back(i);
  std::map<std::tuple<std::string, std::string>, std::vector<Job*>> by_user_name;
  for (auto& [id, job] : by_job_id) {
    std::stable_sort(job.runs.begin(), job.runs.end(), [&](size_t x, size_t y) {
      return records.attempts[x].attempt_number < records.attempts[y].attempt_number;
    });
    const auto& first = records.attempts[job.runs.front()];
    if (first.name.empty()) continue;
    job.first_submit_unix_s = first.submit_unix_s.value_or(first.start_unix_s.value_or(0));
    by_user_name[{first.user, first.name}].push_back(&job);
  }
  for (auto& [key, jobs] : by_user_name) {
    std::stable_sort(jobs.begin(), jobs.end(), [](const Job* a, const Job* b) {
      return a->first_submit_unix_s < b->first_submit_unix_s;
    });
    std::vector<std::vector<const Job*>> chains;
    for (const Job* job : jobs) {
      bool continues = false;
      if (!chains.empty()) {
        const auto& previous_last = records.attempts[chains.back().back()->runs.back()];
        continues = previous_last.end_unix_s && previous_last.outcome != Outcome::success &&
                    previous_last.outcome != Outcome::unfinished &&
                    job->first_submit_unix_s >= *previous_last.end_unix_s;
      }
      if (continues)
        chains.back().push_back(job);
      else
        chains.push_back({job});
    }
    for (const auto& chain : chains) {
      if (chain.size() < 2) continue;
      std::string chain_id =
          std::string(kChainPrefix) + records.attempts[chain.front()->runs.front()].job_id;
      int number = 0;
      for (const Job* job : chain)
        for (size_t r = 0; r < job->runs.size(); ++r) {
          auto& a = records.attempts[job->runs[r]];
          a.chain_id = chain_id;
          a.attempt_number = ++number;
          a.trigger = r == 0 ? Trigger::manual : Trigger::automatic;
        }
    }
  }
}

}  // namespace ckpt::fleet::records
