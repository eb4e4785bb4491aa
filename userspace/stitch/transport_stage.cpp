#include "stitch/transport_stage.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/vocabulary.h"
#include "stitch/intervals.h"

namespace ckpt {
namespace {

constexpr uint64_t kMinStormRetransmits = 10;

// A counter's value at time t, from the samples around it. Samples come
// while a connection is busy (one per sample interval at most), so an
// increase between two samples happened within one interval before the
// later one, not spread over an idle gap.
template <typename Point>
double value_at(const std::deque<Point>& points, uint64_t t, uint64_t Point::*member,
                uint64_t active_ns) {
  if (points.empty()) return 0;
  if (t <= points.front().time_ns) return static_cast<double>(points.front().*member);
  if (t >= points.back().time_ns) return static_cast<double>(points.back().*member);
  auto it = std::lower_bound(points.begin(), points.end(), t,
                             [](const Point& p, uint64_t v) { return p.time_ns < v; });
  const Point& hi = *it;
  const Point& lo = *(it - 1);
  const uint64_t from =
      hi.time_ns > active_ns ? std::max(lo.time_ns, hi.time_ns - active_ns) : lo.time_ns;
  if (t <= from || hi.time_ns == from) return static_cast<double>(lo.*member);
  double frac = static_cast<double>(t - from) / static_cast<double>(hi.time_ns - from);
  return static_cast<double>(lo.*member) +
         frac * (static_cast<double>(hi.*member) - static_cast<double>(lo.*member));
}

}  // namespace

uint64_t TransportStage::acked_data(const Connection& conn, const TcpEvent& ev) {
  // bytes_acked counts sequence space, so the SYN and the FIN add a byte
  // each; bytes_sent counts data but also retransmissions. Data acked is at
  // most either: the smaller is exact without retransmits, and within 2 bytes
  // with them. Kernels before v4.19 have no bytes_sent (it reads 0).
  const uint64_t acked = ev.bytes_acked - std::min(ev.bytes_acked, conn.base_acked);
  if (ev.bytes_sent == 0) return acked;
  return std::min(acked, ev.bytes_sent - std::min(ev.bytes_sent, conn.base_sent));
}

void TransportStage::on_tcp(const TcpEvent& ev) {
  auto [it, inserted] = connections_.try_emplace(ev.cookie);
  Connection& conn = it->second;
  if (inserted) {
    conn.record.cookie = ev.cookie;
    conn.record.local = ev.local;
    conn.record.remote = ev.remote;
    conn.record.first_ns = ev.time_ns;
    conn.base_acked = ev.bytes_acked;
    conn.base_sent = ev.bytes_sent;
    conn.base_received = ev.bytes_received;
    conn.base_retrans = ev.total_retrans;
    auto m = maxima_->transport(ev.local);
    conn.record.link_max_Bps = m.Bps;
    conn.record.link_max_source = m.source;
  }
  ConnectionRecord& r = conn.record;
  // A socket has no local port while connecting nor once closed: keep one that has.
  if (r.local.ends_with(":0") && !ev.local.ends_with(":0")) r.local = ev.local;
  r.last_ns = std::max(r.last_ns, ev.time_ns);
  // Counters only grow; take the largest seen (records can arrive out of order).
  const uint64_t data_acked = acked_data(conn, ev);
  r.bytes_sent = std::max(r.bytes_sent, data_acked);
  r.bytes_received = std::max(r.bytes_received,
                              ev.bytes_received - std::min(ev.bytes_received, conn.base_received));
  r.retransmits = std::max<uint64_t>(
      r.retransmits, ev.total_retrans - std::min<uint64_t>(ev.total_retrans, conn.base_retrans));
  r.zero_window_ns = std::max(r.zero_window_ns, ev.zero_window_ns);
  if (ev.kind == TcpEvent::Kind::ResetSent || ev.kind == TcpEvent::Kind::ResetReceived) {
    ++r.resets;
    // A checkpoint that closes around it claims it; otherwise the job does.
    pending_resets_.push_back(
        PendingReset{ev.time_ns, r.local, ev.remote, ev.kind == TcpEvent::Kind::ResetSent});
  }
  TcpPoint p{ev.time_ns,        data_acked,   ev.bytes_received, ev.total_retrans,
             ev.zero_window_ns, ev.in_flight, ev.backlog};
  if (!conn.points.empty() && conn.points.back().time_ns > p.time_ns) {
    auto pos = std::upper_bound(conn.points.begin(), conn.points.end(), p.time_ns,
                                [](uint64_t t, const TcpPoint& q) { return t < q.time_ns; });
    conn.points.insert(pos, p);
  } else {
    conn.points.push_back(p);
  }
}

std::optional<StageRecord> TransportStage::stage(const OpenCheckpoint& c, Direction d,
                                                 std::vector<FailureRecord>& failures, uint64_t id,
                                                 StageSpans& spans) {
  StageRecord s;
  s.name = std::string(kStageTransport);
  std::vector<Interval> iv;
  bool connected = false;
  const uint64_t interval = sample_interval_ns_;
  const double window_s = std::max(1e-9, static_cast<double>(c.end_ns - c.start_ns) / 1e9);
  const auto member = d == Direction::Save ? &TcpPoint::acked : &TcpPoint::received;
  for (auto& [cookie, conn] : connections_) {
    if (conn.points.empty() || conn.points.back().time_ns < c.start_ns ||
        conn.points.front().time_ns > c.end_ns + quiet_gap_ns_)
      continue;
    connected = true;
    // Acknowledgements trail the sends by a round trip: count until one
    // sample interval after the checkpoint's last call.
    double moved = value_at(conn.points, c.end_ns + interval, member, interval) -
                   value_at(conn.points, c.start_ns, member, interval);
    if (moved > 0) s.bytes += static_cast<uint64_t>(std::llround(moved));
    for (size_t i = 1; i < conn.points.size(); ++i) {
      const TcpPoint& a = conn.points[i - 1];
      const TcpPoint& b = conn.points[i];
      // Busy while the counter grew, and, for a save, all along while data
      // was outstanding: a slow link delivers acks far apart, and the time
      // between them is the transport at work, not idle.
      if (d == Direction::Save && a.backlog > 0) {
        iv.emplace_back(a.time_ns, b.time_ns);
      } else if (b.*member > a.*member) {
        iv.emplace_back(std::max(a.time_ns, b.time_ns > interval ? b.time_ns - interval : 0),
                        b.time_ns);
      }
    }
    if (!s.max_Bps && conn.record.link_max_Bps) {
      s.max_Bps = conn.record.link_max_Bps;
      s.max_source = conn.record.link_max_source;
    }
    // Retransmits of what the checkpoint sent trail its last call as the
    // acknowledgements do: counted over the same window as the bytes (a
    // storm whose retransmits fell in that last interval was missed).
    double retrans = value_at(conn.points, c.end_ns + interval, &TcpPoint::retrans, interval) -
                     value_at(conn.points, c.start_ns, &TcpPoint::retrans, interval);
    if (retrans >= kMinStormRetransmits &&
        retrans / window_s >= static_cast<double>(thresholds_.retransmit_storm_per_s)) {
      failures.push_back(FailureRecord{
          std::string(kFailureTcpRetransmitStorm), c.end_ns,
          fmt::format("{:.0f} retransmits in {:.2f} s ({:.0f}/s) on {} -> {}", retrans, window_s,
                      retrans / window_s, conn.record.local, conn.record.remote),
          id});
    }
    double zw = value_at(conn.points, c.end_ns, &TcpPoint::zero_window_ns, interval) -
                value_at(conn.points, c.start_ns, &TcpPoint::zero_window_ns, interval);
    if (zw >= static_cast<double>(thresholds_.zero_window_ns)) {
      failures.push_back(
          FailureRecord{std::string(kFailureTcpZeroWindow), c.end_ns,
                        fmt::format("server advertised a zero window for {:.1f} ms on {} -> {}",
                                    zw / 1e6, conn.record.local, conn.record.remote),
                        id});
    }
  }
  if (!connected) return std::nullopt;
  std::vector<StageSpan> shared;
  shared.reserve(iv.size());
  for (auto [from, to] : iv) shared.push_back(StageSpan{FileId{}, from, to});
  spans.add(kStageTransport, std::move(shared), c.start_ns, c.end_ns + interval);
  s.busy_ns = union_length(iv, c.start_ns, c.end_ns + interval);
  if (!s.max_Bps) {
    auto m = maxima_->transport("");
    s.max_Bps = m.Bps;
    s.max_source = m.source;
  }
  return s;
}

std::vector<PendingReset> TransportStage::claim_resets(const OpenCheckpoint& c) {
  std::vector<PendingReset> claimed;
  for (auto it = pending_resets_.begin(); it != pending_resets_.end();) {
    if (it->time_ns >= c.start_ns && it->time_ns <= c.end_ns + sample_interval_ns_) {
      claimed.push_back(std::move(*it));
      it = pending_resets_.erase(it);
    } else {
      ++it;
    }
  }
  return claimed;
}

std::vector<PendingReset> TransportStage::take_settled_resets(
    uint64_t now_ns, uint64_t horizon_ns, std::optional<uint64_t> open_start_ns) {
  std::map<std::string, uint64_t> newest;
  for (const auto& r : pending_resets_) newest[r.remote] = std::max(newest[r.remote], r.time_ns);
  std::vector<PendingReset> ready;
  for (auto it = pending_resets_.begin(); it != pending_resets_.end();) {
    const bool claimable = open_start_ns && it->time_ns + horizon_ns >= *open_start_ns;
    const bool settled = now_ns == UINT64_MAX || newest[it->remote] + horizon_ns <= now_ns;
    if (claimable || !settled) {
      ++it;
      continue;
    }
    ready.push_back(std::move(*it));
    it = pending_resets_.erase(it);
  }
  return ready;
}

void TransportStage::describe_toward(const std::set<std::string>& servers, uint64_t start_ns,
                                     uint64_t end_ns, NfsCheckpointRecord& nfs) const {
  uint64_t in_flight_max = 0;
  long double in_flight_sum = 0;
  uint64_t backlog_max = 0;
  long double backlog_sum = 0;
  uint64_t points = 0;
  double retrans = 0;
  bool any = false;
  for (const auto& [cookie, conn] : connections_) {
    if (!servers.count(conn.record.remote) || conn.points.empty()) continue;
    any = true;
    for (const auto& p : conn.points) {
      if (p.time_ns < start_ns || p.time_ns > end_ns) continue;
      in_flight_max = std::max(in_flight_max, p.in_flight);
      in_flight_sum += static_cast<long double>(p.in_flight);
      backlog_max = std::max(backlog_max, p.backlog);
      backlog_sum += static_cast<long double>(p.backlog);
      ++points;
    }
    retrans += value_at(conn.points, end_ns, &TcpPoint::retrans, sample_interval_ns_) -
               value_at(conn.points, start_ns, &TcpPoint::retrans, sample_interval_ns_);
  }
  if (!any) return;
  nfs.tcp_in_flight_max = in_flight_max;
  nfs.tcp_in_flight_mean =
      points ? static_cast<double>(in_flight_sum / static_cast<long double>(points)) : 0.0;
  nfs.tcp_retransmits = static_cast<uint64_t>(std::llround(std::max(0.0, retrans)));
  nfs.tcp_backlog_max = backlog_max;
  nfs.tcp_backlog_mean =
      points ? static_cast<double>(backlog_sum / static_cast<long double>(points)) : 0.0;
}

std::optional<StageMax> TransportStage::link_toward(const std::set<std::string>& servers) const {
  for (const auto& [cookie, conn] : connections_)
    if (servers.count(conn.record.remote) && conn.record.link_max_Bps)
      return StageMax{conn.record.link_max_Bps, conn.record.link_max_source};
  return std::nullopt;
}

void TransportStage::prune(uint64_t horizon_ns) {
  for (auto& [cookie, conn] : connections_) {
    // Keep the last point before the horizon: it anchors interpolation.
    while (conn.points.size() > 1 && conn.points[1].time_ns < horizon_ns) conn.points.pop_front();
  }
}

std::vector<ConnectionRecord> TransportStage::connections() const {
  std::vector<ConnectionRecord> out;
  out.reserve(connections_.size());
  for (const auto& [cookie, conn] : connections_) out.push_back(conn.record);
  return out;
}

TcpSampleRecord tcp_sample_record(const TcpEvent& ev) {
  return TcpSampleRecord{ev.time_ns,     ev.cookie,         std::string(to_string(ev.kind)),
                         ev.bytes_acked, ev.bytes_received, ev.in_flight,
                         ev.backlog,     ev.snd_cwnd,       ev.srtt_us,
                         ev.snd_wnd,     ev.total_retrans,  ev.zero_window_ns,
                         ev.new_state};
}

}  // namespace ckpt
