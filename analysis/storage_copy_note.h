// A copy the storage made itself (bytes_by_via "server_copy": an NFS 4.2
// COPY or CLONE; "reflink": ioctl FICLONE): its bytes are the checkpoint's,
// but no stage of this node moved them, so host_io and the NFS stages leave
// them out. One wording for the summary JSON and the table, so a reader
// looking for those bytes in a stage learns where they went.
#pragma once

#include <optional>
#include <string>

#include "model/records.h"

namespace ckpt {

// The sentence for `c`; nullopt when the storage copied none of its bytes.
std::optional<std::string> storage_copy_note(const CheckpointRecord& c);

}  // namespace ckpt
