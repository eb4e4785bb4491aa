// Decodes bpf/tcp.bpf.c records (storage connections) into events.
#pragma once

#include "sources/source.h"

namespace ckpt {

class TcpSource : public RecordSource {
 public:
  using RecordSource::RecordSource;
  [[nodiscard]] std::string_view name() const override { return "tcp"; }
  void on_record(const void* data, size_t size) override;
  [[nodiscard]] std::vector<DropRecord> drops() const override {
    return {DropRecord{"tcp", "malformed_record", malformed_}};
  }

 private:
  uint64_t malformed_ = 0;
};

// "10.0.0.5:2049" or "[fd00::5]:2049".
std::string format_endpoint(uint16_t family, const uint8_t addr[16], uint16_t port);

}  // namespace ckpt
