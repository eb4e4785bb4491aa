#include "model/records.h"

namespace ckpt {

std::string evidence_where(uint64_t line, std::string_view source, bool own_log) {
  if (own_log && line != 0) return "line " + std::to_string(line);
  if (line == 0) return std::string(source);
  return std::string(source) + ":" + std::to_string(line);
}

std::string_view to_string(Direction d) { return d == Direction::Save ? "save" : "load"; }

std::optional<Direction> direction_from_string(std::string_view s) {
  if (s == "save") return Direction::Save;
  if (s == "load") return Direction::Load;
  return std::nullopt;
}

RpcOpStats& RpcOpStats::operator+=(const RpcOpStats& o) {
  count += o.count;
  errors += o.errors;
  major_timeouts += o.major_timeouts;
  transmissions += o.transmissions;
  bytes_sent += o.bytes_sent;
  bytes_received += o.bytes_received;
  queue_ns += o.queue_ns;
  rtt_ns += o.rtt_ns;
  execute_ns += o.execute_ns;
  return *this;
}

double StageRecord::bandwidth_Bps() const {
  if (busy_ns == 0) return 0.0;
  return static_cast<double>(bytes) * 1e9 / static_cast<double>(busy_ns);
}

std::optional<double> StageRecord::fraction_of_max() const {
  if (!max_Bps || *max_Bps <= 0.0) return std::nullopt;
  return bandwidth_Bps() / *max_Bps;
}

}  // namespace ckpt
