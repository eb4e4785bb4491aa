// A TorchElastic agent's log (torchrun, torch.distributed.elastic): one log
// is one retry chain; every restart is automatic. The lines read are those
// of torch/distributed/elastic/agent/server/api.py (SimpleElasticAgent):
//   "[default] Starting worker group"                      an attempt starts
//   "[default] Worker group FAILED. 2/3 attempts left; will restart worker group"
//                                                          it failed, restart
//   "[default] worker group successfully finished."        (PyTorch 2.x) or
//   "Local worker group finished (WorkerState.SUCCEEDED)"  (1.x): success
//   "ChildFailedError"                                     the chain failed
// Times: the first "YYYY-MM-DD HH:MM:SS[,mmm]" on a line (Python logging's
// asctime), UTC.
#pragma once

#include <string_view>

#include "analysis/fleet/records/records.h"
#include "common/expected.h"

namespace ckpt::fleet::records {

// An error names the file and line: a log with no agent lines, or restarts
// whose "N/M attempts left" do not count down by one (several agents' logs
// in one file).
Expected<void> read_torchelastic_log(std::string_view text, std::string_view file,
                                     Records& records);

}  // namespace ckpt::fleet::records
