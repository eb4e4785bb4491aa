// What every scheduler-record reader produces (docs/fleet/records.md): one
// Attempt per run of a job (a Slurm record, a TorchElastic worker group run,
// a PyTorchJob run, a sessions-CSV row) and one Exclusion per time a node was
// taken out of service. Times are wall-clock Unix seconds from the records.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ckpt::fleet::records {

// Who started an attempt: the scheduler or launcher on its own (a Slurm
// requeue, a TorchElastic restart, a Kubeflow restart), or a person.
enum class Trigger { automatic, manual };
// unfinished: still pending or running when the records were taken.
enum class Outcome { success, failure, cancelled, unfinished };

const char* trigger_name(Trigger trigger);  // "auto", "manual"
const char* outcome_name(Outcome outcome);  // "success", "failure", "cancelled", "unfinished"

struct Attempt {
  // Attempts with the same non-empty chain_id form one retry chain; an empty
  // chain_id is a run that is not part of one.
  std::string chain_id;
  std::string scheduler;   // "slurm", "torchelastic", "pytorchjob", "sessions"
  std::string job_id;      // the scheduler's id of this run, when it has one
  std::string name;        // job or session name
  std::string user;        // Slurm user, when known (for --resubmits-by-name)
  int attempt_number = 0;  // 1, 2, ... as recorded; 0 = order by start time
  Trigger trigger = Trigger::automatic;
  Outcome outcome = Outcome::failure;
  std::string state;  // the record's own word for how it ended ("NODE_FAIL")
  std::optional<double> submit_unix_s, start_unix_s, end_unix_s;
  std::vector<std::string> nodes;
  std::string source;  // "FILE:LINE" or "FILE: jobs[3]": where it was read
};

struct Exclusion {
  std::string node;
  std::string reason;  // normalised (sinfo_reasons.h) or "node_fail", "excluded"
  std::string source;
};

// Everything read from all inputs of one command.
struct Records {
  std::vector<Attempt> attempts;
  std::vector<Exclusion> exclusions;
  // Every node a record named (allocations, exclusions, --nodes): the
  // population over which exclusion shares and the Gini are computed.
  std::set<std::string> nodes;
  // Slurm: jobs lost to a node failure whose failing node could not be told
  // (several nodes, no FailedNode): counted, not attributed.
  int unattributed_node_failures = 0;
  // Slurm `restart_cnt` beyond the records present (sacct without -D): runs
  // known to have happened whose records are not in the input.
  int unrecorded_requeues = 0;
  // Slurm restart_cnt by JobID (the largest seen): how many times a job was
  // requeued, when its records say (recent releases).
  std::map<std::string, int> slurm_restart_counts;
  // sinfo -R events already counted ("node|reason|timestamp"): the same
  // event in several snapshots counts once.
  std::set<std::string> drain_events;
};

}  // namespace ckpt::fleet::records
