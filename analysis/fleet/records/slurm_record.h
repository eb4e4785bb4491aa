// One Slurm job record, whichever output it came from (sacct --json of any
// release, sacct -P/-p text), and what it adds to the Records.
#pragma once

#include <optional>
#include <string>

#include "analysis/fleet/records/records.h"
#include "common/expected.h"

namespace ckpt::fleet::records {

struct SlurmRecord {
  std::string job_id, name, user;
  std::string state;  // as printed: "CANCELLED by 1234", "NODE_FAIL"
  std::optional<double> submit_unix_s, start_unix_s, end_unix_s;
  std::string node_list;             // hostlist expression
  std::string failed_node;           // hostlist; sacct FailedNode / failed_node (recent releases)
  std::optional<int> restart_count;  // restart_cnt (recent releases)
  std::string source;
};

// A run of job `job_id` is one attempt of the chain "slurm:<job_id>"; sacct -D
// lists every requeued run of a job as a record of its own (the requeues are
// Slurm's: automatic). Exclusions: each node in FailedNode; without it, a
// NODE_FAIL job's node when it ran on exactly one; other NODE_FAIL jobs are
// counted as unattributed. Errors name the record's source and the field.
Expected<void> add_slurm_record(const SlurmRecord& record, Records& records);

// After every record is read: a job whose restart_cnt says it ran more
// often than it has records (sacct without -D) gets the missing runs as
// failed attempts without times; a job with one run and no restarts is not a
// retry chain.
void finish_slurm_chains(Records& records);

// --resubmits-by-name: a job a user submitted again under the same name
// after the previous one (same user, same name) ended without success
// continues that chain, as a manual retry. Slurm does not record who
// resubmitted, so this is opt-in.
void join_manual_resubmissions(Records& records);

}  // namespace ckpt::fleet::records
