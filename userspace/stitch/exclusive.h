// Exclusive time: the part of a stage's busy time that no stage below it
// explains. The I/O stages nest (a write waits on NFS page I/O, which waits
// on RPCs, which wait on the transport), so their busy times are all about
// as long as the slowest of them; charged only what the stage below does not
// cover on the same files, the one that holds the checkpoint stands out.
// docs/stitching.md "Exclusive time" gives the rule. Internal to stitch/.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/events.h"
#include "model/records.h"
#include "stitch/intervals.h"

namespace ckpt {

// One interval a stage was busy, on the file it served (FileId{} for a
// stage that serves no one file: the transport).
struct StageSpan {
  FileId file;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

// The intervals behind the stages' busy times, by stage, each clipped to the
// window the stage's busy_ns covers, so that exclusive time never exceeds it.
class StageSpans {
 public:
  void add(std::string_view stage, std::vector<StageSpan> spans, uint64_t lo, uint64_t hi);
  // The spans of `stage`; empty when it added none.
  [[nodiscard]] const std::vector<StageSpan>& of(std::string_view stage) const;

 private:
  std::map<std::string, std::vector<StageSpan>, std::less<>> spans_;
};

// Sets every stage's exclusive_ns: for the nested I/O stages (host_io,
// metadata, nfs_client, rpc_queue, rpc_rtt, transport) from `spans`; the
// others (gpu_copy, serialize) nest nothing measured below them and keep
// their whole busy time.
void set_exclusive_times(std::vector<StageRecord>& stages, const StageSpans& spans);

}  // namespace ckpt
