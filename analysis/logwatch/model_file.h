// The detector's model on disk: what `logwatch train` learned, loaded by
// `logwatch --model`. A JSON document
//   {"format": "ckptscope-logwatch-model", "version": 1,
//    "checksum": "fnv1a64:<16 hex digits of the body's compact dump>",
//    "body": {"drain": {...}, "history": 2, "events": N, "next_template_id": N,
//             "templates": [{"id", "tokens", "path", "matched", "count"}, ...],
//             "contexts": [{"ids": [...], "total": x, "next": [[id, count], ...]}, ...]}}
// Templates and contexts are listed least recently used first so eviction
// order survives the round trip. Loading checks, in order, that the file
// opens, is complete JSON, has this format and version, matches its
// checksum, and has every field of the right type; the error names the file
// and what is wrong.
#pragma once

#include <string>

#include "analysis/logwatch/detector.h"
#include "common/expected.h"
#include "files/input_file.h"

namespace ckpt::logwatch {

inline constexpr const char* kModelFormat = "ckptscope-logwatch-model";
// 2: contexts per source, and the training surprises' histogram.
inline constexpr int kModelVersion = 2;

std::string model_to_string(const LogDetector& detector);
Expected<LogDetector> model_from_string(const std::string& text, const std::string& name);

// The largest model file loaded. Training caps what a model holds (10,000
// templates of lines up to 8 KiB, 100,000 contexts): a model trained to the
// caps on 200,000 varied lines is 10 MiB, and one whose 10,000 templates are
// all 8 KiB lines 76 MiB (measured, issue 36). 256 MiB is three times the
// worst a training run can write.
inline constexpr InputLimit kModelFileLimit{
    256u << 20, "no trained model is that large (at most ~80 MiB, 10 MiB typical)", true};

// Written to PATH.tmp then renamed, so a reader never sees half a model.
Expected<void> save_model(const LogDetector& detector, const std::string& path);
// At most kModelFileLimit of it (files/input_file.h).
Expected<LogDetector> load_model(const std::string& path);

}  // namespace ckpt::logwatch
