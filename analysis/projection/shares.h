// How the shared side may split itself among the nodes, beside the MVA's
// queue (docs/projection.md "Uncertainty"). Below the knee a run cannot show
// it, and it moves the mean RPC wait and the last node's end: an even split
// (every node min(its own rate, the shared rate / N), a pipe whose packets
// flow through it, as TCP flows share a link), and an in-turn split (as many
// nodes as fit at their own rate, the next with what is left, and so on: the
// least mean time per node, the latest last node), as in operational
// analysis's bounds (Denning and Buzen, "The operational analysis of queueing
// network models", Computing Surveys 10(3), 1978).
#pragma once

#include <cstdint>
#include <optional>

namespace ckpt::projection {

// `nodes` nodes each moving `rpcs` RPCs at most `node_rate` RPCs/s through a
// shared side of `shared_rate` RPCs/s. The in-turn split is simulated
// (events of at most shared_rate / node_rate + 1 nodes at a time); past
// kMaxInTurnSteps steps it is not, and the in-turn figures are nullopt.
inline constexpr uint64_t kMaxInTurnSteps = 20'000'000;
struct Shares {
  double even_window_s = 0;              // every node's RPC window, split evenly
  std::optional<double> in_turn_mean_s;  // the mean node's, in turn
  std::optional<double> in_turn_last_s;  // the last node's, in turn
};
Shares split_shares(uint32_t nodes, double rpcs, double node_rate, double shared_rate);

}  // namespace ckpt::projection
