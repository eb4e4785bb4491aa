// The end-of-run accounting in words, one wording for the summary JSON and
// the table (docs/stitching.md, "End-of-run accounting"): the kernel counted
// the job's threads writing more than the trace attributed to checkpoints
// and unrecognised files, so some of its writes went by a way the trace did
// not see or sum.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "model/records.h"

namespace ckpt {

// The notice's sentence; nullopt when there is none (not counted, the job
// still running, or the difference within the pages' slack and the
// notice threshold).
std::optional<std::string> io_accounting_notice(const IoAccountingRecord& io);

// The figures, always, when counted: "the kernel counted 1.20 GiB over 12
// threads, the trace 1.20 GiB (reads from storage 40.0 MiB)" (the table
// heads it "written:").
std::string io_accounting_line(const IoAccountingRecord& io);

// The summary's "io_accounting" object (summary.h documents the keys); null
// when not counted.
nlohmann::json io_accounting_json(const std::optional<IoAccountingRecord>& io);

}  // namespace ckpt
