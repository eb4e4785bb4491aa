// Reading every input a `fleet exclusions` / `fleet retries` command names.
#pragma once

#include <string>
#include <vector>

#include "analysis/fleet/records/records.h"
#include "common/expected.h"

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

// A file's bytes; "-" is standard input.
Expected<std::string> read_input_file(const std::string& path);

// Every input read into one Records; the first error stops (file, line, field).
Expected<Records> read_inputs(const Inputs& inputs);

}  // namespace ckpt::fleet::records
