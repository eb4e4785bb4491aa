// Decodes bpf/nfs.bpf.c records into NfsIoEvent and RpcEvent: pairs each NFS
// page I/O's start with its completion, and names the file an RPC carried
// (the rpc_task is embedded in the NFS I/O header, so its address ties them).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "model/events.h"
#include "sources/source.h"

struct ckpt_nfs_record;

namespace ckpt {

class NfsSource : public RecordSource {
 public:
  using RecordSource::RecordSource;

  [[nodiscard]] std::string_view name() const override { return "nfs"; }
  void on_record(const void* data, size_t size) override;
  // Forgets NFS I/O whose completion never came (a task killed in flight).
  void poll(uint64_t now_ns) override;
  [[nodiscard]] std::vector<DropRecord> drops() const override {
    return {DropRecord{"nfs", "malformed_record", malformed_},
            DropRecord{"nfs", "io_without_completion", unfinished_}};
  }
  [[nodiscard]] size_t pending_io() const { return pending_.size(); }

 private:
  struct Pending {
    NfsIoKind kind;
    uint64_t start_ns;
    FileId file;
    uint64_t offset;
    uint64_t count;
  };
  void on_io_start(const ::ckpt_nfs_record& r, NfsIoKind kind);
  void on_io_done(const ::ckpt_nfs_record& r, NfsIoKind kind);
  void on_rpc(const ::ckpt_nfs_record& r);

  std::unordered_map<uint64_t, Pending> pending_;  // by rpc_task address
  uint64_t malformed_ = 0;
  uint64_t unfinished_ = 0;
};

}  // namespace ckpt
