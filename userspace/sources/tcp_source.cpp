#include "sources/tcp_source.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <cstring>

#include <fmt/format.h>

#include "tcp.h"

namespace ckpt {

std::string format_endpoint(uint16_t family, const uint8_t addr[16], uint16_t port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (family == AF_INET) {
    inet_ntop(AF_INET, addr, buf, sizeof(buf));
    return fmt::format("{}:{}", buf, port);
  }
  inet_ntop(AF_INET6, addr, buf, sizeof(buf));
  return fmt::format("[{}]:{}", buf, port);
}

void TcpSource::on_record(const void* data, size_t size) {
  if (size < sizeof(ckpt_tcp_record)) {
    ++malformed_;
    return;
  }
  ckpt_tcp_record r;
  std::memcpy(&r, data, sizeof(r));
  TcpEvent ev;
  switch (r.event) {
    case CKPT_TCP_SAMPLE:
      ev.kind = TcpEvent::Kind::Sample;
      break;
    case CKPT_TCP_STATE:
      ev.kind = TcpEvent::Kind::State;
      break;
    case CKPT_TCP_RETRANSMIT:
      ev.kind = TcpEvent::Kind::Retransmit;
      break;
    case CKPT_TCP_RESET_SENT:
      ev.kind = TcpEvent::Kind::ResetSent;
      break;
    case CKPT_TCP_RESET_RECV:
      ev.kind = TcpEvent::Kind::ResetReceived;
      break;
    default:
      ++malformed_;
      return;
  }
  ev.time_ns = r.time_ns;
  ev.cookie = r.sock_cookie;
  ev.local = format_endpoint(r.family, r.laddr, r.lport);
  ev.remote = format_endpoint(r.family, r.raddr, r.rport);
  ev.old_state = r.old_state;
  ev.new_state = r.new_state;
  ev.bytes_acked = r.bytes_acked;
  ev.bytes_received = r.bytes_received;
  ev.bytes_sent = r.bytes_sent;
  ev.total_retrans = r.total_retrans;
  ev.snd_nxt = r.snd_nxt;
  ev.snd_una = r.snd_una;
  ev.snd_cwnd = r.snd_cwnd;
  ev.srtt_us = r.srtt_us;
  ev.snd_wnd = r.snd_wnd;
  ev.zero_window_ns = r.zero_window_ns;
  ev.in_flight = r.snd_nxt - r.snd_una;
  ev.backlog = r.write_seq - r.snd_una;
  auto& last = last_[ev.cookie];
  if (ev.time_ns >= last.time_ns) last = ev;
  if (ev.kind == TcpEvent::Kind::State && ev.new_state == 7 /* TCP_CLOSE */) last_.erase(ev.cookie);
  emit(std::move(ev));
}

void TcpSource::poll(uint64_t /*now_ns*/) {
  if (!latest_) return;
  for (const auto& l : latest_()) {
    auto it = last_.find(l.cookie);
    // Only sockets whose endpoints a record already named, and only news.
    if (it == last_.end() || l.time_ns <= it->second.time_ns) continue;
    TcpEvent ev = it->second;
    ev.kind = TcpEvent::Kind::Sample;
    ev.time_ns = l.time_ns;
    ev.bytes_acked = l.bytes_acked;
    ev.bytes_received = l.bytes_received;
    ev.bytes_sent = l.bytes_sent;
    ev.total_retrans = l.total_retrans;
    ev.zero_window_ns = l.zero_window_ns;
    ev.in_flight = l.in_flight;
    ev.backlog = l.backlog;
    it->second = ev;
    emit(std::move(ev));
  }
}

}  // namespace ckpt
