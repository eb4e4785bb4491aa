// The unrecognised-I/O notice in words, one wording for the summary JSON, the
// table and the report (docs/stitching.md, "Unrecognised I/O"): the job moved
// bulk data through files no checkpoint pattern recognised, so a layout the
// patterns miss is said, with the flags and config keys that would include it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "model/records.h"

namespace ckpt {

// What to do about it: the flags and config keys that include such files,
// and those that quiet the notice when they are not checkpoints.
std::string unrecognised_hint();

// The file as a person reads it: its path, or "dev 8:1 inode 1234" when the
// path is not known.
std::string unrecognised_file_name(const UnrecognisedFileRecord& f);

// st_dev as "MAJOR:MINOR".
std::string dev_text(uint64_t dev);

// The flags that would include the file, shell-quoted, e.g.
// "--checkpoint-glob 'model_state_*.dat'" or
// "--checkpoint-glob 'model_*.pt' or --checkpoint-dir out"; "" when the path
// is not known.
std::string include_flags(const UnrecognisedFileRecord& f);

// "48.0 MiB (written 32.0 MiB, read 16.0 MiB) through 3 files that no
// checkpoint pattern recognised".
std::string unrecognised_headline(const UnrecognisedIoRecord& io);

// The notice as JSON (summary.h documents the keys): null unless `io` is
// known and above its threshold.
nlohmann::json unrecognised_io_json(const std::optional<UnrecognisedIoRecord>& io);

}  // namespace ckpt
