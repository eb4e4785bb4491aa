// Reading every input a `fleet exclusions` / `fleet retries` command names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/fleet/records/records.h"
#include "common/expected.h"
#include "files/input_file.h"

namespace ckpt::fleet::records {

struct Inputs {
  std::vector<std::string> sacct_json;    // sacct --json
  std::vector<std::string> sacct_text;    // sacct -P / -p
  std::vector<std::string> sinfo;         // sinfo -R
  std::vector<std::string> torchelastic;  // agent logs
  std::vector<std::string> pytorchjob;    // kubectl get pytorchjob -o json
  std::vector<std::string> sessions;      // sessions CSV
  bool resubmits_by_name = false;         // Slurm: join manual resubmissions
  [[nodiscard]] bool empty() const;
};

// How much of each input is read (files/input_file.h). Every input is
// parsed whole, into several times its size in memory: the limits are the
// most a cluster's records realistically are, not what fits.
// sacct --json writes 5-15 KiB a job (its steps, TRES, every field): 1 GiB is
// some 100,000 jobs, a month of a large cluster. A longer range is better
// read in pieces (sacct -S/-E) or as sacct -P, a tenth of the size.
inline constexpr InputLimit kSacctJsonLimit{
    1u << 30, "sacct --json is 5-15 KiB a job; give a shorter range (sacct -S/-E) or sacct -P",
    true};
// sacct -P: a line of a few hundred bytes a job, millions of jobs.
inline constexpr InputLimit kSacctTextLimit{
    1u << 30, "sacct -P is a short line a job; give a shorter range (sacct -S/-E)", true};
// sinfo -R: a line per down or drained node, now.
inline constexpr InputLimit kSinfoLimit{64u << 20, "sinfo -R is a line per node reason", true};
// A TorchElastic agent's log: a job's restarts among its other lines. The
// only input here that may hold NUL bytes (a log cut short by a crash).
inline constexpr InputLimit kTorchElasticLogLimit{1u << 30,
                                                  "give the agent's log of one job (or its tail)"};
// kubectl get pytorchjob -o json: a few KiB a job.
inline constexpr InputLimit kPytorchJobLimit{1u << 30, "kubectl's list is a few KiB a job", true};
// The sessions CSV: a line of about 100 bytes a session, ten million sessions.
inline constexpr InputLimit kSessionsCsvLimit{1u << 30, "the sessions CSV is a line a session",
                                              true};

// A file's bytes, at most `limit`; "-" is standard input. `flag` names it in
// errors ("--sacct-json /dev/zero: not a text file ...").
Expected<std::string> read_input_file(const std::string& path, const InputLimit& limit,
                                      std::string_view flag);

// Every input read into one Records; the first error stops (file, line, field).
Expected<Records> read_inputs(const Inputs& inputs);

}  // namespace ckpt::fleet::records
