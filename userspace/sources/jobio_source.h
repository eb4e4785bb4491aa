// Decodes bpf/jobio.bpf.c records (file I/O, CPU windows, process tree)
// into events, resolving each call's file to a path. A copy record becomes
// two events (a read of its source, a write of its destination); an mmap
// record one Mmap event carrying its page range (the stitcher counts the
// distinct pages per checkpoint); the sums of calls on a file ruled out one
// OtherIoEvent; a call in flight (a start record) one CallStartEvent.
#pragma once

#include <unordered_map>

#include "probes/file_verdict.h"  // kernel_dev_to_user
#include "sources/path_resolver.h"
#include "sources/source.h"

struct ckpt_io_record;
struct ckpt_path_record;
struct ckpt_copy_record;
struct ckpt_mmap_record;
struct ckpt_other_io_record;

namespace ckpt {

class JobIoSource : public RecordSource {
 public:
  JobIoSource(EventSink& sink, PathResolver& resolver) : RecordSource(sink), resolver_(resolver) {}

  [[nodiscard]] std::string_view name() const override { return "jobio"; }
  void on_record(const void* data, size_t size) override;
  [[nodiscard]] std::vector<DropRecord> drops() const override {
    return {DropRecord{"jobio", "malformed_record", malformed_},
            DropRecord{"jobio", "path_truncated", truncated_}};
  }

 private:
  void on_io(const ::ckpt_io_record& r);
  void on_path(const ::ckpt_path_record& r);
  // chdir/fchdir: the resolver's working directory for the process.
  void on_chdir(const ::ckpt_path_record& r);
  void on_copy(const ::ckpt_copy_record& r);
  void on_mmap(const ::ckpt_mmap_record& r);
  void on_other_io(const ::ckpt_other_io_record& r);
  void on_io_start(const ::ckpt_io_record& r);
  void on_copy_start(const ::ckpt_copy_record& r);
  void on_path_start(const ::ckpt_path_record& r);

  struct OpenFiles {
    std::vector<FileId> files;
    bool complete = true;
  };

  PathResolver& resolver_;
  std::unordered_map<uint32_t, OpenFiles> open_for_write_;  // by tgid, until its exit
  uint64_t malformed_ = 0;
  uint64_t truncated_ = 0;  // names cut at CKPT_PATH_MAX that no fd could restore
};

}  // namespace ckpt
