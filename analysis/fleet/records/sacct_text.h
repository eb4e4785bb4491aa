// `sacct -P` (--parsable2) and `sacct -p` (--parsable, a "|" after every
// field) text with its header line. Columns by name, in any order, case
// ignored: JobID and State are needed; JobName, User, Submit, Start, End,
// NodeList and FailedNode are read when present; others are ignored. Job
// steps (JobID "123.batch", "123.0", "123.extern") are not jobs and are skipped.
#pragma once

#include <string_view>

#include "analysis/fleet/records/records.h"
#include "common/expected.h"

namespace ckpt::fleet::records {

// Errors name the file, the line and the column.
Expected<void> read_sacct_text(std::string_view text, std::string_view file, Records& records);

}  // namespace ckpt::fleet::records
