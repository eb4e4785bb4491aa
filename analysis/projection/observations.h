// What the traces measured, in the model's terms: one Sample per node per
// job checkpoint, and one Measured row per scale (docs/projection.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/projection/projection.h"

namespace ckpt::projection {

// A job checkpoint in `direction` that is a piece of another: each of its
// nodes is also in the other, which either has more nodes and overlaps it
// (within report::kGroupSlackNs), or began earlier and still had each of
// those nodes within its quiet gap (the trace's config) when the piece began.
// A pause longer than the quiet gap, or a checkpoint closed while its last
// call was in flight, split those nodes' checkpoints; the piece is no
// checkpoint at a smaller scale, and the samples and rows leave it out
// (project says which in a note). Its own bytes are not added back to the
// checkpoint it is a piece of.
struct Piece {
  uint64_t index = 0;  // report::CheckpointReport::index
  uint64_t of = 0;     // the checkpoint it is a piece of
  std::vector<std::string> nodes;
};
std::vector<Piece> find_pieces(const report::Report& report, Direction direction);

// Every node's part of every job checkpoint in `direction`, RPCs or not,
// pieces left out.
std::vector<Sample> collect_samples(const report::Report& report, Direction direction);

// One row per scale (nodes in a job checkpoint), ascending, pieces left out. Until
// charge_service() says the shared side's time per RPC, rpc_wait_ms is the
// whole of execute.
std::vector<Measured> measure_scales(const report::Report& report, Direction direction);

// rpc_wait_ms becomes execute less `service_s` (the shared side's time per
// RPC) in the rows that saw RPCs, and the rise is taken again.
void charge_service(std::vector<Measured>& rows, double service_s);

// The smallest measured scale whose side is "shared".
std::optional<uint32_t> measured_crossover(const std::vector<Measured>& rows);

}  // namespace ckpt::projection
