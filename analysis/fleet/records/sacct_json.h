// `sacct --json` of Slurm 21.08 (data_parser v0.0.37) through 24.x
// (v0.0.40+). The shape changed between releases (SchedMD's openapi specs,
// src/plugins/openapi/v0.0.37 and src/plugins/data_parser/v0.0.40):
//   21.08: state.current "FAILED"; exit_code.return_code 1; times integers.
//   23.11: state.current ["FAILED"]; exit_code.return_code
//          {"set":true,"infinite":false,"number":1}; times integers or the
//          same {"set","infinite","number"} object.
//   24.x:  as 23.11, plus failed_node ("gpu07") and restart_cnt (requeues).
#pragma once

#include <string_view>

#include "analysis/fleet/records/records.h"
#include "common/expected.h"

namespace ckpt::fleet::records {

// Adds every job of the document; an error names the file, the job
// (jobs[N], its job_id) and the field that is missing or of the wrong type.
Expected<void> read_sacct_json(std::string_view text, std::string_view file, Records& records);

}  // namespace ckpt::fleet::records
