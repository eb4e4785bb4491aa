#include "analysis/storage_copy_note.h"

#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "analysis/format.h"
#include "model/events.h"

namespace ckpt {

std::optional<std::string> storage_copy_note(const CheckpointRecord& c) {
  uint64_t server = 0;
  uint64_t reflink = 0;
  for (const auto& [via, bytes] : c.bytes_by_via) {
    if (via == to_string(IoVia::ServerCopy)) server += bytes;
    if (via == to_string(IoVia::Reflink)) reflink += bytes;
  }
  if (server + reflink == 0) return std::nullopt;
  std::vector<std::string> how;
  if (server) how.emplace_back("an NFS 4.2 server-side COPY or CLONE");
  if (reflink) how.emplace_back("a reflink: the file system shared the source's extents");
  return fmt::format(
      "the storage copied {} itself ({}): none of it crossed this node, so no host_io, serialize "
      "or NFS stage counts those bytes, and the copy's time is the storage's",
      format_bytes(server + reflink), fmt::join(how, "; "));
}

}  // namespace ckpt
