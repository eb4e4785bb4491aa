// What `report` and `project` share: traces in, a bandwidth flag read, the
// rendering written out whole.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/report/report.h"
#include "common/expected.h"

namespace ckpt::cli {

// Every path's trace, in order; the error names the file that failed.
Expected<std::vector<report::NodeTrace>> read_node_traces(const std::vector<std::string>& paths);

// "" stays unset; else the bandwidth, or an error "COMMAND: FLAG ...".
Expected<std::optional<double>> bandwidth_flag(const std::string& command, const std::string& flag,
                                               const std::string& text);

// "md" for .md/.markdown, "json" for .json, "html" for .html/.htm, else `otherwise`.
std::string format_from_path(const std::string& path, const std::string& otherwise);

// To standard output when `path` is empty or "-"; else the whole file or
// nothing: written beside the target and renamed over it, so a failed run
// never leaves half a page where the last one was. The error names the file.
Expected<void> write_output(const std::string& path, const std::string& text);

// The same, for a text `render` makes piece by piece (into the sink it is
// given): written as it comes, a MiB at a time, so that a report of tens of
// thousands of checkpoints is never held whole (issue 36). A file still
// appears whole or not at all: the pieces go to a temporary beside it,
// renamed over it once all are written.
Expected<void> write_output_pieces(const std::string& path,
                                   const std::function<void(const report::TextSink&)>& render);

}  // namespace ckpt::cli
