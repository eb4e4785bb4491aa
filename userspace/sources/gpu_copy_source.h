// The collector's side of libckptscope_cupti.so (cupti/gpu_copy_record.h):
// a SOCK_SEQPACKET Unix socket that `run` creates before the job starts and
// names in the job's environment; every process of the job that initializes
// CUDA connects and sends its copies. Decoded into GpuCopyEvents on the one
// clock (the library already put them on CLOCK_MONOTONIC).
//
// Never trusted blindly: a message of the wrong size, kind or version is
// counted (`cupti`/`malformed_message`) and skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/expected.h"
#include "sources/source.h"

namespace ckpt {

class GpuCopySource : public Source {
 public:
  // What a process's library said when it started (its HELLO).
  struct ProcessStatus {
    uint32_t pid = 0;
    bool ok = false;
    std::string message;  // why not, in words
  };
  using StatusHandler = std::function<void(const ProcessStatus&)>;

  // Creates the socket in a new private directory under `parent` (mode 0700:
  // only the job's user reaches it).
  static Expected<std::unique_ptr<GpuCopySource>> listen(EventSink& sink,
                                                         const std::string& parent = "/tmp");
  ~GpuCopySource() override;

  [[nodiscard]] std::string_view name() const override { return "cupti"; }
  [[nodiscard]] const std::string& socket_path() const { return socket_path_; }
  // Accepts and reads whatever is there; never blocks.
  void poll(uint64_t now_ns) override;
  [[nodiscard]] std::vector<DropRecord> drops() const override;
  void on_status(StatusHandler handler) { on_status_ = std::move(handler); }
  [[nodiscard]] const std::vector<ProcessStatus>& statuses() const { return statuses_; }
  [[nodiscard]] uint64_t copies() const { return copies_; }
  // The PCI addresses of the GPUs the job's processes opened (their device
  // records), "0000:3b:00.0"; those whose address was unknown are left out.
  [[nodiscard]] std::vector<std::string> device_pci_addresses() const;

  // One datagram, as received (exposed for the tests: real layouts, no socket).
  void on_datagram(const void* data, size_t size);

 private:
  explicit GpuCopySource(EventSink& sink) : Source(sink) {}
  void on_message(const void* data, size_t size);

  int listen_fd_ = -1;
  std::string dir_;
  std::string socket_path_;
  std::vector<int> clients_;
  std::map<uint32_t, std::string> pci_by_device_;  // device id -> PCI address
  // The libraries' cumulative counters, by process.
  struct LibraryDrops {
    uint64_t cupti_dropped = 0, buffers_refused = 0, send_dropped = 0, unknown_records = 0;
  };
  std::map<uint32_t, LibraryDrops> library_drops_;
  std::vector<ProcessStatus> statuses_;
  StatusHandler on_status_;
  uint64_t malformed_ = 0;
  uint64_t untimed_ = 0;  // copies CUPTI could not time (start and end 0)
  uint64_t copies_ = 0;
};

// "0000:3b:00.0" from the PCI domain, bus and device numbers.
std::string gpu_pci_address(uint32_t domain, uint32_t bus, uint32_t device);

}  // namespace ckpt
