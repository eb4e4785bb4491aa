#include "analysis/fleet/records/inputs.h"

#include "analysis/fleet/records/pytorchjob.h"
#include "analysis/fleet/records/sacct_json.h"
#include "analysis/fleet/records/sacct_text.h"
#include "analysis/fleet/records/sessions_csv.h"
#include "analysis/fleet/records/sinfo_reasons.h"
#include "analysis/fleet/records/slurm_record.h"
#include "analysis/fleet/records/torchelastic_log.h"

namespace ckpt::fleet::records {

bool Inputs::empty() const {
  return sacct_json.empty() && sacct_text.empty() && sinfo.empty() && torchelastic.empty() &&
         pytorchjob.empty() && sessions.empty();
}

Expected<std::string> read_input_file(const std::string& path, const InputLimit& limit,
                                      std::string_view flag) {
  if (path == "-") return read_fd_bounded(0, "-", limit, flag);
  return read_file_bounded(path, limit, flag);
}

Expected<Records> read_inputs(const Inputs& inputs) {
  using Reader = Expected<void> (*)(std::string_view, std::string_view, Records&);
  struct Source {
    const std::vector<std::string>* paths;
    Reader reader;
    std::string_view flag;
    const InputLimit& limit;
  };
  Records records;
  const Source sources[] = {
      {&inputs.sacct_json, read_sacct_json, "--sacct-json", kSacctJsonLimit},
      {&inputs.sacct_text, read_sacct_text, "--sacct", kSacctTextLimit},
      {&inputs.sinfo, read_sinfo_reasons, "--sinfo", kSinfoLimit},
      {&inputs.torchelastic, read_torchelastic_log, "--torchelastic", kTorchElasticLogLimit},
      {&inputs.pytorchjob, read_pytorchjobs, "--pytorchjob", kPytorchJobLimit},
      {&inputs.sessions, read_sessions_csv, "--sessions", kSessionsCsvLimit}};
  for (const auto& [paths, reader, flag, limit] : sources)
    for (const auto& path : *paths) {
      auto text = read_input_file(path, limit, flag);
      if (!text) return text.error();
      auto read = reader(*text, path == "-" ? "<stdin>" : path, records);
      if (!read) return read.error();
    }
  if (auto chains = check_sessions_chains(records); !chains) return chains.error();
  finish_slurm_chains(records);
  if (inputs.resubmits_by_name) join_manual_resubmissions(records);
  return records;
}

}  // namespace ckpt::fleet::records
