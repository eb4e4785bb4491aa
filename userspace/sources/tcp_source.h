// Decodes bpf/tcp.bpf.c records (storage connections) into events.
#pragma once

#include <functional>
#include <unordered_map>

#include "probes/probe_manager.h"
#include "sources/source.h"

namespace ckpt {

class TcpSource : public RecordSource {
 public:
  using RecordSource::RecordSource;
  using LatestReader = std::function<std::vector<TcpLatest>()>;

  [[nodiscard]] std::string_view name() const override { return "tcp"; }
  void on_record(const void* data, size_t size) override;
  // Samples on the ring are thinned in the kernel; every poll, the newest
  // counters of each socket become a sample of their own when they are newer
  // than the last one seen, so no bytes wait for the next segment.
  void set_latest_reader(LatestReader reader) { latest_ = std::move(reader); }
  void poll(uint64_t now_ns) override;
  [[nodiscard]] std::vector<DropRecord> drops() const override {
    return {DropRecord{"tcp", "malformed_record", malformed_}};
  }

 private:
  uint64_t malformed_ = 0;
  LatestReader latest_;
  std::unordered_map<uint64_t, TcpEvent> last_;  // by cookie: the newest sample seen
};

// "10.0.0.5:2049" or "[fd00::5]:2049".
std::string format_endpoint(uint16_t family, const uint8_t addr[16], uint16_t port);

}  // namespace ckpt
